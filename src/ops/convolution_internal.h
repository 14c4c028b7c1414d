// Private to the convolution family: the sample generators (convolution_samples.cpp) and the
// tolerances, judge and cost models (convolution_cost.cpp) used by the registrations in
// convolution.cpp.
#pragma once

#include <vector>

#include "crucible/ops/op.h"

namespace crucible::conv {

// A convolution seen over 3 spatial dims (1-d and 2-d get leading size-1 dims): X is the big side
// (positions x = y * st - pd + k * dl), Y the small side, the weight [cy, cx / g, ks...]. A
// convolution gathers X into Y; a transposed one scatters Y into X; weight gradients sum Y * X.
struct Geo {
  int64_t n = 0, g = 1, cx = 0, cy = 0;
  int64_t xs[3] = {1, 1, 1}, ys[3] = {1, 1, 1}, ks[3] = {1, 1, 1};
  int64_t st[3] = {1, 1, 1}, pd[3] = {0, 0, 0}, dl[3] = {1, 1, 1};
  int64_t x_numel() const { return n * cx * xs[0] * xs[1] * xs[2]; }
  int64_t y_numel() const { return n * cy * ys[0] * ys[1] * ys[2]; }
  int64_t w_numel() const { return cy * (cx / g) * ks[0] * ks[1] * ks[2]; }
};

// The floating directions in f64 (convolution_gemm.cpp): per batch element and group, X is
// unfolded into columns [cx / g * kernel volume, Y positions] (im2col) and multiplied with dgemm;
// the scatter folds the columns back (col2im). Buffers are contiguous [N, C, spatial] and weight
// layout; gather and scatter overwrite their output, weight adds into w (summed over n in order).
void gather_f64(const Geo& q, const double* x, double* y, const double* w);   // Y = conv(X, W)
void scatter_f64(const Geo& q, double* x, const double* y, const double* w);  // X = conv^T(Y, W)
void weight_f64(const Geo& q, const double* x, const double* y, double* w);   // W += sum Y (x) X

std::vector<Sample> convolution_samples(const SampleContext& ctx);
std::vector<Sample> convolution_backward_samples(const SampleContext& ctx);

// convolution: sqrt of the dot-product length (C_in / groups * kernel volume).
double conv_tol_scale(const Values& args);
// convolution_backward: each of grad_input, grad_weight, grad_bias against its own length.
std::vector<TensorCheck> conv_backward_judge(const Values& in, const Values& ref,
                                             const Values& cand);
Cost conv_cost(const Args& args, const Values& out);
Cost conv_backward_cost(const Args& args, const Values& out);

}  // namespace crucible::conv
