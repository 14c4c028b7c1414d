// The work-dtype plumbing shared by the `cpu` backend's layer, group and batch norms (and its
// index kernels): which dtype a norm computes in, and contiguous copies into and out of it
// made by the elementwise engine. The row loops themselves are in reduction_kernels.h.
#pragma once

#include <optional>

#include "backends/cpu/reduction_kernels.h"
#include "backends/cpu/reduction_rows.h"
#include "backends/cpu/shape_copy.h"
#include "crucible/core/tensor.h"
#include "crucible/core/value.h"

namespace crucible::cpu {

// The dtype a norm computes in: f64 for f64 and for calls with extreme values (see
// nn_util.h), else f32.
inline DType norm_work(DType t, bool extreme = false) {
  return t == DType::Float64 || extreme ? DType::Float64 : DType::Float32;
}

// A contiguous copy of `t` in `work` (t itself when it already is one).
inline Tensor norm_in(const Tensor& t, DType work) { return contiguous_as(t, work); }

// `t` (in the work dtype) as `dt`.
inline Tensor norm_out(const Tensor& t, DType dt) { return contiguous_as(t, dt); }

template <typename T>
Moments row_moments(const T* x, int64_t n, bool exact);

// Calls with extreme values compute in f64 with the reference's formulas in its order
// (norm_exact.cpp); arrays are contiguous, optional ones nullptr.
// Moments of rows x[r * stride + j], r < rows, j < n, summed in that order (two passes).
Moments moments_in_order(const double* x, int64_t n, int64_t rows = 1, int64_t stride = 0);
void group_norm_backward_exact(const double* dy, const double* x, const double* mean,
                               const double* rstd, const double* w, int64_t batch, int64_t c,
                               int64_t hxw, int64_t group, double* dx, double* dgamma,
                               double* dbeta);
// sum[f] = sum g, dotp[f] = sum (x - mean) * g per channel, and gi (when given).
void batch_norm_backward_exact(const double* g, const double* x, const double* mean,
                               const double* invstd, const double* w, bool train, int64_t batch,
                               int64_t c, int64_t inner, double* gi, double* sum, double* dotp);

// Runs a norm: `f.template operator()<T>(work, exact)` returns the outputs, or nothing when
// the fast path (exact == false) met a wild value (reduction_kernels.h). The fast path runs in
// f32 (f64 for an f64 input) unless `force_exact`; the exact one in f64 in the reference's
// order.
template <typename F>
Values run_norm(DType dt, bool force_exact, F&& f) {
  if (!force_exact) {
    std::optional<Values> r = dt == DType::Float64
                                  ? f.template operator()<double>(DType::Float64, false)
                                  : f.template operator()<float>(DType::Float32, false);
    if (r) return *r;
  }
  return *f.template operator()<double>(DType::Float64, true);
}

// The moments of a row: in the reference's order for `exact` (f64) calls, else vectorized.
template <typename T>
Moments row_moments(const T* x, int64_t n, bool exact) {
  if constexpr (sizeof(T) == 8)
    if (exact) return moments_in_order(x, n);
  return stat_loops<T>().moments(x, n);
}

}  // namespace crucible::cpu
