// The hot loops of the cpu backend's reductions and norms, over contiguous runs of f32 or f64.
// They are compiled once per ISA level (reduction_avx512.cpp, reduction_avx2.cpp,
// reduction_portable.cpp, all from reduction_loops.h) and chosen at run time like the
// elementwise loops. Statistics (sums, moments, dot products) accumulate in f64 lanes, so
// their only error against the reference's sequential f64 sums is the order of the additions;
// elementwise results are computed in the element type. The loops that read a norm's inputs
// also report whether they met a "wild" value (non-finite, or above 2^50 in magnitude: the
// criterion of extreme() in nn_util.h), so that callers can redo such calls in the reference's
// order without a separate scan of the inputs.
#pragma once

#include <cstdint>

namespace crucible::cpu {

// Moments of a run: its length, its sum and the sum of squared deviations from its mean.
// Runs combine exactly as Chan et al.'s parallel variance does; the mean of the whole is its
// plain sum / n (so an infinite value gives an infinite mean and a NaN variance, as the
// reference's two passes do).
struct Moments {
  double n = 0, sum = 0, m2 = 0;
  bool wild = false;  // a wild value was seen (set by StatLoops::moments)
  void merge(const Moments& o) {
    wild = wild || o.wild;
    if (o.n == 0) return;
    if (n == 0) {
      const bool w = wild;
      *this = o;
      wild = w;
      return;
    }
    const double d = o.sum / o.n - sum / n;
    m2 += o.m2 + d * d * (n * o.n / (n + o.n));
    n += o.n;
    sum += o.sum;
  }
};

template <typename T>
struct StatLoops {
  // sum x[0..n)
  double (*sum)(const T* x, int64_t n);
  // sum x and (into *abs) sum |x|
  double (*sum_abs)(const T* x, int64_t n, double* abs);
  // sum[o] = the sum of row o of x[rows][red], abs[o] >= its sum of |x| (within a factor
  // 1 + red * 2^-23); for short rows
  void (*row_sums)(const T* x, int64_t rows, int64_t red, double* sum, double* abs);
  // The fewest f64 accumulators sum, sum_abs and row_sums split a run over (each adds every
  // lanes-th element; their lanes are then added by halving): a sum of n elements is within
  // (n / lanes + 8) * 2^-53 * (sum of |x|) of the exact sum, the bound the order checks use.
  int lanes = 1;
  // moments of x[0..n): blocks that stay in L1 are summed, then their deviations from the
  // block mean are squared and summed, and the blocks merged (one pass over memory).
  Moments (*moments)(const T* x, int64_t n);
  // *dot = sum a*w*(b - m), *sum = sum a*w (w == nullptr: 1); whether a or b is wild
  bool (*dot_sum)(const T* a, const T* w, const T* b, int64_t n, double m, double* dot,
                  double* sum);
  // The elementwise loops below store with non-temporal stores when `stream` is set (a large
  // output, not read again soon: no read-for-ownership of its lines).
  // y = (x - m) * r * w + c (grouped as the reference: ((x - m) * r) * w + c); whether x is
  // wild
  bool (*affine)(const T* x, T* y, int64_t n, T m, T r, T w, T c, bool stream);
  // y = (x - m) * r * w + b (w, b may be nullptr); whether x is wild
  bool (*affine_wb)(const T* x, T* y, int64_t n, T m, T r, const T* w, const T* b, bool stream);
  // o = a * g * w + b * (x - m) + c (w may be nullptr); whether g or x is wild
  bool (*backward)(const T* g, const T* w, const T* x, T* o, int64_t n, T a, T b, T m, T c,
                   bool stream);
  // ga[j] += g[j] * (x[j] - m) * r, gb[j] += g[j] (in f64); whether g or x is wild
  bool (*grad_params)(const T* g, const T* x, int64_t n, double m, double r, double* ga,
                      double* gb);
  // acc[j] += x[r * ld + j] (and abs[j] += |x[r * ld + j]| when abs is given) for r in
  // [0, rows), j in [0, n), in the order of r, row after row
  void (*col_sum)(const T* x, int64_t rows, int64_t ld, int64_t n, double* acc, double* abs);
  // mean[j] given: s1[j] += x - mean[j], s2[j] += (x - mean[j])^2 over the rows
  void (*col_moments)(const T* x, int64_t rows, int64_t ld, int64_t n, const double* mean,
                      double* s1, double* s2);
  // the largest (want_max) or smallest value of x[0..n), n >= 1; NaN when there is one
  T (*row_extreme)(const T* x, int64_t n, bool want_max);
  // the index of the first largest / smallest value of x[0..n) (of the first NaN), n >= 1
  int64_t (*row_arg)(const T* x, int64_t n, bool want_max);
  // for each column j < n of rows x[r * ld + j], r in [0, rows), rows >= 1: the extreme value
  // into best[j] and (idx != nullptr) the row of its first occurrence (first NaN) into idx[j]
  void (*col_pick)(const T* x, int64_t rows, int64_t ld, int64_t n, bool want_max, T* best,
                   int64_t* idx);
  // the product of x[0..n) in f64 lanes; *wild |= whether x is wild
  double (*prod)(const T* x, int64_t n, bool* wild);
  // whether any x != 0 (NaN counts) / every x != 0
  bool (*any_nonzero)(const T* x, int64_t n);
  bool (*all_nonzero)(const T* x, int64_t n);
  // acc[j] = acc[j] | (x != 0) (any) or acc[j] & (x != 0) (all) over rows x[r * ld + j]
  void (*col_anyall)(const T* x, int64_t rows, int64_t ld, int64_t n, bool any, uint8_t* acc);
};

struct RedKernels {
  StatLoops<float> f32;
  StatLoops<double> f64;
  // bytes: whether any / every byte of x[0..n) is nonzero
  bool (*any_byte)(const uint8_t* x, int64_t n);
  bool (*all_byte)(const uint8_t* x, int64_t n);
  // acc[j] = acc[j] | x (any) or acc[j] & x (all) over rows of bytes (as 0/1)
  void (*col_anyall_byte)(const uint8_t* x, int64_t rows, int64_t ld, int64_t n, bool any,
                          uint8_t* acc);
};

const RedKernels& red_kernels_avx512();
const RedKernels& red_kernels_avx2();
const RedKernels& red_kernels_portable();
// The set for isa_level().
const RedKernels& red_kernels();

// Whether an elementwise output of `bytes`, written in runs of `run` elements, is stored
// non-temporally: when it is well beyond what the caches keep for the next op, and its runs
// are long enough for the element-wise start (until 64-byte alignment) not to matter.
inline bool stream_output(int64_t bytes, int64_t run) {
  return bytes >= (int64_t{8} << 20) && run >= 512;
}

template <typename T>
const StatLoops<T>& stat_loops() {
  if constexpr (sizeof(T) == 4)
    return red_kernels().f32;
  else
    return red_kernels().f64;
}

}  // namespace crucible::cpu
