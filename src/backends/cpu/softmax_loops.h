// The softmax row loops (see softmax_kernels.h), instantiated once per ISA translation unit:
// softmax_avx512.cpp, softmax_avx2.cpp and softmax_portable.cpp define kVecBytes (the vector
// width) and include this file inside a namespace of their own, after <algorithm>, <bit>,
// <cmath>, <cstdint> and softmax_kernels.h.
//
// f32 is written with GCC vector types (explicit vectors: the auto-vectorizer keeps the
// NaN-propagating max and the selects scalar, since compares may trap); f64 uses plain loops
// (std::exp, not vectorized), as it is not a speed path. Sums keep vector (or lane) partial
// results and add them into a double every kFlush elements, which bounds the f32 rounding of a
// long row's normaliser.
//
// Numerics, as the reference (ops/softmax.cpp, ops/softmax_backward.cpp): the row maximum
// propagates NaN; the normaliser is summed in double. The backward's f32 (and lane-ordered)
// arithmetic is exact enough unless a row holds a value of magnitude above 2^50 or a
// non-finite one (or, for log-softmax, an output above 80, whose exp overflows f32): such a
// row is recomputed in double in the reference's order (a sequential sum), where grad - sum
// may stay finite although f32 would overflow, and where cancellation gives the same result.
#include "backends/cpu/vec_math.h"

constexpr int kW = kVecBytes / 4;  // f32 lanes
constexpr int64_t kFlush = 2048;
constexpr double kBig = 1125899906842624.0;  // 2^50
constexpr float kLogYMax = 80.0f;            // exp(y) stays finite in f32 below this

typedef float vf __attribute__((vector_size(kVecBytes)));
typedef int32_t vi __attribute__((vector_size(kVecBytes)));
typedef float vf_u __attribute__((vector_size(kVecBytes), aligned(4)));

inline vf load(const float* p) { return *reinterpret_cast<const vf_u*>(p); }
inline void store(float* p, vf v) { *reinterpret_cast<vf_u*>(p) = v; }
inline vf splat(float s) { return vf{} + s; }

template <typename T>
inline T max_nan(T m, T v) {
  return ((v > m) | (v != v)) ? v : m;
}
inline vf vmax_nan(vf m, vf v) { return ((v > m) | (v != v)) ? v : m; }

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

inline double hsum(vf v) {
  double s = 0;
  for (int l = 0; l < kW; ++l) s += static_cast<double>(v[l]);
  return s;
}

// 1 where (g, y) asks for the double path (see the top of this file), else 0.
inline vi vwide(vf g, vf y, bool log) {
  const vf ag = reinterpret_cast<vf>(reinterpret_cast<vi>(g) & 0x7fffffff);
  const vf yv = log ? y : reinterpret_cast<vf>(reinterpret_cast<vi>(y) & 0x7fffffff);
  const float ylim = log ? kLogYMax : static_cast<float>(kBig);
  return ~((ag <= static_cast<float>(kBig)) & (yv <= ylim)) & 1;
}
template <typename T>
inline bool wide(T g, T y, bool log) {
  const T ag = g < 0 ? -g : g;
  const T yv = log ? y : (y < 0 ? -y : y);
  const T ylim = log ? static_cast<T>(kLogYMax) : static_cast<T>(kBig);
  return !(ag <= static_cast<T>(kBig) && yv <= ylim);
}

// ---- f32, rows -------------------------------------------------------------------------------

float row_max(const float* x, int64_t n) {
  vf a0 = splat(-__builtin_inff()), a1 = a0;
  int64_t j = 0;
  for (; j + 2 * kW <= n; j += 2 * kW) {
    a0 = vmax_nan(a0, load(x + j));
    a1 = vmax_nan(a1, load(x + j + kW));
  }
  for (; j + kW <= n; j += kW) a0 = vmax_nan(a0, load(x + j));
  a0 = vmax_nan(a0, a1);
  float m = -__builtin_inff();
  for (int l = 0; l < kW; ++l) m = max_nan(m, a0[l]);
  for (; j < n; ++j) m = max_nan(m, x[j]);
  return m;
}

// Sum of exp(x - m) over the row; with kStore, the exponentials are written to y.
template <bool kStore>
double exp_sum(const float* x, float* y, int64_t n, float m) {
  double s = 0;
  const vf vm_ = splat(m);
  for (int64_t b = 0; b < n; b += kFlush) {
    const int64_t e = std::min(n, b + kFlush);
    vf a0 = vf{}, a1 = vf{};
    int64_t j = b;
    for (; j + 2 * kW <= e; j += 2 * kW) {
      const vf e0 = vexp(load(x + j) - vm_), e1 = vexp(load(x + j + kW) - vm_);
      if constexpr (kStore) {
        store(y + j, e0);
        store(y + j + kW, e1);
      }
      a0 += e0;
      a1 += e1;
    }
    for (; j + kW <= e; j += kW) {
      const vf e0 = vexp(load(x + j) - vm_);
      if constexpr (kStore) store(y + j, e0);
      a0 += e0;
    }
    for (; j < e; ++j) {
      const float v = vm::exp(x[j] - m);
      if constexpr (kStore) y[j] = v;
      s += static_cast<double>(v);
    }
    s += hsum(a0 + a1);
  }
  return s;
}

