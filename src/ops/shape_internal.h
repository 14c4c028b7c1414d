// Private declarations of the shape family (shape.cpp, shape_samples.cpp): the view
// references and their sample generators. Internal to libcrucible.
#pragma once

#include <vector>

#include "crucible/ops/op.h"

namespace crucible::shape_ops {

// Views computed exactly as ATen's TensorShape.cpp computes their sizes, strides and offsets.
Tensor squeeze_all(const Tensor& t);
Tensor squeeze_dims(const Tensor& t, const std::vector<int64_t>& dims);
Tensor diagonal(const Tensor& t, int64_t offset, int64_t dim1, int64_t dim2);
Tensor as_strided(const Tensor& t, const Shape& size, const Shape& stride, const Value& offset);
Tensor slice(const Tensor& t, int64_t dim, const Value& start, const Value& end, int64_t step);
std::vector<Tensor> split(const Tensor& t, int64_t split_size, int64_t dim);
std::vector<Tensor> split_with_sizes(const Tensor& t, const std::vector<int64_t>& sizes,
                                     int64_t dim);
std::vector<Tensor> unbind(const Tensor& t, int64_t dim);
Tensor t_2d(const Tensor& t);

// Correctness and performance samples, one generator per view op (the _copy variants share
// them).
std::vector<Sample> alias_samples(const SampleContext& ctx);
std::vector<Sample> unsafe_view_samples(const SampleContext& ctx);
std::vector<Sample> as_strided_samples(const SampleContext& ctx);
std::vector<Sample> expand_samples(const SampleContext& ctx);
std::vector<Sample> squeeze_samples(const SampleContext& ctx);
std::vector<Sample> squeeze_dim_samples(const SampleContext& ctx);
std::vector<Sample> squeeze_dims_samples(const SampleContext& ctx);
std::vector<Sample> unsqueeze_samples(const SampleContext& ctx);
std::vector<Sample> diagonal_samples(const SampleContext& ctx);
std::vector<Sample> select_samples(const SampleContext& ctx);
std::vector<Sample> slice_samples(const SampleContext& ctx);
std::vector<Sample> split_samples(const SampleContext& ctx);
std::vector<Sample> split_with_sizes_samples(const SampleContext& ctx);
std::vector<Sample> unbind_samples(const SampleContext& ctx);
std::vector<Sample> transpose_samples(const SampleContext& ctx);
std::vector<Sample> t_samples(const SampleContext& ctx);
std::vector<Sample> view_copy_samples(const SampleContext& ctx);
std::vector<Sample> permute_copy_samples(const SampleContext& ctx);

}  // namespace crucible::shape_ops
