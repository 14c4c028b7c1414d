// The reduction and norm loops of reduction_kernels.h, instantiated once per ISA translation
// unit (reduction_avx512.cpp, reduction_avx2.cpp, reduction_portable.cpp), each including this
// file inside a namespace of its own after <algorithm>, <cstdint>, <cstring> and
// reduction_kernels.h, and after defining kVecBytes, the width of its registers in bytes (and
// <immintrin.h> with CRUCIBLE_RED_AVX512 or CRUCIBLE_RED_AVX2 defined for those ISAs).
// The loops use the vector types and lane helpers of reduction_lanes.h.

#include "backends/cpu/reduction_lanes.h"

constexpr int64_t kL1Block = 2048;   // elements of a run kept in L1 between two passes
constexpr int64_t kColBlock = 1024;  // columns of f64 accumulators kept in L1

// sum x[0..n); with kWild, *bad |= whether a value is wild.
template <typename T, bool kWild = false>
double sum_impl(const T* x, int64_t n, bool* bad = nullptr) {
  vd a0{}, a1{}, a2{}, a3{};
  vl w{};
  int64_t i = 0;
  for (; i + 2 * kP <= n; i += 2 * kP) {
    ahead_p(x + i);
    ahead_p(x + i + kP);
    vd l, h;
    to_d(x + i, l, h);
    a0 += l;
    a1 += h;
    if constexpr (kWild) w |= wild(l) | wild(h);
    to_d(x + i + kP, l, h);
    a2 += l;
    a3 += h;
    if constexpr (kWild) w |= wild(l) | wild(h);
  }
  if (i + kP <= n) {
    vd l, h;
    to_d(x + i, l, h);
    a0 += l;
    a1 += h;
    if constexpr (kWild) w |= wild(l) | wild(h);
    i += kP;
  }
  double s = hsum((a0 + a2) + (a1 + a3));
  bool tail = false;
  for (; i < n; ++i) {
    s += static_cast<double>(x[i]);
    if constexpr (kWild) tail |= wild1(x[i]);
  }
  if constexpr (kWild) *bad = *bad || tail || any_lane(w);
  return s;
}

template <typename T>
double k_sum(const T* x, int64_t n) {
  return sum_impl(x, n);
}

template <typename T>
double k_sum_abs(const T* x, int64_t n, double* abs) {
  vd a0{}, a1{}, b0{}, b1{};
  int64_t i = 0;
  for (; i + kP <= n; i += kP) {
    ahead_p(x + i);
    vd l, h;
    to_d(x + i, l, h);
    a0 += l;
    a1 += h;
    b0 += vabs(l);
    b1 += vabs(h);
  }
  double s = hsum(a0 + a1), t = hsum(b0 + b1);
  for (; i < n; ++i) {
    s += static_cast<double>(x[i]);
    t += std::abs(static_cast<double>(x[i]));
  }
  *abs = t;
  return s;
}

