// Private to the convolution family: the sample generators (convolution_samples.cpp) and the
// tolerances, judge and cost models (convolution_cost.cpp) used by the registrations in
// convolution.cpp.
#pragma once

#include <vector>

#include "crucible/ops/op.h"

namespace crucible::conv {

std::vector<Sample> convolution_samples(const SampleContext& ctx);
std::vector<Sample> convolution_backward_samples(const SampleContext& ctx);

// convolution: sqrt of the dot-product length (C_in / groups * kernel volume).
double conv_tol_scale(const Values& args);
// convolution_backward: each of grad_input, grad_weight, grad_bias against its own length.
std::vector<TensorCheck> conv_backward_judge(const Values& in, const Values& ref,
                                             const Values& cand);
Cost conv_cost(const Values& args, const Values& out);
Cost conv_backward_cost(const Values& args, const Values& out);

}  // namespace crucible::conv
