// The softmax row loops (see softmax_kernels.h), instantiated once per ISA translation unit:
// softmax_avx512.cpp, softmax_avx2.cpp and softmax_portable.cpp define kVecBytes (the vector
// width) and include this file inside a namespace of their own, after <immintrin.h>,
// <algorithm>, <bit>, <cmath>, <cstdint>, <vector> and softmax_kernels.h.
//
// f32 is written with the vectors of vec_f32.h, row tails as masked partial vectors; f64 uses
// plain loops (std::exp, not vectorized), as it is not a speed path. Sums keep vector partial
// results and add them into a double every kFlush elements, which bounds the f32 rounding of
// a long row's normaliser. Large outputs are streamed (softmax.cpp decides): the forward then
// keeps a row's exponentials in a scratch row until they are scaled.
//
// Numerics, as the reference (ops/softmax.cpp, ops/softmax_backward.cpp): the row maximum
// propagates NaN; the normaliser is summed in double. The backward's f32 (and lane-ordered)
// arithmetic is exact enough unless a row holds a value of magnitude above 2^50 or a
// non-finite one (or, for log-softmax, an output above 80, whose exp overflows f32): such a
// row is recomputed in double in the reference's order (a sequential sum), where grad - sum
// may stay finite although f32 would overflow, and where cancellation gives the same result.
#include "backends/cpu/vec_f32.h"
#include "backends/cpu/vec_math.h"

constexpr int64_t kFlush = 2048;
constexpr double kBig = 1125899906842624.0;  // 2^50
constexpr float kLogYMax = 80.0f;            // exp(y) stays finite in f32 below this

template <typename T>
inline T max_nan(T m, T v) {
  return ((v > m) | (v != v)) ? v : m;
}
inline vf vmax_nan(vf m, vf v) { return ((v > m) | (v != v)) ? v : m; }

// Lanes [0, m) of a vector (m <= kW).
inline vi lanes(int64_t m) { return iota(1) < static_cast<int32_t>(m); }

// The m-lane vector at p for a max: lanes past m hold -inf.
inline vf ldf_max(const float* p, int64_t m) {
  return m == kW ? ldf(p) : (lanes(m) ? ldf_part(p, m) : splat(-__builtin_inff()));
}

// vm::exp (vec_math.h) on a vector, the same steps.
inline vf vexp(vf x) {
  const vi nan = x != x;
  vf xc = x < -104.0f ? splat(-104.0f) : x;
  xc = xc > 89.0f ? splat(89.0f) : xc;
  xc = nan ? splat(0.0f) : xc;
  const vf k = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  vf r = k * -0.693145751953125f + xc;
  r = k * -1.428606765330187045e-06f + r;
  vf p = splat(1.0f / 5040.0f);
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const vi ki = __builtin_convertvector(k, vi);
  const vi k1 = ki / 2, k2 = ki - k1;
  const vf res =
      p * reinterpret_cast<vf>((k1 + 127) << 23) * reinterpret_cast<vf>((k2 + 127) << 23);
  return nan ? x : res;
}

// The lanes' sum (of at most kFlush / kW terms each), added into a double by the callers.
inline double hsum(vf v) { return static_cast<double>(hsum_tree(v)); }

// -1 where (g, y) asks for the double path (see the top of this file), else 0. Lanes read as 0
// are not wide.
inline vi vwide(vf g, vf y, bool log) {
  const vf ag = reinterpret_cast<vf>(reinterpret_cast<vi>(g) & 0x7fffffff);
  const vf yv = log ? y : reinterpret_cast<vf>(reinterpret_cast<vi>(y) & 0x7fffffff);
  const float ylim = log ? kLogYMax : static_cast<float>(kBig);
  return ~((ag <= static_cast<float>(kBig)) & (yv <= ylim));
}

// ---- f32, rows -------------------------------------------------------------------------------