void fwd_last_f32(const float* x, float* y, int64_t rows, int64_t n, bool log) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    const float m = row_max(xr, n);
    int64_t j = 0;
    if (log) {
      const float ls = static_cast<float>(std::log(exp_sum<false>(xr, yr, n, m)));
      const vf vm_ = splat(m), vls = splat(ls);
      for (; j + kW <= n; j += kW) store(yr + j, (load(xr + j) - vm_) - vls);
      for (; j < n; ++j) yr[j] = (xr[j] - m) - ls;
    } else {
      const float inv = static_cast<float>(1.0 / exp_sum<true>(xr, yr, n, m));
      for (; j + kW <= n; j += kW) store(yr + j, load(yr + j) * inv);
      for (; j < n; ++j) yr[j] *= inv;
    }
  }
}

double bwd_sum(const float* g, const float* y, int64_t n, bool log, bool* bad) {
  double s = 0;
  vi wd = vi{};
  bool sbad = false;
  for (int64_t b = 0; b < n; b += kFlush) {
    const int64_t e = std::min(n, b + kFlush);
    vf a0 = vf{}, a1 = vf{};
    int64_t j = b;
    for (; j + 2 * kW <= e; j += 2 * kW) {
      const vf g0 = load(g + j), g1 = load(g + j + kW);
      const vf y0 = load(y + j), y1 = load(y + j + kW);
      a0 += log ? g0 : g0 * y0;
      a1 += log ? g1 : g1 * y1;
      wd |= vwide(g0, y0, log) | vwide(g1, y1, log);
    }
    for (; j < e; ++j) {
      s += static_cast<double>(log ? g[j] : g[j] * y[j]);
      sbad = sbad || wide(g[j], y[j], log);
    }
    s += hsum(a0 + a1);
  }
  for (int l = 0; l < kW; ++l) sbad = sbad || wd[l] != 0;
  *bad = sbad;
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

void bwd_last_f32(const float* g, const float* y, float* o, int64_t rows, int64_t n, bool log) {
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
    int64_t j = 0;
    if (log) {
      for (; j + kW <= n; j += kW) store(orow + j, load(gr + j) - vexp(load(yr + j)) * vs);
      for (; j < n; ++j) orow[j] = gr[j] - vm::exp(yr[j]) * s;
    } else {
      for (; j + kW <= n; j += kW) store(orow + j, load(yr + j) * (load(gr + j) - vs));
      for (; j < n; ++j) orow[j] = yr[j] * (gr[j] - s);
    }
  }
}

// ---- f32, column blocks ----------------------------------------------------------------------
// A block of w <= kSoftmaxCols columns: the first wv = w / kW * kW in vectors, the rest scalar.

constexpr int kColVecs = static_cast<int>(kSoftmaxCols) / kW;

void fwd_cols_f32(const float* x, float* y, int64_t n, int64_t inner, int64_t w, bool log) {
  const int nv = static_cast<int>(w / kW);
  const int64_t wv = nv * kW;
  vf m[kColVecs], c[kColVecs];
  float ms[kW], cs[kW];
  double s[kSoftmaxCols] = {};
  for (int v = 0; v < nv; ++v) m[v] = splat(-__builtin_inff());
  for (int64_t j = wv; j < w; ++j) ms[j - wv] = -__builtin_inff();
  for (int64_t k = 0; k < n; ++k) {
    const float* xr = x + k * inner;
    for (int v = 0; v < nv; ++v) m[v] = vmax_nan(m[v], load(xr + v * kW));
    for (int64_t j = wv; j < w; ++j) ms[j - wv] = max_nan(ms[j - wv], xr[j]);
  }
  // The exponentials are summed in f32 over kFlush / 16 rows, then into the doubles.
  for (int64_t b = 0; b < n; b += kFlush / 16) {
    const int64_t e = std::min(n, b + kFlush / 16);
    vf acc[kColVecs];
    float accs[kW] = {};
    for (int v = 0; v < nv; ++v) acc[v] = vf{};
    for (int64_t k = b; k < e; ++k) {
      const float* xr = x + k * inner;
      float* yr = y + k * inner;
      for (int v = 0; v < nv; ++v) {
        const vf ev = vexp(load(xr + v * kW) - m[v]);
        if (!log) store(yr + v * kW, ev);
        acc[v] += ev;
      }
      for (int64_t j = wv; j < w; ++j) {
        const float ev = vm::exp(xr[j] - ms[j - wv]);
        if (!log) yr[j] = ev;
        accs[j - wv] += ev;
      }
    }
    for (int v = 0; v < nv; ++v)
      for (int l = 0; l < kW; ++l) s[v * kW + l] += static_cast<double>(acc[v][l]);
    for (int64_t j = wv; j < w; ++j) s[j] += static_cast<double>(accs[j - wv]);
  }
  for (int v = 0; v < nv; ++v)
    for (int l = 0; l < kW; ++l) {
      const double sj = s[v * kW + l];
      c[v][l] = log ? static_cast<float>(std::log(sj)) : static_cast<float>(1.0 / sj);
    }
  for (int64_t j = wv; j < w; ++j)
    cs[j - wv] = log ? static_cast<float>(std::log(s[j])) : static_cast<float>(1.0 / s[j]);
  for (int64_t k = 0; k < n; ++k) {
    const float* xr = x + k * inner;
    float* yr = y + k * inner;
    if (log) {
      for (int v = 0; v < nv; ++v) store(yr + v * kW, (load(xr + v * kW) - m[v]) - c[v]);
      for (int64_t j = wv; j < w; ++j) yr[j] = (xr[j] - ms[j - wv]) - cs[j - wv];
    } else {
      for (int v = 0; v < nv; ++v) store(yr + v * kW, load(yr + v * kW) * c[v]);
      for (int64_t j = wv; j < w; ++j) yr[j] *= cs[j - wv];
    }
  }
}

