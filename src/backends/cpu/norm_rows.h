// Row primitives of the `cpu` backend's norm kernels: sums with several independent
// accumulators (so that the loops vectorise) and the work-dtype plumbing shared by layer, group
// and batch norm.
#pragma once

#include <cmath>
#include <cstdint>

#include "crucible/core/tensor.h"

namespace crucible::cpu {

// Sum of x[0..n) with 16 independent partial sums, combined in double.
template <typename T>
__attribute__((optimize("O3"))) inline double row_sum(const T* x, int64_t n) {
  T acc[16] = {};
  int64_t j = 0;
  for (; j + 16 <= n; j += 16)
    for (int l = 0; l < 16; ++l) acc[l] += x[j + l];
  double s = 0;
  for (int l = 0; l < 16; ++l) s += static_cast<double>(acc[l]);
  for (; j < n; ++j) s += static_cast<double>(x[j]);
  return s;
}

// Sum of (x - mean)^2 over x[0..n).
template <typename T>
__attribute__((optimize("O3"))) inline double row_sqdev(const T* x, int64_t n, T mean) {
  T acc[16] = {};
  int64_t j = 0;
  for (; j + 16 <= n; j += 16)
    for (int l = 0; l < 16; ++l) {
      const T d = x[j + l] - mean;
      acc[l] += d * d;
    }
  double s = 0;
  for (int l = 0; l < 16; ++l) s += static_cast<double>(acc[l]);
  for (; j < n; ++j) {
    const double d = static_cast<double>(x[j]) - static_cast<double>(mean);
    s += d * d;
  }
  return s;
}

// Sums of a[j] * b[j] and of a[j] over [0, n).
template <typename T>
__attribute__((optimize("O3"))) inline void row_dot_sum(const T* a, const T* b, int64_t n,
                                                        double* dot, double* sum) {
  T ad[16] = {}, as[16] = {};
  int64_t j = 0;
  for (; j + 16 <= n; j += 16)
    for (int l = 0; l < 16; ++l) {
      ad[l] += a[j + l] * b[j + l];
      as[l] += a[j + l];
    }
  double d = 0, s = 0;
  for (int l = 0; l < 16; ++l) {
    d += static_cast<double>(ad[l]);
    s += static_cast<double>(as[l]);
  }
  for (; j < n; ++j) {
    d += static_cast<double>(a[j]) * static_cast<double>(b[j]);
    s += static_cast<double>(a[j]);
  }
  *dot = d;
  *sum = s;
}

// The dtype a norm computes in: f64 for f64 and for calls with extreme values (see
// nn_util.h), else f32.
inline DType norm_work(DType t, bool extreme = false) {
  return t == DType::Float64 || extreme ? DType::Float64 : DType::Float32;
}

// A contiguous copy of `t` in `work` (t itself when it already is one).
inline Tensor norm_in(const Tensor& t, DType work) {
  return t.dtype() == work ? t.contiguous() : t.to(work);
}

// `t` (in the work dtype) as `dt`.
inline Tensor norm_out(const Tensor& t, DType dt) { return t.dtype() == dt ? t : t.to(dt); }

}  // namespace crucible::cpu