float row_max(const float* x, int64_t n) {
  vf a0 = splat(-__builtin_inff()), a1 = a0;
  int64_t j = 0;
  for (; j + 2 * kW <= n; j += 2 * kW) {
    a0 = vmax_nan(a0, ldf(x + j));
    a1 = vmax_nan(a1, ldf(x + j + kW));
  }
  for (; j < n; j += kW) a0 = vmax_nan(a0, ldf_max(x + j, std::min<int64_t>(kW, n - j)));
  a0 = vmax_nan(a0, a1);
  for (int half = kW / 2; half > 0; half /= 2) a0 = vmax_nan(a0, swap_halves(a0, half));
  return a0[0];
}

// Sum of exp(x - m) over the row; with kStore, the exponentials are written to e.
template <bool kStore>
double exp_sum(const float* x, float* e, int64_t n, float m) {
  double s = 0;
  const vf vm_ = splat(m);
  for (int64_t b = 0; b < n; b += kFlush) {
    const int64_t end = std::min(n, b + kFlush);
    vf a0 = vf{}, a1 = vf{};
    int64_t j = b;
    for (; j + 2 * kW <= end; j += 2 * kW) {
      const vf e0 = vexp(ldf(x + j) - vm_), e1 = vexp(ldf(x + j + kW) - vm_);
      if constexpr (kStore) {
        stf(e + j, e0);
        stf(e + j + kW, e1);
      }
      a0 += e0;
      a1 += e1;
    }
    for (; j < end; j += kW) {
      const int64_t k = std::min<int64_t>(kW, end - j);
      const vf e0 = k == kW    ? vexp(ldf(x + j) - vm_)
                    : lanes(k) ? vexp(ldf_part(x + j, k) - vm_)
                               : vf{};
      if constexpr (kStore) {
        if (k == kW)
          stf(e + j, e0);
        else
          stf_part(e + j, e0, k);
      }
      a0 += e0;
    }
    s += hsum(a0 + a1);
  }
  return s;
}

// nt: stream the output (write_row); the exponentials then wait in a scratch row.
void fwd_last_f32(const float* x, float* y, int64_t rows, int64_t n, bool log, bool nt) {
  std::vector<float> scratch(!log && nt ? static_cast<size_t>(n) : 0);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    const float m = row_max(xr, n);
    if (log) {
      const float ls = static_cast<float>(std::log(exp_sum<false>(xr, nullptr, n, m)));
      const vf vm_ = splat(m), vls = splat(ls);
      write_row(yr, n, nt, [&](int64_t j, int64_t k) { return (ldf_n(xr + j, k) - vm_) - vls; });
    } else {
      float* e = nt ? scratch.data() : yr;
      const float inv = static_cast<float>(1.0 / exp_sum<true>(xr, e, n, m));
      write_row(yr, n, nt, [&](int64_t j, int64_t k) { return ldf_n(e + j, k) * inv; });
    }
  }
  if (nt) stream_fence();
}

// The backward's row sum (of g, or of g * y); `*bad`: the row holds a wide pair.
double bwd_sum(const float* g, const float* y, int64_t n, bool log, bool* bad) {
  double s = 0;
  vi wd = vi{};
  for (int64_t b = 0; b < n; b += kFlush) {
    const int64_t e = std::min(n, b + kFlush);
    vf a0 = vf{}, a1 = vf{};
    int64_t j = b;
    for (; j + 2 * kW <= e; j += 2 * kW) {
      const vf g0 = ldf(g + j), g1 = ldf(g + j + kW);
      const vf y0 = ldf(y + j), y1 = ldf(y + j + kW);
      a0 += log ? g0 : g0 * y0;
      a1 += log ? g1 : g1 * y1;
      wd |= vwide(g0, y0, log) | vwide(g1, y1, log);
    }
    for (; j < e; j += kW) {  // lanes past the row read as 0: they add 0 and are not wide
      const int64_t k = std::min<int64_t>(kW, e - j);
      const vf g0 = ldf_n(g + j, k), y0 = ldf_n(y + j, k);
      a0 += log ? g0 : g0 * y0;
      wd |= vwide(g0, y0, log);
    }
    s += hsum(a0 + a1);
  }
  *bad = any(wd);
  return s;
}