// Sums of rows x[rows][red] and for each a bound of its sum of |x|, one row at a time: whole
// lines loaded once (an f32 line's halves widened from the register), the row's last part
// through a masked load, and the lanes folded by halving. On rows of a few dozen elements the
// fixed costs of a row (the tail, the two folds) are what counts: a scalar tail and a
// lane-by-lane fold made a 7x7 mean half ATen's speed. The |x| of f32 rows are summed in f32
// lanes (half the work of f64 ones) and the result raised by its largest relative error,
// n * 2^-23 (at most red / kP + log2(kP) + 1 roundings of 2^-24); an overflow gives infinity,
// which no order check passes.
template <typename T>
void k_row_sums(const T* x, int64_t rows, int64_t red, double* sum, double* abs) {
  using A = typename Lanes<T>::V;  // the |x| lanes: vf for f32, vd for f64
  static_assert(sizeof(T) == 8 || Lanes<float>::kN == kP, "a vf holds the kP floats of to_d");
  const int64_t full = red / kP * kP;
  for (int64_t o = 0; o < rows; ++o) {
    const T* p = x + o * red;
    vd s0{}, s1{};
    A a{};
    for (int64_t i = 0; i < full; i += kP) {
      ahead_p(p + i);
      vd l, h;
      if constexpr (sizeof(T) == 4) {
        const vf v = load<vf>(p + i);
        split_d(v, l, h);
        a += vabs(v);
      } else {
        to_d(p + i, l, h);
        a += vabs(l) + vabs(h);
      }
      s0 += l;
      s1 += h;
    }
    const int64_t rest = red - full;
    if (rest > 0) {
      vd l, h;
      if constexpr (sizeof(T) == 4) {
        const vf v = load_head(p + full, rest);
        split_d(v, l, h);
        a += vabs(v);
      } else {
        l = rest >= kD ? load<vd>(p + full) : load_head(p + full, rest);
        h = rest > kD ? load_head(p + full + kD, rest - kD) : vd{};
        a += vabs(l) + vabs(h);
      }
      s0 += l;
      s1 += h;
    }
    sum[o] = hsum(s0 + s1);
    if constexpr (sizeof(T) == 4)
      abs[o] = static_cast<double>(hsum(a)) * (1 + static_cast<double>(red) * 0x1p-23);
    else
      abs[o] = hsum(a);
  }
}

// sum (x - m) and sum (x - m)^2 over x[0..n).
template <typename T>
void k_dev(const T* x, int64_t n, double m, double* s1, double* s2) {
  vd d0{}, d1{}, q0{}, q1{};
  int64_t i = 0;
  for (; i + kP <= n; i += kP) {
    vd l, h;
    to_d(x + i, l, h);
    l -= m;
    h -= m;
    d0 += l;
    d1 += h;
    q0 += l * l;
    q1 += h * h;
  }
  double a = hsum(d0 + d1), b = hsum(q0 + q1);
  for (; i < n; ++i) {
    const double d = static_cast<double>(x[i]) - m;
    a += d;
    b += d * d;
  }
  *s1 = a;
  *s2 = b;
}

template <typename T>
Moments k_moments(const T* x, int64_t n) {
  Moments total;
  for (int64_t b = 0; b < n; b += kL1Block) {
    const int64_t len = std::min(kL1Block, n - b);
    Moments blk;
    blk.n = static_cast<double>(len);
    blk.sum = sum_impl<T, true>(x + b, len, &blk.wild);
    double s1, s2;
    k_dev(x + b, len, blk.sum / blk.n, &s1, &s2);
    const double m2 = s2 - s1 * s1 / blk.n;  // the corrected two-pass formula
    blk.m2 = m2 < 0 ? 0.0 : m2;              // (NaN kept)
    total.merge(blk);
  }
  return total;
}

template <typename T, bool kW>
bool dot_sum_impl(const T* a, const T* w, const T* b, int64_t n, double m, double* dot,
                  double* sum) {
  vd d0{}, d1{}, s0{}, s1{};
  vl bad{};
  int64_t i = 0;
  for (; i + kP <= n; i += kP) {
    ahead_p(a + i);
    ahead_p(b + i);
    vd al, ah, bl, bh;
    to_d(a + i, al, ah);
    bad |= wild(al) | wild(ah);
    if constexpr (kW) {
      vd wl, wh;
      to_d(w + i, wl, wh);
      al *= wl;
      ah *= wh;
    }
    to_d(b + i, bl, bh);
    bad |= wild(bl) | wild(bh);
    d0 += al * (bl - m);
    d1 += ah * (bh - m);
    s0 += al;
    s1 += ah;
  }
  double d = hsum(d0 + d1), s = hsum(s0 + s1);
  bool tail = false;
  for (; i < n; ++i) {
    tail |= wild1(a[i]) || wild1(b[i]);
    double g = static_cast<double>(a[i]);
    if constexpr (kW) g *= static_cast<double>(w[i]);
    d += g * (static_cast<double>(b[i]) - m);
    s += g;
  }
  *dot = d;
  *sum = s;
  return tail || any_lane(bad);
}

