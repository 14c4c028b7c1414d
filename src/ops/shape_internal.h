// Private declarations of the shape family (shape.cpp, shape_samples.cpp): the sample generators
// of the views (the views themselves: crucible/ops/rules/shape.h). Internal to libcrucible.
#pragma once

#include <vector>

#include "crucible/ops/op.h"
#include "crucible/ops/rules/shape.h"

namespace crucible::shape_ops {

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
