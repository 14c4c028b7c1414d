// Helpers shared by the statistics, scan and sort families (statistics*.cpp, scan.cpp,
// sort.cpp, distance.cpp, softmax_backward.cpp, nll_loss.cpp). Internal to libcrucible.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "crucible/core/value.h"
#include "crucible/ops/op.h"
#include "crucible/ops/rules/reduction.h"

namespace crucible::stats {

// `v` rounded to dtype `t` (what storing it in a tensor of that dtype keeps).
double round_to(double v, DType t);

// Element `i` (logical index) as a double, for any dtype.
double element(const Tensor& t, int64_t i);

// Visits every input element: fn(output logical index, input logical index).
template <typename Fn>
void for_each_reduced(const Tensor& self, const ReducePlan& p, Fn&& fn) {
  const Shape& shape = self.shape();
  int64_t in_index = 0;
  for_each_index(shape, [&](std::span<const int64_t> idx) {
    int64_t out_index = 0;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (!p.reduced[d]) out_index = out_index * shape[d] + idx[d];
    }
    fn(out_index, in_index++);
  });
}

// A tensor seen as rows along one dim: row r, element k is at logical index
// (r / inner * len + k) * inner + r % inner. dim = -1 with `flatten` views the whole tensor as
// one row. A 0-d tensor is one row of one element.
struct Rows {
  int64_t outer = 1, len = 1, inner = 1;
  int64_t count() const { return outer * inner; }
  int64_t at(int64_t r, int64_t k) const { return ((r / inner) * len + k) * inner + r % inner; }
};
Rows rows_of(const Shape& shape, int64_t wrapped_dim);
Rows flat_rows(int64_t numel);

// Reduction length of a (self, dims) call for tolerances: the product of the reduced sizes
// (all elements when dims are empty); 1 for a malformed call.
double reduction_length(const Tensor& self, const std::vector<int64_t>& dims);

// One read of every input element and one write of every output element; `flops_per` per
// input element.
// `read_write_cost(args, ...)` reads the first argument; the Args form reads argument `input`.
Cost read_write_cost(const Values& args, const Values& outputs, double flops_per = 1.0);
Cost read_write_cost(const Args& a, std::string_view input, const Values& outputs,
                     double flops_per = 1.0);

// A compare policy of an op with `schema` widening the tolerance by sqrt(reduction length), from
// argument self and the dims argument named `dims` (nullptr: all dims).
ComparePolicy sqrt_length_compare(Schema schema, const char* dims);

}  // namespace crucible::stats