template <typename T>
bool k_dot_sum(const T* a, const T* w, const T* b, int64_t n, double m, double* dot, double* sum) {
  return w ? dot_sum_impl<T, true>(a, w, b, n, m, dot, sum)
           : dot_sum_impl<T, false>(a, w, b, n, m, dot, sum);
}

// Stores of an elementwise output: with kNT, non-temporal (the output is large and not read
// again soon: no read-for-ownership of its lines) once y is 64-byte aligned.
template <bool kNT, typename V, typename T>
inline void put(T* y, const V& v) {
#if defined(CRUCIBLE_RED_AVX512)
  if constexpr (kNT && sizeof(T) == 4)
    return _mm512_stream_ps(reinterpret_cast<float*>(y), (__m512)v);
  if constexpr (kNT && sizeof(T) == 8)
    return _mm512_stream_pd(reinterpret_cast<double*>(y), (__m512d)v);
#elif defined(CRUCIBLE_RED_AVX2)
  if constexpr (kNT && sizeof(T) == 4)
    return _mm256_stream_ps(reinterpret_cast<float*>(y), (__m256)v);
  if constexpr (kNT && sizeof(T) == 8)
    return _mm256_stream_pd(reinterpret_cast<double*>(y), (__m256d)v);
#endif
  store(y, v);
}
// Elements to store one by one before y is 64-byte aligned (kNT), at most n.
template <bool kNT, typename T>
inline int64_t head(const T* y, int64_t n) {
  if constexpr (!kNT) return 0;
  constexpr auto kSize = static_cast<int64_t>(sizeof(T));
  const auto mis = static_cast<int64_t>(reinterpret_cast<uintptr_t>(y) & 63) / kSize;
  return std::min<int64_t>(n, mis == 0 ? 0 : 64 / kSize - mis);
}
// Orders the non-temporal stores before whatever the caller does next.
template <bool kNT>
inline void fence() {
#if defined(CRUCIBLE_RED_AVX512) || defined(CRUCIBLE_RED_AVX2)
  if constexpr (kNT) _mm_sfence();
#endif
}

template <typename T, bool kNT>
bool affine_impl(const T* x, T* y, int64_t n, T m, T r, T w, T c) {
  using V = typename Lanes<T>::V;
  using M = typename Lanes<T>::M;
  constexpr int kN = Lanes<T>::kN;
  M bad{};
  bool tail = false;
  int64_t i = 0;
  for (const int64_t h = head<kNT>(y, n); i < h; ++i) {
    tail |= wild1(x[i]);
    y[i] = (x[i] - m) * r * w + c;
  }
  for (; i + kN <= n; i += kN) {
    ahead(x + i);
    const V v = load<V>(x + i);
    bad |= wild(v);
    put<kNT>(y + i, (v - m) * r * w + c);
  }
  for (; i < n; ++i) {
    tail |= wild1(x[i]);
    y[i] = (x[i] - m) * r * w + c;
  }
  fence<kNT>();
  return tail || any_lane(bad);
}

template <typename T>
bool k_affine(const T* x, T* y, int64_t n, T m, T r, T w, T c, bool stream) {
  return stream ? affine_impl<T, true>(x, y, n, m, r, w, c)
                : affine_impl<T, false>(x, y, n, m, r, w, c);
}

template <typename T, bool kNT, bool kW, bool kB>
bool affine_wb_impl(const T* x, T* y, int64_t n, T m, T r, const T* w, const T* b) {
  using V = typename Lanes<T>::V;
  using M = typename Lanes<T>::M;
  constexpr int kN = Lanes<T>::kN;
  M bad{};
  bool tail = false;
  auto one = [&](int64_t i) {
    tail |= wild1(x[i]);
    T v = (x[i] - m) * r;
    if constexpr (kW) v *= w[i];
    if constexpr (kB) v += b[i];
    y[i] = v;
  };
  int64_t i = 0;
  for (const int64_t h = head<kNT>(y, n); i < h; ++i) one(i);
  for (; i + kN <= n; i += kN) {
    ahead(x + i);
    const V xv = load<V>(x + i);
    bad |= wild(xv);
    V v = (xv - m) * r;
    if constexpr (kW) v *= load<V>(w + i);
    if constexpr (kB) v += load<V>(b + i);
    put<kNT>(y + i, v);
  }
  for (; i < n; ++i) one(i);
  fence<kNT>();
  return tail || any_lane(bad);
}

