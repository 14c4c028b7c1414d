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

namespace crucible::arith {

// Bytes a tensor really occupies: dims of stride 0 (broadcast, expanded) are counted once.
double real_bytes(const Tensor& t);

// A Tensor-or-number operand as a tensor: a Python number (Int/Float/Bool Value) becomes a 0-d
// tensor of its own kind (i64, f64, bool) holding the exact value.
Tensor operand(const Value& v);
// The dtype of operand(v).
DType operand_dtype(const Value& v);
// ATen's result_type over the given operands (wrapped numbers take part as such).
DType promoted(std::initializer_list<Value> operands);

// Raises Unsupported for the dtypes the reference does not model (complex, fp8).
void require_modelled(DType t, const std::string& op);

// Two's complement wrap of `v` to the width of integral dtype `t` (bool: v != 0).
int64_t wrap_to(int64_t v, DType t);
// `v` rounded once to floating dtype `t` (identity for f64).
double round_to(double v, DType t);

// ATen's Scalar::to<T>() (c10::checked_convert): raises "value cannot be converted to type
// int8_t without overflow" when `s` does not fit dtype `t`. Bool never overflows; unsigned
// integers accept negative integers down to -max (they wrap); floating targets accept ±inf and
// NaN. The converted value: truncated toward zero / wrapped for integral `t`, rounded for
// floating `t`, != 0 for bool.
void check_scalar_fits(const Scalar& s, DType t);
double scalar_as_double(const Scalar& s, DType t);  // floating t (after check_scalar_fits)
int64_t scalar_as_int(const Scalar& s, DType t);    // integral or bool t

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

// In-place ops: self must not have internally overlapping elements (stride 0 with size > 1),
// must have the broadcast shape, and the result dtype must be castable to self's dtype.
void check_inplace(const Tensor& self, const Shape& result_shape, DType result_dtype);
// out= ops: out must have the result's shape (resizing is not modelled: Unsupported) and a
// dtype the result dtype can be cast to.
void check_out(const Tensor& out, const Shape& result_shape, DType result_dtype);

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