// One row (or column, elements `stride` apart) in double, in the reference's order.
template <typename T>
void bwd_exact(const T* g, const T* y, T* o, int64_t n, int64_t stride, bool log) {
  double s = 0;
  for (int64_t k = 0; k < n; ++k) {
    const double gv = static_cast<double>(g[k * stride]), yv = static_cast<double>(y[k * stride]);
    s += log ? gv : gv * yv;
  }
  for (int64_t k = 0; k < n; ++k) {
    const double gv = static_cast<double>(g[k * stride]), yv = static_cast<double>(y[k * stride]);
    o[k * stride] = static_cast<T>(log ? gv - std::exp(yv) * s : yv * (gv - s));
  }
}

void bwd_last_f32(const float* g, const float* y, float* o, int64_t rows, int64_t n, bool log,
                  bool nt) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* gr = g + r * n;
    const float* yr = y + r * n;
    float* orow = o + r * n;
    bool bad = false;
    const float s = static_cast<float>(bwd_sum(gr, yr, n, log, &bad));
    if (bad) {
      bwd_exact(gr, yr, orow, n, 1, log);
      continue;
    }
    const vf vs = splat(s);
    if (log)
      write_row(orow, n, nt, [&](int64_t j, int64_t k) {
        return ldf_n(gr + j, k) - vexp(ldf_n(yr + j, k)) * vs;
      });
    else
      write_row(orow, n, nt,
                [&](int64_t j, int64_t k) { return ldf_n(yr + j, k) * (ldf_n(gr + j, k) - vs); });
  }
  if (nt) stream_fence();
}

// ---- f32, column blocks ----------------------------------------------------------------------
// A block of w <= kSoftmaxCols columns in nv vectors, the last one of lanes(w_last) lanes.

constexpr int kColVecs = static_cast<int>(kSoftmaxCols) / kW;

inline void stf_n(float* p, vf v, int64_t m) {
  if (m == kW)
    stf(p, v);
  else
    stf_part(p, v, m);
}

void fwd_cols_f32(const float* x, float* y, int64_t n, int64_t inner, int64_t w, bool log,
                  bool /*nt*/) {
  const int nv = static_cast<int>((w + kW - 1) / kW);
  const auto width = [&](int v) { return std::min<int64_t>(kW, w - v * kW); };
  vf m[kColVecs], c[kColVecs];
  double s[kSoftmaxCols + kW] = {};
  for (int v = 0; v < nv; ++v) m[v] = splat(-__builtin_inff());
  for (int64_t k = 0; k < n; ++k)
    for (int v = 0; v < nv; ++v) m[v] = vmax_nan(m[v], ldf_max(x + k * inner + v * kW, width(v)));
  // The exponentials are summed in f32 over kFlush / 16 rows, then into the doubles.
  for (int64_t b = 0; b < n; b += kFlush / 16) {
    const int64_t e = std::min(n, b + kFlush / 16);
    vf acc[kColVecs];
    for (int v = 0; v < nv; ++v) acc[v] = vf{};
    for (int64_t k = b; k < e; ++k)
      for (int v = 0; v < nv; ++v) {
        const int64_t at = k * inner + v * kW;
        const vf ev = vexp(ldf_n(x + at, width(v)) - m[v]);
        if (!log) stf_n(y + at, ev, width(v));
        acc[v] += ev;
      }
    for (int v = 0; v < nv; ++v)
      for (int l = 0; l < kW; ++l) s[v * kW + l] += static_cast<double>(acc[v][l]);
  }
  for (int v = 0; v < nv; ++v)
    for (int l = 0; l < kW; ++l) {
      const double sj = s[v * kW + l];
      c[v][l] = log ? static_cast<float>(std::log(sj)) : static_cast<float>(1.0 / sj);
    }
  for (int64_t k = 0; k < n; ++k)
    for (int v = 0; v < nv; ++v) {
      const int64_t at = k * inner + v * kW;
      const vf r = log ? (ldf_n(x + at, width(v)) - m[v]) - c[v] : ldf_n(y + at, width(v)) * c[v];
      stf_n(y + at, r, width(v));
    }
}