template <typename T, bool kNT>
bool affine_wb_nt(const T* x, T* y, int64_t n, T m, T r, const T* w, const T* b) {
  if (w && b) return affine_wb_impl<T, kNT, true, true>(x, y, n, m, r, w, b);
  if (w) return affine_wb_impl<T, kNT, true, false>(x, y, n, m, r, w, b);
  if (b) return affine_wb_impl<T, kNT, false, true>(x, y, n, m, r, w, b);
  return affine_wb_impl<T, kNT, false, false>(x, y, n, m, r, w, b);
}

template <typename T>
bool k_affine_wb(const T* x, T* y, int64_t n, T m, T r, const T* w, const T* b, bool stream) {
  return stream ? affine_wb_nt<T, true>(x, y, n, m, r, w, b)
                : affine_wb_nt<T, false>(x, y, n, m, r, w, b);
}

template <typename T, bool kNT, bool kW>
bool backward_impl(const T* g, const T* w, const T* x, T* o, int64_t n, T a, T b, T m, T c) {
  using V = typename Lanes<T>::V;
  using M = typename Lanes<T>::M;
  constexpr int kN = Lanes<T>::kN;
  M bad{};
  bool tail = false;
  auto one = [&](int64_t i) {
    tail |= wild1(g[i]) || wild1(x[i]);
    T gv = g[i];
    if constexpr (kW) gv *= w[i];
    o[i] = a * gv + b * (x[i] - m) + c;
  };
  int64_t i = 0;
  for (const int64_t h = head<kNT>(o, n); i < h; ++i) one(i);
  for (; i + kN <= n; i += kN) {
    ahead(g + i);
    ahead(x + i);
    V gv = load<V>(g + i);
    const V xv = load<V>(x + i);
    bad |= wild(gv) | wild(xv);
    if constexpr (kW) gv *= load<V>(w + i);
    put<kNT>(o + i, a * gv + b * (xv - m) + c);
  }
  for (; i < n; ++i) one(i);
  fence<kNT>();
  return tail || any_lane(bad);
}

template <typename T>
bool k_backward(const T* g, const T* w, const T* x, T* o, int64_t n, T a, T b, T m, T c,
                bool stream) {
  if (stream)
    return w ? backward_impl<T, true, true>(g, w, x, o, n, a, b, m, c)
             : backward_impl<T, true, false>(g, w, x, o, n, a, b, m, c);
  return w ? backward_impl<T, false, true>(g, w, x, o, n, a, b, m, c)
           : backward_impl<T, false, false>(g, w, x, o, n, a, b, m, c);
}

template <typename T>
bool k_grad_params(const T* g, const T* x, int64_t n, double m, double r, double* ga, double* gb) {
  vl bad{};
  int64_t i = 0;
  for (; i + kP <= n; i += kP) {
    vd gl, gh, xl, xh;
    to_d(g + i, gl, gh);
    to_d(x + i, xl, xh);
    bad |= wild(gl) | wild(gh) | wild(xl) | wild(xh);
    store(ga + i, load<vd>(ga + i) + gl * ((xl - m) * r));
    store(ga + i + kD, load<vd>(ga + i + kD) + gh * ((xh - m) * r));
    store(gb + i, load<vd>(gb + i) + gl);
    store(gb + i + kD, load<vd>(gb + i + kD) + gh);
  }
  bool tail = false;
  for (; i < n; ++i) {
    tail |= wild1(g[i]) || wild1(x[i]);
    const double gv = static_cast<double>(g[i]);
    ga[i] += gv * ((static_cast<double>(x[i]) - m) * r);
    gb[i] += gv;
  }
  return tail || any_lane(bad);
}