void bwd_cols_f32(const float* g, const float* y, float* o, int64_t n, int64_t inner, int64_t w,
                  bool log) {
  const int nv = static_cast<int>(w / kW);
  const int64_t wv = nv * kW;
  double s[kSoftmaxCols] = {};
  vi wd = vi{};
  bool bad = false;
  for (int64_t b = 0; b < n; b += kFlush / 16) {
    const int64_t e = std::min(n, b + kFlush / 16);
    vf acc[kColVecs];
    float accs[kW] = {};
    for (int v = 0; v < nv; ++v) acc[v] = vf{};
    for (int64_t k = b; k < e; ++k) {
      const float* gr = g + k * inner;
      const float* yr = y + k * inner;
      for (int v = 0; v < nv; ++v) {
        const vf gv = load(gr + v * kW), yv = load(yr + v * kW);
        acc[v] += log ? gv : gv * yv;
        wd |= vwide(gv, yv, log);
      }
      for (int64_t j = wv; j < w; ++j) {
        accs[j - wv] += log ? gr[j] : gr[j] * yr[j];
        bad = bad || wide(gr[j], yr[j], log);
      }
    }
    for (int v = 0; v < nv; ++v)
      for (int l = 0; l < kW; ++l) s[v * kW + l] += static_cast<double>(acc[v][l]);
    for (int64_t j = wv; j < w; ++j) s[j] += static_cast<double>(accs[j - wv]);
  }
  for (int l = 0; l < kW; ++l) bad = bad || wd[l] != 0;
  if (bad) {
    for (int64_t j = 0; j < w; ++j) bwd_exact(g + j, y + j, o + j, n, inner, log);
    return;
  }
  vf c[kColVecs];
  float cs[kSoftmaxCols];
  for (int v = 0; v < nv; ++v)
    for (int l = 0; l < kW; ++l) c[v][l] = static_cast<float>(s[v * kW + l]);
  for (int64_t j = wv; j < w; ++j) cs[j] = static_cast<float>(s[j]);
  for (int64_t k = 0; k < n; ++k) {
    const float* gr = g + k * inner;
    const float* yr = y + k * inner;
    float* orow = o + k * inner;
    if (log) {
      for (int v = 0; v < nv; ++v)
        store(orow + v * kW, load(gr + v * kW) - vexp(load(yr + v * kW)) * c[v]);
      for (int64_t j = wv; j < w; ++j) orow[j] = gr[j] - vm::exp(yr[j]) * cs[j];
    } else {
      for (int v = 0; v < nv; ++v)
        store(orow + v * kW, load(yr + v * kW) * (load(gr + v * kW) - c[v]));
      for (int64_t j = wv; j < w; ++j) orow[j] = yr[j] * (gr[j] - cs[j]);
    }
  }
}

// ---- f64: plain loops, the same steps --------------------------------------------------------

void fwd_last_f64(const double* x, double* y, int64_t rows, int64_t n, bool log) {
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

void fwd_cols_f64(const double* x, double* y, int64_t n, int64_t inner, int64_t w, bool log) {
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

void bwd_last_f64(const double* g, const double* y, double* o, int64_t rows, int64_t n, bool log) {
  for (int64_t r = 0; r < rows; ++r) bwd_exact(g + r * n, y + r * n, o + r * n, n, 1, log);
}

void bwd_cols_f64(const double* g, const double* y, double* o, int64_t n, int64_t inner, int64_t w,
                  bool log) {
  for (int64_t j = 0; j < w; ++j) bwd_exact(g + j, y + j, o + j, n, inner, log);
}

inline SoftmaxKernels make_kernels() {
  return SoftmaxKernels{{&fwd_last_f32, &fwd_cols_f32, &bwd_last_f32, &bwd_cols_f32},
                        {&fwd_last_f64, &fwd_cols_f64, &bwd_last_f64, &bwd_cols_f64}};
}
