// ATen's rules that the catalog (src/ops) and backends' kernels share: the views of
// TensorShape.cpp (squeeze, diagonal, as_strided, slice, split, split_with_sizes, unbind, t) with
// ATen's sizes, strides, storage offsets and argument checks. Written once here; the catalog's
// references and meta functions and the cpu kernels call the same code.
#pragma once

#include <cstdint>
#include <vector>

#include "crucible/core/value.h"

namespace crucible::shape_ops {

// squeeze(): every size-1 dim dropped.
Tensor squeeze_all(const Tensor& t);

// squeeze.dim / squeeze.dims: the listed dims (wrapped) of size 1 dropped; a repeated dim raises
// ("dim 0 appears multiple times in the list of dims").
Tensor squeeze_dims(const Tensor& t, const std::vector<int64_t>& dims);

// The diagonal of dims (dim1, dim2) as the last dim, stride stride1 + stride2; identical dims
// raise. Its length is max(0, min(size1, size2 - offset)) (offset >= 0) or
// max(0, min(size1 + offset, size2)); the storage offset moves only when it is not empty.
Tensor diagonal(const Tensor& t, int64_t offset, int64_t dim1, int64_t dim2);

// as_strided: storage_offset None keeps the input's storage offset.
Tensor as_strided(const Tensor& t, const Shape& size, const Shape& stride, const Value& offset);

// slice.Tensor: start / end None are 0 / the end.
Tensor slice(const Tensor& t, int64_t dim, const Value& start, const Value& end, int64_t step);

// split.Tensor: chunks of split_size along dim (the last one shorter); split_size must be
// non-negative, and 0 only when the dim is empty; a 0-d input raises.
std::vector<Tensor> split(const Tensor& t, int64_t split_size, int64_t dim);

// split_with_sizes: the sizes must be non-negative and sum to the dim's size.
std::vector<Tensor> split_with_sizes(const Tensor& t, const std::vector<int64_t>& sizes,
                                     int64_t dim);

// unbind.int: select of every index along dim; a 0-d input raises.
std::vector<Tensor> unbind(const Tensor& t, int64_t dim);

// t(): <= 2-d only; 0-d and 1-d inputs come back unchanged (as views).
Tensor t_2d(const Tensor& t);

}  // namespace crucible::shape_ops