// Rows are taken eight at a time: each kP-column slice of the accumulators is loaded once,
// the eight rows' values added to it in row order (the reference's order) and stored once, so
// the accumulators cost little cache traffic however many columns there are, and the reads
// are eight sequential streams.
template <typename T, bool kAbs>
void col_sum_impl(const T* x, int64_t rows, int64_t ld, int64_t n, double* acc, double* abs) {
  constexpr int kR = 8;
  int64_t r = 0;
  for (; r + kR <= rows; r += kR) {
    const T* row = x + r * ld;
    int64_t j = 0;
    for (; j + kP <= n; j += kP) {
      vd s0 = load<vd>(acc + j), s1 = load<vd>(acc + j + kD), a0{}, a1{};
      if constexpr (kAbs) {
        a0 = load<vd>(abs + j);
        a1 = load<vd>(abs + j + kD);
      }
      for (int k = 0; k < kR; ++k) {
        ahead_p(row + k * ld + j);
        vd l, h;
        to_d(row + k * ld + j, l, h);
        s0 += l;
        s1 += h;
        if constexpr (kAbs) {
          a0 += vabs(l);
          a1 += vabs(h);
        }
      }
      store(acc + j, s0);
      store(acc + j + kD, s1);
      if constexpr (kAbs) {
        store(abs + j, a0);
        store(abs + j + kD, a1);
      }
    }
    for (; j < n; ++j)
      for (int k = 0; k < kR; ++k) {
        acc[j] += static_cast<double>(row[k * ld + j]);
        if constexpr (kAbs) abs[j] += std::abs(static_cast<double>(row[k * ld + j]));
      }
  }
  for (; r < rows; ++r) {
    const T* row = x + r * ld;
    for (int64_t j = 0; j < n; ++j) {
      acc[j] += static_cast<double>(row[j]);
      if constexpr (kAbs) abs[j] += std::abs(static_cast<double>(row[j]));
    }
  }
}

template <typename T>
void k_col_sum(const T* x, int64_t rows, int64_t ld, int64_t n, double* acc, double* abs) {
  abs ? col_sum_impl<T, true>(x, rows, ld, n, acc, abs)
      : col_sum_impl<T, false>(x, rows, ld, n, acc, abs);
}

template <typename T>
void k_col_moments(const T* x, int64_t rows, int64_t ld, int64_t n, const double* mean, double* s1,
                   double* s2) {
  for (int64_t j0 = 0; j0 < n; j0 += kColBlock) {
    const int64_t jn = std::min(kColBlock, n - j0);
    for (int64_t r = 0; r < rows; ++r) {
      const T* row = x + r * ld + j0;
      int64_t j = 0;
      for (; j + kP <= jn; j += kP) {
        vd l, h;
        to_d(row + j, l, h);
        l -= load<vd>(mean + j0 + j);
        h -= load<vd>(mean + j0 + j + kD);
        store(s1 + j0 + j, load<vd>(s1 + j0 + j) + l);
        store(s1 + j0 + j + kD, load<vd>(s1 + j0 + j + kD) + h);
        store(s2 + j0 + j, load<vd>(s2 + j0 + j) + l * l);
        store(s2 + j0 + j + kD, load<vd>(s2 + j0 + j + kD) + h * h);
      }
      for (; j < jn; ++j) {
        const double d = static_cast<double>(row[j]) - mean[j0 + j];
        s1[j0 + j] += d;
        s2[j0 + j] += d * d;
      }
    }
  }
}

// Whether v is better than the current best b (strictly: the first occurrence wins).
template <bool kMax, typename T>
inline bool better(T v, T b) {
  return kMax ? v > b : v < b;
}

