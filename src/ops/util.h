// Helpers shared by the catalog's op families: ATen's type promotion, output allocation and
// strided elementwise iteration with broadcasting. Internal to libcrucible.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "crucible/core/value.h"

namespace crucible::opsutil {

// ATen's result_type over the given operands (tensors and scalars, in any order): dimensioned
// tensors take priority over 0-d tensors, which take priority over Python scalars, each within
// the bool < integral < floating category order (c10 ResultTypeState). A Python float among
// integral tensors gives the default dtype f32; a Python int among bool tensors gives i64.
DType result_type(std::span<const Value> operands);
DType result_type(const Tensor& a, const Tensor& b);
DType result_type(const Tensor& a, const Scalar& b);

// The dtype of a "float op" (exp, tanh, sigmoid, div true-division, mean): integral and bool
// inputs give f32 (the default dtype), floating inputs keep their dtype.
DType to_float_dtype(DType t);

// Strided iteration over a common (broadcast) shape. For each output element, `fn` gets the
// element offsets (in elements, relative to each tensor's storage start) of every operand.
// `operands` may have shapes broadcastable to `shape`.
void for_each_offset(const Shape& shape, std::span<const Tensor> operands,
                     const std::function<void(std::span<const int64_t> offsets)>& fn);

// Elementwise maps computed in double (floating outputs) and rounded once to `out`'s dtype.
// `out` must have the broadcast shape of the inputs.
void map_unary(const Tensor& in, const Tensor& out, const std::function<double(double)>& f);
void map_binary(const Tensor& a, const Tensor& b, const Tensor& out,
                const std::function<double(double, double)>& f);
// Exact integer versions (int64 arithmetic, wrapped to the output width as ATen does).
void map_unary_int(const Tensor& in, const Tensor& out, const std::function<int64_t(int64_t)>& f);
void map_binary_int(const Tensor& a, const Tensor& b, const Tensor& out,
                    const std::function<int64_t(int64_t, int64_t)>& f);

// Reduction helper: the output shape of reducing `dims` of `shape` (keepdim or not), and the
// list of dims normalised (empty `dims` = all dims, as ATen's sum.dim_IntList with dim=[]).
std::vector<int64_t> normalise_dims(std::span<const int64_t> dims, int64_t ndim);
Shape reduced_shape(const Shape& shape, std::span<const int64_t> dims, bool keepdim);

}  // namespace crucible::opsutil
