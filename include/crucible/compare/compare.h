// Comparison of a candidate's tensors with the reference's: per-dtype tolerances (as
// torch.testing), exact integers, NaN meets NaN, inf meets the same inf, and error metrics.
#pragma once

#include <cstdint>
#include <string>

#include "crucible/core/tensor.h"

namespace crucible {

// Error metrics of one compared tensor (an output or a mutated argument).
struct TensorCheck {
  std::string what;  // "output 0", "mutated argument 'self'"
  bool passed = true;
  std::string reason;  // empty when passed
  int64_t numel = 0;
  int64_t mismatches = 0;
  int64_t first_mismatch = -1;  // logical index of the first mismatching element (-1: none)
  double max_abs_err = 0;
  double max_rel_err = 0;
  double max_ulp_err = 0;
  double pcc = 1;  // cosine similarity of the two tensors (1 = identical direction)
  double atol = 0, rtol = 0;
  // Whole-model outputs (the f64 arbiter, arbiter.h): the candidate's and the baseline's RMSE
  // against the f64 run and the RMSE allowed; < 0 for per-op checks.
  double rmse = -1, baseline_rmse = -1, allowed_rmse = -1;
};

struct Tolerance {
  double atol = 0;
  double rtol = 0;
};

// torch.testing's defaults: f64 1e-7/1e-7, f32 1e-5/1.3e-6, f16 1e-5/1e-3, bf16 1e-5/1.6e-2
// (atol/rtol); integers and bool are exact (0/0); complex dtypes use their component's (c64 as
// f32, c128 as f64, c32 as f16).
Tolerance default_tolerance(DType t);

// Compares two tensors elementwise: `|c - r| <= atol + rtol * |r|`, scaled by `scale` (>= 1).
// Shapes and dtypes must match. Fills every metric of the returned check. Complex tensors are
// compared on complex magnitudes (|c - r| <= atol + rtol * |r|), NaN and inf per part; their
// PCC is the cosine similarity over real and imaginary parts.
TensorCheck compare_tensors(const Tensor& reference, const Tensor& candidate, double scale,
                            const std::string& what);

// As above, but where `overflow_ok` (same shape, any dtype) is nonzero a non-finite candidate
// element is accepted whatever the reference holds: there an accumulation in the dtype itself
// (ATen's CPU kernels sum f32 products in f32) overflows in its partial sums although the
// exact result is finite. The reason of a failed check says how many elements were accepted
// so.
TensorCheck compare_tensors(const Tensor& reference, const Tensor& candidate, double scale,
                            const std::string& what, const Tensor& overflow_ok);

// The spacing of dtype `t` at magnitude |x| (one unit in the last place).
double ulp_of(double x, DType t);

}  // namespace crucible