template <typename T, bool kMax>
T row_extreme_impl(const T* x, int64_t n) {
  using V = typename Lanes<T>::V;
  using M = typename Lanes<T>::M;
  constexpr int kN = Lanes<T>::kN;
  int64_t i = 0;
  T best = x[0];
  bool nan = false;
  if (n >= 2 * kN) {
    V b0 = load<V>(x), b1 = load<V>(x + kN);
    M bad = (b0 != b0) | (b1 != b1);
    for (i = 2 * kN; i + 2 * kN <= n; i += 2 * kN) {
      ahead(x + i);
      ahead(x + i + kN);
      const V v0 = load<V>(x + i), v1 = load<V>(x + i + kN);
      if constexpr (kMax) {
        b0 = v0 > b0 ? v0 : b0;
        b1 = v1 > b1 ? v1 : b1;
      } else {
        b0 = v0 < b0 ? v0 : b0;
        b1 = v1 < b1 ? v1 : b1;
      }
      bad |= (v0 != v0) | (v1 != v1);
    }
    nan = any_lane(bad);
    best = b0[0];
    for (int k = 0; k < kN; ++k) {
      if (better<kMax>(b0[k], best)) best = b0[k];
      if (better<kMax>(b1[k], best)) best = b1[k];
    }
  }
  for (; i < n; ++i) {
    nan |= x[i] != x[i];
    if (better<kMax>(x[i], best)) best = x[i];
  }
  return nan ? std::numeric_limits<T>::quiet_NaN() : best;
}

template <typename T>
T k_row_extreme(const T* x, int64_t n, bool want_max) {
  return want_max ? row_extreme_impl<T, true>(x, n) : row_extreme_impl<T, false>(x, n);
}

template <typename T, bool kMax>
int64_t row_arg_impl(const T* x, int64_t n) {
  using V = typename Lanes<T>::V;
  using M = typename Lanes<T>::M;
  using I = typename Lanes<T>::I;
  constexpr int kN = Lanes<T>::kN;
  int64_t i = 0, best_i = 0;
  T best = x[0];
  bool nan = x[0] != x[0];
  if (n >= 2 * kN && n < (int64_t{1} << 30)) {
    V bv = load<V>(x);
    M bi, cur;
    for (int k = 0; k < kN; ++k) bi[k] = static_cast<I>(k);
    cur = bi;
    M bad = bv != bv;
    for (i = kN; i + kN <= n; i += kN) {
      ahead(x + i);
      cur += kN;
      const V v = load<V>(x + i);
      const M take = kMax ? v > bv : v < bv;
      bv = take ? v : bv;
      bi = take ? cur : bi;
      bad |= v != v;
    }
    nan = any_lane(bad);
    best = bv[0];
    best_i = bi[0];
    for (int k = 1; k < kN; ++k) {
      if (better<kMax>(bv[k], best) || (bv[k] == best && bi[k] < best_i)) {
        best = bv[k];
        best_i = bi[k];
      }
    }
  } else {
    i = 1;
  }
  if (!nan) {
    for (; i < n; ++i) {
      if (x[i] != x[i]) {
        nan = true;
        break;
      }
      if (better<kMax>(x[i], best)) {
        best = x[i];
        best_i = i;
      }
    }
  }
  if (nan) {
    for (int64_t k = 0; k < n; ++k)
      if (x[k] != x[k]) return k;
  }
  return best_i;
}

template <typename T>
int64_t k_row_arg(const T* x, int64_t n, bool want_max) {
  return want_max ? row_arg_impl<T, true>(x, n) : row_arg_impl<T, false>(x, n);
}

template <typename T, bool kMax, bool kIdx>
void col_pick_impl(const T* x, int64_t rows, int64_t ld, int64_t n, T* best, int64_t* idx) {
  using V = typename Lanes<T>::V;
  using M = typename Lanes<T>::M;
  using I = typename Lanes<T>::I;
  constexpr int kN = Lanes<T>::kN;
  constexpr int64_t kB = 256;
  alignas(64) I bi[kB];
  for (int64_t j0 = 0; j0 < n; j0 += kB) {
    const int64_t jn = std::min(kB, n - j0);
    T* bv = best + j0;
    for (int64_t j = 0; j < jn; ++j) {
      bv[j] = x[j0 + j];
      bi[j] = 0;
    }
    for (int64_t r = 1; r < rows; ++r) {
      const T* row = x + r * ld + j0;
      const M rv = M{} + static_cast<I>(r);
      int64_t j = 0;
      for (; j + kN <= jn; j += kN) {
        const V v = load<V>(row + j), b = load<V>(bv + j);
        const M take = (kMax ? v > b : v < b) | ((v != v) & (b == b));
        store(bv + j, take ? v : b);
        if constexpr (kIdx) store(bi + j, take ? rv : load<M>(bi + j));
      }
      for (; j < jn; ++j) {
        const T v = row[j], b = bv[j];
        if (better<kMax>(v, b) || (v != v && b == b)) {
          bv[j] = v;
          bi[j] = static_cast<I>(r);
        }
      }
    }
    if constexpr (kIdx)
      for (int64_t j = 0; j < jn; ++j) idx[j0 + j] = bi[j];
  }
}

