// ATen's rules that the catalog (src/ops) and backends' kernels share: a reduction's dims, as
// ATen's make_dim_mask reads them. Written once here; the catalog's meta functions and references
// and the cpu kernels call the same code.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
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

// The shape of a reduction over one (wrapped) dim: that dim kept as 1 or dropped; a 0-d
// tensor's shape stays.
Shape keep_shape(const Tensor& self, int64_t dim, bool keepdim);

// ATen's zero_numel_check_dims for one dim: an empty tensor cannot be reduced over an empty dim
// ("max(): Expected reduction dim 1 to have non-zero size.").
void check_nonempty_dim(const char* name, const Tensor& self, int64_t dim_given, int64_t dim);

// argmax / argmin: the checked dim (none: the flattened input) and the output shape, with
// ATen's errors (Bool refused, an empty input needs a dim of non-zero size).
std::pair<std::optional<int64_t>, Shape> arg_plan(const Tensor& self, std::optional<int64_t> dim,
                                                  bool keepdim, bool want_max);

}  // namespace crucible::stats
