// ATen's rules that the catalog (src/ops) and backends' kernels share: the argument checks,
// output shape and geometry of convolution and convolution_backward (Convolution.cpp's
// _convolution and check_shape_forward, the CPU kernels' dtype dispatch). Written once here; the
// catalog's meta functions and references and the cpu kernels call the same code.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "crucible/core/tensor.h"
#include "crucible/ops/args.h"

namespace crucible::conv {

// The checked geometry of one convolution call.
struct Conv {
  int64_t nsp = 2;  // spatial dims
  std::vector<int64_t> stride, padding, dilation, output_padding;
  bool transposed = false;
  int64_t groups = 1;
  Shape input_shape, weight_shape, output_shape;
};

// convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
// groups)'s checks, in ATen's order: the geometry checks, input, weight and bias of one dtype,
// the CPU kernels' dtype dispatch. Returns the geometry with the output shape.
Conv convolution_checked(const Args& a);

// convolution_backward(grad_output, input, weight, bias_sizes, ..., output_mask)'s checks: the
// geometry checks (bias_sizes only says whether there was a bias), output_mask of 3, input,
// weight and grad_output of one floating dtype, grad_output of the output's shape.
Conv convolution_backward_checked(const Args& a);

// A convolution seen over 3 spatial dims (1-d and 2-d get leading size-1 dims): X is the big side
// (positions x = y * st - pd + k * dl), Y the small side, the weight [cy, cx / g, ks...]. A
// convolution gathers X into Y; a transposed one scatters Y into X; weight gradients sum Y * X.
struct Geo {
  int64_t n = 0, g = 1, cx = 0, cy = 0;
  int64_t xs[3] = {1, 1, 1}, ys[3] = {1, 1, 1}, ks[3] = {1, 1, 1};
  int64_t st[3] = {1, 1, 1}, pd[3] = {0, 0, 0}, dl[3] = {1, 1, 1};
  int64_t cxg() const { return cx / g; }
  int64_t cyg() const { return cy / g; }
  int64_t xsp() const { return xs[0] * xs[1] * xs[2]; }
  int64_t ysp() const { return ys[0] * ys[1] * ys[2]; }
  int64_t kvol() const { return ks[0] * ks[1] * ks[2]; }
  int64_t x_numel() const { return n * cx * xsp(); }
  int64_t y_numel() const { return n * cy * ysp(); }
  int64_t w_numel() const { return cy * cxg() * kvol(); }
  // 1x1 kernel, stride 1, no padding, X and Y of one size: X's im2col is X itself.
  bool pointwise() const {
    for (int d = 0; d < 3; ++d)
      if (ks[d] != 1 || st[d] != 1 || pd[d] != 0 || xs[d] != ys[d]) return false;
    return true;
  }
  // The Y positions [lo, hi) of the last dim whose X position y * st[2] + off (off = kw * dl[2]
  // - pd[2] for kernel position kw) lies in [0, xs[2]); lo == hi when none does.
  void last_dim_range(int64_t off, int64_t* lo, int64_t* hi) const {
    *lo = off >= 0 ? 0 : (-off + st[2] - 1) / st[2];
    const int64_t top = xs[2] - 1 - off;
    *hi = top < 0 ? 0 : std::min(ys[2], top / st[2] + 1);
    if (*lo > *hi) *lo = *hi;
  }
  // Calls f(y_row, x_row) for every row (yd, yh) of Y (all dims but the last) whose X row
  // (yd, yh) * st - pd + (kd, kh) * dl lies in X, for kernel position (kd, kh): the offsets of
  // the two rows in their planes. Always inlined, so that `f` (a kernel's innermost loop) is
  // compiled into its caller, with the caller's optimisation options.
  template <typename F>
  [[gnu::always_inline]] void for_each_row(int64_t kd, int64_t kh, F&& f) const {
    for (int64_t yd = 0; yd < ys[0]; ++yd) {
      const int64_t xd = yd * st[0] - pd[0] + kd * dl[0];
      if (xd < 0 || xd >= xs[0]) continue;
      for (int64_t yh = 0; yh < ys[1]; ++yh) {
        const int64_t xh = yh * st[1] - pd[1] + kh * dl[1];
        if (xh < 0 || xh >= xs[1]) continue;
        f((yd * ys[1] + yh) * ys[2], (xd * xs[1] + xh) * xs[2]);
      }
    }
  }
};

// The geometry of a checked call: X is the input (the output when transposed), Y the output
// (the input when transposed).
Geo make_geo(const Conv& c);

}  // namespace crucible::conv