template <typename T>
void k_col_pick(const T* x, int64_t rows, int64_t ld, int64_t n, bool want_max, T* best,
                int64_t* idx) {
  if (rows >= (int64_t{1} << 30)) {  // row numbers beyond the lane index type: scalar
    for (int64_t j = 0; j < n; ++j) {
      T b = x[j];
      int64_t bi = 0;
      for (int64_t r = 1; r < rows; ++r) {
        const T v = x[r * ld + j];
        if ((want_max ? v > b : v < b) || (v != v && b == b)) {
          b = v;
          bi = r;
        }
      }
      best[j] = b;
      if (idx) idx[j] = bi;
    }
    return;
  }
  if (want_max)
    idx ? col_pick_impl<T, true, true>(x, rows, ld, n, best, idx)
        : col_pick_impl<T, true, false>(x, rows, ld, n, best, idx);
  else
    idx ? col_pick_impl<T, false, true>(x, rows, ld, n, best, idx)
        : col_pick_impl<T, false, false>(x, rows, ld, n, best, idx);
}

template <typename T>
double k_prod(const T* x, int64_t n, bool* is_wild) {
  vd p0 = vd{} + 1.0, p1 = p0, p2 = p0, p3 = p0;
  vl bad{};
  int64_t i = 0;
  for (; i + 2 * kP <= n; i += 2 * kP) {
    ahead_p(x + i);
    ahead_p(x + i + kP);
    vd l, h;
    to_d(x + i, l, h);
    bad |= wild(l) | wild(h);
    p0 *= l;
    p1 *= h;
    to_d(x + i + kP, l, h);
    bad |= wild(l) | wild(h);
    p2 *= l;
    p3 *= h;
  }
  double s = hprod((p0 * p2) * (p1 * p3));
  bool tail = false;
  for (; i < n; ++i) {
    tail |= wild1(x[i]);
    s *= static_cast<double>(x[i]);
  }
  *is_wild = *is_wild || tail || any_lane(bad);
  return s;
}

// any (kAny) / all over x[0..n) in blocks, stopping at the first block that decides.
template <typename T, bool kAny>
bool anyall_impl(const T* x, int64_t n) {
  using V = typename Lanes<T>::V;
  using M = typename Lanes<T>::M;
  constexpr int kN = Lanes<T>::kN;
  int64_t i = 0;
  while (i + kN <= n) {
    const int64_t end = std::min(n, i + 4096);
    M hit{};
    for (; i + kN <= end; i += kN) {
      ahead(x + i);
      const V v = load<V>(x + i);
      hit |= kAny ? v != 0 : v == 0;
    }
    if (any_lane(hit)) return kAny;
  }
  for (; i < n; ++i)
    if (kAny ? x[i] != 0 : x[i] == 0) return kAny;
  return !kAny;
}

template <typename T>
bool k_any(const T* x, int64_t n) {
  return anyall_impl<T, true>(x, n);
}
template <typename T>
bool k_all(const T* x, int64_t n) {
  return anyall_impl<T, false>(x, n);
}

