// Shared by the `cpu` backend's upsampling files (upsample.cpp: the kernels and the f64 path;
// upsample_separable.cpp: the f32 separable path; upsample_nearest.cpp: nearest copies). The
// arguments, checks and taps are the catalog's (crucible/ops/rules/upsample.h).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "crucible/core/tensor.h"
#include "crucible/ops/rules/upsample.h"

namespace crucible::cpu::upsample {

using upsampling::axis_taps;
using upsampling::AxisTaps;
using upsampling::Mode;

// A call's planes: nc planes of [ih, iw] input and [oh, ow] output; taps along H and W.
struct Plan {
  int64_t nc = 0, ih = 0, iw = 0, oh = 0, ow = 0;
  AxisTaps th, tw;
};

// Forward and backward over contiguous f32 planes (x: [nc, ih, iw] -> out: [nc, oh, ow]; g:
// [nc, oh, ow] -> out: [nc, ih, iw]). They return false, leaving `out` unspecified, when a
// value is extreme (see nn_util.h): the caller then takes the f64 path.
bool separable_forward_f32(const Plan& p, const float* x, float* out);
bool separable_backward_f32(const Plan& p, const float* g, float* out);

// Nearest forward as element copies (any dtype, contiguous planes of `width`-byte elements).
void nearest_copy(const Plan& p, const char* x, char* out, size_t width);

}  // namespace crucible::cpu::upsample
