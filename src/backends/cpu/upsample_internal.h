// Shared by the `cpu` backend's upsampling files (upsample.cpp: arguments, checks and the f64
// path; upsample_separable.cpp: the f32 separable path; upsample_nearest.cpp: nearest copies).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "crucible/core/tensor.h"

namespace crucible::cpu::upsample {

enum class Mode { Nearest, Linear, Cubic };

// The taps of every output index along one axis: output o reads src[o * n + t] with weight
// w[o * n + t] for t < n (n = 1 nearest, 2 linear, 4 cubic; 1 for a linear axis whose output
// size equals its input size), exactly as the reference computes them (ops/upsample.cpp).
struct AxisTaps {
  int64_t n = 1;
  std::vector<int64_t> src;
  std::vector<double> w;
};

AxisTaps axis_taps(Mode mode, int64_t in, int64_t out, bool align, std::optional<double> scale);

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
