// Private to the convolution family: the sample generators (convolution_samples.cpp) and the
// tolerances, judge and cost models (convolution_cost.cpp) used by the registrations in
// convolution.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include "crucible/ops/op.h"
#include "crucible/ops/rules/convolution.h"
#include "ops/util.h"

namespace crucible::conv {

// The floating directions in f64 (convolution_gemm.cpp): per batch element and group, X is
// unfolded into columns [cx / g * kernel volume, Y positions] (im2col) and multiplied with dgemm;
// the scatter folds the columns back (col2im). Buffers are contiguous [N, C, spatial] and weight
// layout; gather and scatter overwrite their output, weight adds into w (summed over n in order).
// `cols` is the columns' scratch, kept by the caller across batch elements so that its pages are
// touched once per call rather than once per element (fresh pages were half of a [64, 64, 224,
// 224] convolution's time); a storage-cache block like every f64 working copy (opsutil::Doubles).
class Columns {
 public:
  double* get(int64_t elements);  // at least `elements` doubles, contents unspecified

 private:
  opsutil::Doubles buf_;
};
void gather_f64(const Geo& q, const double* x, double* y, const double* w,
                Columns& cols);  // Y = conv(X, W)
void scatter_f64(const Geo& q, double* x, const double* y, const double* w,
                 Columns& cols);  // X = conv^T(Y, W)
void weight_f64(const Geo& q, const double* x, const double* y, double* w,
                Columns& cols);  // W += sum Y (x) X

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
