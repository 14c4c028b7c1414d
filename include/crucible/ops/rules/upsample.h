// ATen's rules that the catalog (src/ops) and backends' kernels share: the arguments, checks and
// source taps of 2-d upsampling (UpSample.h, UpSample.cpp, cpu/UpSampleKernel.cpp). Written once
// here; the catalog's meta functions and references and the cpu kernels call the same code.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "crucible/core/tensor.h"
#include "crucible/core/value.h"
#include "crucible/ops/args.h"

namespace crucible::upsampling {

enum class Mode { Nearest, Linear, Cubic };

// The taps of every output index along one axis: output o reads src[o * n + t] with weight
// w[o * n + t] for t < n (n = 1 nearest, 2 linear, 4 cubic; 1 for a linear axis whose output
// size equals its input size).
struct AxisTaps {
  int64_t n = 1;
  std::vector<int64_t> src;
  std::vector<double> w;
};

// nearest: src = min(floor(dst * s), in - 1) in float (s = 1/scale for a scale > 0, else
// in/out), dst when out == in, dst >> 1 when out == 2 * in. linear/cubic: the source coordinate
// scale * dst (align_corners) or scale * (dst + 0.5) - 0.5 (clamped at 0 for linear), its floor
// clamped to in - 1 and the fraction clamped to [0, 1]; cubic taps use Keys' weights (A = -0.75)
// at indices clamped to [0, in - 1].
AxisTaps axis_taps(Mode mode, int64_t in, int64_t out, bool align, std::optional<double> scale);

// upsample_2d_common_check: 2 output sizes, 4 input sizes, every spatial size > 0.
void common_check(const std::vector<int64_t>& input_size, const std::vector<int64_t>& out_size);

// The output size and the scales passed on to the kernel (None unless given as scale factors).
struct Resolved {
  std::vector<int64_t> out_size;
  std::optional<double> sh, sw;
};

// compute_output_size for the .vec overloads: exactly one of output_size and scale_factors, one
// entry per spatial dim; from scale factors the size is trunc(input_size * scale).
Resolved resolve_vec(const std::vector<int64_t>& input_size, const Value& output_size,
                     const Value& scale_factors);

// The dispatch's dtypes: f16, bf16, f32, f64, and u8 for the nearest forward. A u8
// bilinear/bicubic forward (ATen's fixed-point path) raises unsupported.
void check_dtype(DType t, Mode mode, bool backward);

// The forward's checks (common_check, a non-empty input but for N, the dtype); returns the
// output shape.
Shape check_forward(const Tensor& x, Mode mode, const Resolved& r);

// The backward's checks: common_check, a 4-d grad_output `g` of the output's full shape (the
// input has shape `in_size`), the dtype.
void check_backward(const Tensor& g, Mode mode, const Resolved& r,
                    const std::vector<int64_t>& in_size);

// The name of the resampled tensor: grad_output (backward), input (.vec) or self.
const char* x_name(const Args& a);

// The arguments of one call of any overload, read by the names of its schema.
struct Call {
  std::vector<int64_t> in_size;  // the input's shape (backward: input_size)
  bool align = false;
  Resolved r;
};

Call parse_call(const Args& a, Mode mode, bool vec, bool bwd);

}  // namespace crucible::upsampling
