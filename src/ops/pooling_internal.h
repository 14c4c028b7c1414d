// Shared pieces of the pooling family (pooling.cpp: max pooling; pooling_avg.cpp: average and
// adaptive average pooling): the checked window geometry, seen as 3 spatial dims (2-d pooling
// has a leading size-1 dim), and sample helpers. Internal to the catalog.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "crucible/core/value.h"
#include "crucible/ops/op.h"
#include "crucible/ops/rules/pooling.h"

namespace crucible::pooling {

double bytes_of(const Value& v);

// Samples of max_pool{nsp}d_with_indices (or its backward) and adaptive_max_pool2d (or its
// backward); pooling_max_samples.cpp.
std::vector<Sample> max_pool_samples(const SampleContext& ctx, int64_t nsp, bool backward);
std::vector<Sample> adaptive_max_samples(const SampleContext& ctx, bool backward);

// Registers the average pooling ops (pooling_avg.cpp).
void register_pooling_avg_ops(OpRegistry& r);

}  // namespace crucible::pooling
