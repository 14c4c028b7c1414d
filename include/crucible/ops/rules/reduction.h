// ATen's rules that the catalog (src/ops) and backends' kernels share: a reduction's dims, as
// ATen's make_dim_mask reads them. Written once here; the catalog's meta functions and references
// and the cpu kernels call the same code.
#pragma once

#include <cstdint>
#include <vector>

#include "crucible/core/tensor.h"
#include "crucible/core/value.h"

namespace crucible::stats {

// An int[1]? / int[]? dim argument: None, a single int or a list.
std::vector<int64_t> dims_of(const Value& v);

// Which input dims a reduction folds and the shape it produces.
struct ReducePlan {
  std::vector<bool> reduced;  // per input dim
  Shape out_shape;
  int64_t count = 1;  // input elements per output element
};

// Normalises `dims` against `self` as ATen's make_dim_mask does: each dim wraps (or raises), a
// repeated dim raises; an empty list means every dim unless `allow_empty_dims` (then none).
ReducePlan plan_reduction(const Tensor& self, const std::vector<int64_t>& dims, bool keepdim,
                          bool allow_empty_dims = false);

}  // namespace crucible::stats
