// Private declarations of the fft family's files (fft.cpp, fft_samples.cpp, fft_views.cpp).
#pragma once

#include <vector>

#include "crucible/ops/op.h"

namespace crucible {

std::vector<Sample> fft_r2c_samples(const SampleContext& ctx);
std::vector<Sample> fft_c2r_samples(const SampleContext& ctx);
std::vector<Sample> fft_c2c_samples(const SampleContext& ctx);

// view_as_real, view_as_complex, real, imag (fft_views.cpp).
void register_complex_view_ops(OpRegistry& r);

}  // namespace crucible