void bwd_cols_f32(const float* g, const float* y, float* o, int64_t n, int64_t inner, int64_t w,
                  bool log, bool /*nt*/) {
  const int nv = static_cast<int>((w + kW - 1) / kW);
  const auto width = [&](int v) { return std::min<int64_t>(kW, w - v * kW); };
  double s[kSoftmaxCols + kW] = {};
  vi wd = vi{};
  for (int64_t b = 0; b < n; b += kFlush / 16) {
    const int64_t e = std::min(n, b + kFlush / 16);
    vf acc[kColVecs];
    for (int v = 0; v < nv; ++v) acc[v] = vf{};
    for (int64_t k = b; k < e; ++k)
      for (int v = 0; v < nv; ++v) {
        const int64_t at = k * inner + v * kW;
        const vf gv = ldf_n(g + at, width(v)), yv = ldf_n(y + at, width(v));
        acc[v] += log ? gv : gv * yv;
        wd |= vwide(gv, yv, log);
      }
    for (int v = 0; v < nv; ++v)
      for (int l = 0; l < kW; ++l) s[v * kW + l] += static_cast<double>(acc[v][l]);
  }
  if (any(wd)) {
    for (int64_t j = 0; j < w; ++j) bwd_exact(g + j, y + j, o + j, n, inner, log);
    return;
  }
  vf c[kColVecs];
  for (int v = 0; v < nv; ++v)
    for (int l = 0; l < kW; ++l) c[v][l] = static_cast<float>(s[v * kW + l]);
  for (int64_t k = 0; k < n; ++k)
    for (int v = 0; v < nv; ++v) {
      const int64_t at = k * inner + v * kW;
      const vf gv = ldf_n(g + at, width(v)), yv = ldf_n(y + at, width(v));
      stf_n(o + at, log ? gv - vexp(yv) * c[v] : yv * (gv - c[v]), width(v));
    }
}

// ---- f64: plain loops, the same steps --------------------------------------------------------

void fwd_last_f64(const double* x, double* y, int64_t rows, int64_t n, bool log, bool) {
  for (int64_t r = 0; r < rows; ++r) {
    const double* xr = x + r * n;
    double* yr = y + r * n;
    double m = -__builtin_inf();
    for (int64_t j = 0; j < n; ++j) m = max_nan(m, xr[j]);
    double s = 0;
    for (int64_t j = 0; j < n; ++j) s += std::exp(xr[j] - m);
    if (log) {
      const double ls = std::log(s);
      for (int64_t j = 0; j < n; ++j) yr[j] = (xr[j] - m) - ls;
    } else {
      for (int64_t j = 0; j < n; ++j) yr[j] = std::exp(xr[j] - m) / s;
    }
  }
}

void fwd_cols_f64(const double* x, double* y, int64_t n, int64_t inner, int64_t w, bool log, bool) {
  for (int64_t j = 0; j < w; ++j) {
    double m = -__builtin_inf();
    for (int64_t k = 0; k < n; ++k) m = max_nan(m, x[k * inner + j]);
    double s = 0;
    for (int64_t k = 0; k < n; ++k) s += std::exp(x[k * inner + j] - m);
    const double ls = std::log(s);
    for (int64_t k = 0; k < n; ++k) {
      const double sh = x[k * inner + j] - m;
      y[k * inner + j] = log ? sh - ls : std::exp(sh) / s;
    }
  }
}

void bwd_last_f64(const double* g, const double* y, double* o, int64_t rows, int64_t n, bool log,
                  bool) {
  for (int64_t r = 0; r < rows; ++r) bwd_exact(g + r * n, y + r * n, o + r * n, n, 1, log);
}

void bwd_cols_f64(const double* g, const double* y, double* o, int64_t n, int64_t inner, int64_t w,
                  bool log, bool) {
  for (int64_t j = 0; j < w; ++j) bwd_exact(g + j, y + j, o + j, n, inner, log);
}

#include "backends/cpu/softmax_attention_loops.h"

inline SoftmaxKernels make_kernels() {
  return SoftmaxKernels{{&fwd_last_f32, &fwd_cols_f32, &bwd_last_f32, &bwd_cols_f32},
                        {&fwd_last_f64, &fwd_cols_f64, &bwd_last_f64, &bwd_cols_f64},
                        {&att_softmax_lse_f32, &att_exp_minus_f32, &att_ds_f32},
                        {&att_softmax_lse_f64, &att_exp_minus_f64, &att_ds_f64}};
}
