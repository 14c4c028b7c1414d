// Private to the convolution family: the sample generators (convolution_samples.cpp) used by
// the registrations in convolution.cpp.
#pragma once

#include <vector>

#include "crucible/ops/op.h"

namespace crucible::conv {

std::vector<Sample> convolution_samples(const SampleContext& ctx);
std::vector<Sample> convolution_backward_samples(const SampleContext& ctx);

}  // namespace crucible::conv