template <typename T, bool kAny>
void col_anyall_impl(const T* x, int64_t rows, int64_t ld, int64_t n, uint8_t* acc) {
  using V = typename Lanes<T>::V;
  using M = typename Lanes<T>::M;
  constexpr int kN = Lanes<T>::kN;
  constexpr int64_t kB = 1024;  // columns whose lane masks stay in L1
  alignas(64) M hit[kB / kN];
  for (int64_t j0 = 0; j0 < n; j0 += kB) {
    const int64_t jn = std::min(kB, n - j0), nv = jn / kN;
    for (int64_t v = 0; v < nv; ++v) hit[v] = M{};
    for (int64_t r = 0; r < rows; ++r) {
      const T* row = x + r * ld + j0;
      for (int64_t v = 0; v < nv; ++v) {
        const V xv = load<V>(row + v * kN);
        hit[v] |= kAny ? xv != 0 : xv == 0;
      }
    }
    for (int64_t v = 0; v < nv; ++v)
      for (int k = 0; k < kN; ++k) {
        uint8_t& a = acc[j0 + v * kN + k];
        a = kAny ? static_cast<uint8_t>(a | (hit[v][k] != 0))
                 : static_cast<uint8_t>(a & (hit[v][k] == 0));
      }
    for (int64_t j = nv * kN; j < jn; ++j) {
      uint8_t& a = acc[j0 + j];
      for (int64_t r = 0; r < rows; ++r) {
        const bool nz = x[r * ld + j0 + j] != 0;
        a = kAny ? static_cast<uint8_t>(a | nz) : static_cast<uint8_t>(a & nz);
      }
    }
  }
}

template <typename T>
void k_col_anyall(const T* x, int64_t rows, int64_t ld, int64_t n, bool any, uint8_t* acc) {
  any ? col_anyall_impl<T, true>(x, rows, ld, n, acc)
      : col_anyall_impl<T, false>(x, rows, ld, n, acc);
}

bool k_any_byte(const uint8_t* x, int64_t n) {
  for (int64_t i = 0; i < n; i += 4096) {
    const int64_t end = std::min(n, i + 4096);
    uint8_t acc = 0;
    for (int64_t k = i; k < end; ++k) acc |= x[k];
    if (acc) return true;
  }
  return false;
}

bool k_all_byte(const uint8_t* x, int64_t n) {
  for (int64_t i = 0; i < n; i += 4096) {
    const int64_t end = std::min(n, i + 4096);
    uint8_t zero = 0;
    for (int64_t k = i; k < end; ++k) zero |= static_cast<uint8_t>(x[k] == 0);
    if (zero) return false;
  }
  return true;
}

void k_col_anyall_byte(const uint8_t* x, int64_t rows, int64_t ld, int64_t n, bool any,
                       uint8_t* acc) {
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* row = x + r * ld;
    if (any)
      for (int64_t j = 0; j < n; ++j) acc[j] |= static_cast<uint8_t>(row[j] != 0);
    else
      for (int64_t j = 0; j < n; ++j) acc[j] &= static_cast<uint8_t>(row[j] != 0);
  }
}

template <typename T>
StatLoops<T> make_stat_loops() {
  StatLoops<T> s;
  s.sum = &k_sum<T>;
  s.sum_abs = &k_sum_abs<T>;
  s.row_sums = &k_row_sums<T>;
  s.lanes = kP;
  s.moments = &k_moments<T>;
  s.dot_sum = &k_dot_sum<T>;
  s.affine = &k_affine<T>;
  s.affine_wb = &k_affine_wb<T>;
  s.backward = &k_backward<T>;
  s.grad_params = &k_grad_params<T>;
  s.col_sum = &k_col_sum<T>;
  s.col_moments = &k_col_moments<T>;
  s.row_extreme = &k_row_extreme<T>;
  s.row_arg = &k_row_arg<T>;
  s.col_pick = &k_col_pick<T>;
  s.prod = &k_prod<T>;
  s.any_nonzero = &k_any<T>;
  s.all_nonzero = &k_all<T>;
  s.col_anyall = &k_col_anyall<T>;
  return s;
}

RedKernels make_red_kernels() {
  RedKernels k;
  k.f32 = make_stat_loops<float>();
  k.f64 = make_stat_loops<double>();
  k.any_byte = &k_any_byte;
  k.all_byte = &k_all_byte;
  k.col_anyall_byte = &k_col_anyall_byte;
  return k;
}
