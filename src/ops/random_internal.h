// Private to the random family: the sample generators (random_samples.cpp) used by the
// registrations in random.cpp.
#pragma once

#include <vector>

#include "crucible/ops/op.h"

namespace crucible::random_samples {

std::vector<Sample> sized_random_samples(const SampleContext& ctx);  // rand, randn
std::vector<Sample> randperm_samples(const SampleContext& ctx);
std::vector<Sample> native_dropout_samples(const SampleContext& ctx);
std::vector<Sample> bernoulli_p_samples(const SampleContext& ctx);
std::vector<Sample> bernoulli_samples(const SampleContext& ctx);

}  // namespace crucible::random_samples
