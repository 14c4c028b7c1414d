// Helpers shared by the arithmetic, comparison, where and loss families (private to them):
// wrapped-number operands, casts to a common dtype, ATen's checked Scalar conversion, n-ary
// elementwise loops, in-place / out= checks and the elementwise cost model.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "crucible/core/value.h"
#include "crucible/ops/args.h"
#include "crucible/ops/op.h"
#include "crucible/ops/rules/arithmetic.h"

namespace crucible::arith {

// Bytes a tensor really occupies: dims of stride 0 (broadcast, expanded) are counted once.
double real_bytes(const Tensor& t);

// ATen's result_type over the given operands (wrapped numbers take part as such).
DType promoted(std::initializer_list<Value> operands);

// `v` rounded once to floating dtype `t` (identity for f64).
double round_to(double v, DType t);

// Elementwise loops over the broadcast shape of `ins` (which must equal `out`'s shape).
// map_float: inputs loaded as double (rounded to `round_inputs` first when given), f's result
// rounded once to out's dtype. map_int: inputs loaded exactly and wrapped to `compute` (cast to
// the common dtype, as TensorIterator does), f's result stored into out (wrapping).
void map_float(std::span<const Tensor> ins, const Tensor& out,
               const std::function<double(const double*)>& f,
               std::optional<DType> round_inputs = std::nullopt);
void map_int(std::span<const Tensor> ins, DType compute, const Tensor& out,
             const std::function<int64_t(const int64_t*)>& f);

// The broadcast shape of several tensors.
Shape broadcast_all(std::span<const Tensor> ts);

// Wraps an out-of-place reference as the in-place op on self (the result is computed first,
// then copied into self, converting to self's dtype) or the out= op on the argument `out`.
RefFn inplace_of(RefFn ref);
RefFn out_of(RefFn ref);

// Elementwise cost: `flops` per output element; bytes = the real bytes of the tensor arguments
// read + the output written. An argument sharing the output's storage (out=, in-place self) is
// counted as read only when `reads_output` (in-place ops read self).
CostFn elementwise_cost(double flops, bool reads_output = false);

// The standard performance cases of a binary op plus the f32/f16/bf16 dtypes.
std::vector<DType> perf_dtypes();

}  // namespace crucible::arith
