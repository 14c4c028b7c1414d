// The elementwise loops, instantiated once per ISA translation unit. Included by
// pointwise_avx512.cpp, pointwise_avx2.cpp and pointwise_portable.cpp inside a namespace of
// their own, after <bit>, <cmath>, <cstdint>, <cstring>, <type_traits> and pointwise_kernels.h,
// with the unit's vector type for glibc's vector math: MvF, kMvW (its floats), mv_load, mv_store,
// and CRUCIBLE_MV1(f) / CRUCIBLE_MV2(f) naming the unary / binary vector variant of libm's f
// (declared by pointwise_mvec.h).
// Each functor is built from the op's parameters (hoisted out of the loop) and maps compute-type
// values; the loops are plain indexed loops the compiler vectorizes for the unit's ISA.
#include "backends/cpu/vec_math.h"

template <typename T>
inline T sel(bool c, T a, T b) {
  return c ? a : b;
}
template <typename T>
inline bool is_nan(T v) {
  return v != v;
}
// ATen's maximum/minimum propagate NaN.
template <typename T>
inline T nan_max(T a, T b) {
  return is_nan(a) ? a : (is_nan(b) ? b : (a > b ? a : b));
}
template <typename T>
inline T nan_min(T a, T b) {
  return is_nan(a) ? a : (is_nan(b) ? b : (a < b ? a : b));
}
template <typename T>
inline T gelu_erf(T x) {
  return x * vm::normal_cdf(x);
}
template <typename T>
inline T gelu_tanh(T x) {
  const T k = T(0.7978845608028654), c = T(0.044715);
  return T(0.5) * x * (T(1) + vm::tanh(k * (x + c * x * x * x)));
}
template <typename T>
inline T softplus(T x, T beta, T threshold) {
  return x * beta > threshold ? x : vm::log1p(vm::exp(x * beta)) / beta;
}

template <typename T>
inline T floor_div(T a, T b) {
  // ATen's div_floor_floating: Python's floor division, rounded like CPython.
  if (b == T(0)) return a / b;
  const T mod = std::fmod(a, b);
  T div = (a - mod) / b;
  if (mod != T(0) && (b < T(0)) != (mod < T(0))) div -= T(1);
  if (div == T(0)) return std::copysign(T(0), a / b);
  T fl = std::floor(div);
  if (div - fl > T(0.5)) fl += T(1);
  return fl;
}
template <typename T>
inline T remainder_floating(T a, T b) {
  // ATen's: fmod, moved to the divisor's sign.
  T mod = std::fmod(a, b);
  if (mod != T(0) && (b < T(0)) != (mod < T(0))) mod += b;
  return mod;
}
template <typename T>
inline T lerp(T a, T b, T w) {
  const T d = b - a;
  return (w < T(0.5) && w > T(-0.5)) || w != w ? a + w * d : b - d * (T(1) - w);
}
template <typename T>
inline T gelu_tanh_backward(T g, T x) {
  const T beta = T(0.7978845608028654), kappa = T(0.044715);
  const T x2 = x * x;
  const T t = vm::tanh(beta * (x + kappa * x2 * x));
  const T left = T(0.5) * x, right = T(1) + t;
  const T dright = left * (T(1) - t * t) * beta * (T(1) + T(3) * kappa * x2);
  return g * (T(0.5) * right + dright);
}
template <typename T>
inline T silu_backward(T g, T x) {
  const T s = vm::sigmoid(x);
  return g * s * (T(1) + x * (T(1) - s));
}
template <typename T>
inline T mish_backward(T g, T x) {
  const T t = vm::tanh(softplus(x, T(1), T(20)));
  return g * (t + x * vm::sigmoid(x) * (T(1) - t * t));
}

// min(max(a, lo), hi) as ATen's clamp, NaN in a propagated.
template <typename T>
inline T clamp_scalar(T a, T lo, T hi) {
  T t = a < lo ? lo : a;
  t = t > hi ? hi : t;
  return is_nan(a) ? a : (is_nan(lo) ? lo : (is_nan(hi) ? hi : t));
}

// std::min(std::max(v, 0), 6) exactly as ATen writes it (NaN propagates, -inf gives 0).
template <typename T>
inline T relu6_like(T v) {
  const T t = v < T(0) ? T(0) : v;
  return T(6) < t ? T(6) : t;
}

// min(max(v, 0), 6) / 6 as clamp(v / 6, 0, 1): the same value for every v (division by 6 is
// monotonic, 0 / 6 and 6 / 6 are exact, NaN propagates), with one unconditional division (the
// clamp-first form let GCC emit two masked divisions per vector).
template <typename T>
inline T hardsigmoid(T v) {
  const T q = v / T(6);
  const T t = q < T(0) ? T(0) : q;
  return T(1) < t ? T(1) : t;
}

// ---- unary ----
#define CRUCIBLE_UNARY(NAME, EXPR)                                      \
  template <typename T>                                                 \
  struct NAME {                                                         \
    T s0, s1, s2, s3;                                                   \
    explicit NAME(const PwParams& p)                                    \
        : s0(T(p.s[0])), s1(T(p.s[1])), s2(T(p.s[2])), s3(T(p.s[3])) {} \
    T operator()([[maybe_unused]] T a) const { return EXPR; }           \
  };
#define CRUCIBLE_BINARY(NAME, EXPR)                                     \
  template <typename T>                                                 \
  struct NAME {                                                         \
    T s0, s1, s2, s3;                                                   \
    explicit NAME(const PwParams& p)                                    \
        : s0(T(p.s[0])), s1(T(p.s[1])), s2(T(p.s[2])), s3(T(p.s[3])) {} \
    T operator()(T a, T b) const { return EXPR; }                       \
  };
#define CRUCIBLE_TERNARY(NAME, EXPR)                                    \
  template <typename T>                                                 \
  struct NAME {                                                         \
    T s0, s1, s2, s3;                                                   \
    explicit NAME(const PwParams& p)                                    \
        : s0(T(p.s[0])), s1(T(p.s[1])), s2(T(p.s[2])), s3(T(p.s[3])) {} \
    T operator()(T a, T b, T c) const { return EXPR; }                  \
  };

CRUCIBLE_UNARY(FIdentity, a)
CRUCIBLE_UNARY(FNeg, -a)
CRUCIBLE_UNARY(FAbs, sel(a < T(0), -a, a))
CRUCIBLE_UNARY(FRelu, sel(a > T(0) || is_nan(a), a, T(0)))
CRUCIBLE_UNARY(FExp, vm::exp(a))
CRUCIBLE_UNARY(FLog, vm::log(a))
CRUCIBLE_UNARY(FSqrt, std::sqrt(a))
CRUCIBLE_UNARY(FRsqrt, T(1) / std::sqrt(a))
CRUCIBLE_UNARY(FReciprocal, T(1) / a)
CRUCIBLE_UNARY(FSigmoid, vm::sigmoid(a))
CRUCIBLE_UNARY(FTanh, vm::tanh(a))
CRUCIBLE_UNARY(FErf, vm::erf(a))
CRUCIBLE_UNARY(FGelu, gelu_erf(a))
CRUCIBLE_UNARY(FGeluTanh, gelu_tanh(a))
CRUCIBLE_UNARY(FSilu, a* vm::sigmoid(a))
CRUCIBLE_UNARY(FMish, a* vm::tanh(softplus(a, T(1), T(20))))
CRUCIBLE_UNARY(FHardsigmoid, hardsigmoid(a + T(3)))
CRUCIBLE_UNARY(FHardswish, a* relu6_like(a + T(3)) / T(6))
CRUCIBLE_UNARY(FFloor, std::floor(a))
CRUCIBLE_UNARY(FCeil, std::ceil(a))
CRUCIBLE_UNARY(FTrunc, std::trunc(a))
CRUCIBLE_UNARY(FRound, std::nearbyint(a))
CRUCIBLE_UNARY(FIsNan, sel(is_nan(a), T(1), T(0)))
CRUCIBLE_UNARY(FIsInf, sel(a == T(INFINITY) || a == T(-INFINITY), T(1), T(0)))
CRUCIBLE_UNARY(FThreshold, sel(a <= s0, s1, a))
CRUCIBLE_UNARY(FHardtanh, clamp_scalar(a, s0, s1))
CRUCIBLE_UNARY(FLeakyRelu, sel(a > T(0), a, a* s0))
CRUCIBLE_UNARY(FElu, sel(a > T(0), a* s1, s0*(vm::exp(a* s2) - T(1)) * s1))
CRUCIBLE_UNARY(FSoftplus, softplus(a, s0, s1))
CRUCIBLE_UNARY(FPowScalar, std::pow(a, s0))
CRUCIBLE_UNARY(FSquare, a* a)
CRUCIBLE_UNARY(FCube, T(double(a) * double(a) * double(a)))
CRUCIBLE_UNARY(FPowHalf, sel(a == -INFINITY, T(INFINITY), std::sqrt(a)))
CRUCIBLE_UNARY(FPowMinusHalf, sel(a == -INFINITY, T(0), T(1) / std::sqrt(a)))
CRUCIBLE_UNARY(FFill, s0)
CRUCIBLE_UNARY(FSin, std::sin(a))
CRUCIBLE_UNARY(FCos, std::cos(a))
CRUCIBLE_UNARY(FTan, std::tan(a))
CRUCIBLE_UNARY(FAsin, vm::asin(a))
CRUCIBLE_UNARY(FAcos, vm::acos(a))
CRUCIBLE_UNARY(FAtan, std::atan(a))
CRUCIBLE_UNARY(FSinh, std::sinh(a))
CRUCIBLE_UNARY(FCosh, std::cosh(a))
CRUCIBLE_UNARY(FAsinh, std::asinh(a))
CRUCIBLE_UNARY(FAcosh, std::acosh(a))
CRUCIBLE_UNARY(FAtanh, std::atanh(a))
CRUCIBLE_UNARY(FExpm1, std::expm1(a))
CRUCIBLE_UNARY(FLog2, vm::log2(a))
CRUCIBLE_UNARY(FLog10, vm::log10(a))
CRUCIBLE_UNARY(FLog1p, vm::log1p(a))
CRUCIBLE_UNARY(FSign, T(a > T(0)) - T(a < T(0)))
CRUCIBLE_UNARY(FLogicalNot, sel(a == T(0), T(1), T(0)))
CRUCIBLE_UNARY(FRoundDecimals,
               sel(s1 != T(0), std::nearbyint(a / s0) * s0, std::nearbyint(a* s0) / s0))

// ---- binary ----
CRUCIBLE_BINARY(FAdd, a + s0 * b)
CRUCIBLE_BINARY(FMul, a* b)
CRUCIBLE_BINARY(FDiv, a / b)
CRUCIBLE_BINARY(FDivTrunc, std::trunc(a / b))
CRUCIBLE_BINARY(FDivFloor, floor_div(a, b))
CRUCIBLE_BINARY(FMaximum, nan_max(a, b))
CRUCIBLE_BINARY(FMinimum, nan_min(a, b))
CRUCIBLE_BINARY(FEq, sel(a == b, T(1), T(0)))
CRUCIBLE_BINARY(FNe, sel(a != b, T(1), T(0)))
CRUCIBLE_BINARY(FLt, sel(a < b, T(1), T(0)))
CRUCIBLE_BINARY(FLe, sel(a <= b, T(1), T(0)))
CRUCIBLE_BINARY(FGt, sel(a > b, T(1), T(0)))
CRUCIBLE_BINARY(FGe, sel(a >= b, T(1), T(0)))
CRUCIBLE_BINARY(FLogicalAnd, sel(a != T(0) && b != T(0), T(1), T(0)))
CRUCIBLE_BINARY(FLogicalOr, sel(a != T(0) || b != T(0), T(1), T(0)))
CRUCIBLE_BINARY(FLogicalXor, sel((a != T(0)) != (b != T(0)), T(1), T(0)))
CRUCIBLE_BINARY(FAtan2, std::atan2(a, b))
CRUCIBLE_BINARY(FPow, std::pow(a, b))
CRUCIBLE_BINARY(FFmod, std::fmod(a, b))
CRUCIBLE_BINARY(FRemainder, remainder_floating(a, b))
CRUCIBLE_BINARY(FThresholdBackward, sel(b <= s0, T(0), a))
CRUCIBLE_BINARY(FSigmoidBackward, a*(T(1) - b) * b)
CRUCIBLE_BINARY(FTanhBackward, a*(T(1) - b * b))
CRUCIBLE_BINARY(FGeluBackward, a* vm::gelu_derivative(b))
CRUCIBLE_BINARY(FGeluTanhBackward, gelu_tanh_backward(a, b))
CRUCIBLE_BINARY(FSiluBackward, silu_backward(a, b))
CRUCIBLE_BINARY(FMishBackward, mish_backward(a, b))
// ATen's formula: the gradient times 1/6 rounded to T (a product, not a division).
CRUCIBLE_BINARY(FHardsigmoidBackward, sel(b > T(-3) && b < T(3), a*(T(1) / T(6)), T(0)))
// A formula whose result is the first operand's value or zero, sel(c(b), f(a), 0), compiles to
// an AVX-512 zero-masked load of `a`, which cannot start before b's mask is known: from memory
// the two operands' cache misses come one after the other, never overlapped (hardsigmoid_backward
// of [128, 960] with cold caches took 43 us, ATen 29 us). GCC folds the load into the masked
// instruction however the select is written, so these functors are named here and their loop
// prefetches the next block of both operands (25 us).
template <typename F>
constexpr bool kMaskedLoad = false;
template <typename T>
constexpr bool kMaskedLoad<FThresholdBackward<T>> = true;
template <typename T>
constexpr bool kMaskedLoad<FHardsigmoidBackward<T>> = true;
CRUCIBLE_BINARY(FHardswishBackward, sel(b < T(-3), T(0), sel(b >= T(3), a, a*(b / T(3) + T(0.5)))))
CRUCIBLE_BINARY(FHardtanhBackward, sel(b <= s0 || b >= s1, T(0), a))
CRUCIBLE_BINARY(FLeakyReluBackward, sel(b > T(0), a, a* s0))
CRUCIBLE_BINARY(FEluBackward,
                sel(b > T(0), a* s1,
                    sel(s3 != T(0), a* s2*(b + s0 * s1), a*(s2* s0* s1* vm::exp(b* s2)))))
CRUCIBLE_BINARY(FSoftplusBackward,
                sel(b* s0 > s1, a, a*(vm::exp(b* s0) / (vm::exp(b * s0) + T(1)))))

// ---- ternary ----
CRUCIBLE_TERNARY(FWhere, sel(a != T(0), b, c))
CRUCIBLE_TERNARY(FLerp, lerp(a, b, c))
CRUCIBLE_TERNARY(FAddcmul, a + s0 * b * c)
CRUCIBLE_TERNARY(FAddcdiv, a + s0 * (b / c))
CRUCIBLE_TERNARY(FClamp, sel(is_nan(a), a, nan_min(nan_max(a, b), c)))

#include "backends/cpu/pointwise_loops_int.h"

// ---- loops ----
template <typename T, typename F>
void loop0(const T* const*, T* out, int64_t n, const PwParams& p) {
  const F f(p);
  for (int64_t i = 0; i < n; ++i) out[i] = f(T(0));
}
template <typename T, typename F>
void loop1(const T* const* in, T* out, int64_t n, const PwParams& p) {
  const F f(p);
  const T* __restrict a = in[0];
  for (int64_t i = 0; i < n; ++i) out[i] = f(a[i]);
}
template <typename T, typename F>
void loop2(const T* const* in, T* out, int64_t n, const PwParams& p) {
  const F f(p);
  const T* __restrict a = in[0];
  const T* __restrict b = in[1];
  if constexpr (kMaskedLoad<F>) {
    constexpr int64_t kBlock = 1024 / sizeof(T), kLine = 64 / sizeof(T);
    for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
      const int64_t i1 = std::min(n, i0 + kBlock);
      for (int64_t j = i1; j < std::min(n, i1 + kBlock); j += kLine) {
        __builtin_prefetch(a + j);
        __builtin_prefetch(b + j);
      }
      for (int64_t i = i0; i < i1; ++i) out[i] = f(a[i], b[i]);
    }
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]);
  }
}
template <typename T, typename F>
void loop2_b1(const T* const* in, T* out, int64_t n, const PwParams& p) {
  const F f(p);
  const T* __restrict a = in[0];
  const T b = in[1][0];
  for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b);
}
template <typename T, typename F>
void loop3(const T* const* in, T* out, int64_t n, const PwParams& p) {
  const F f(p);
  const T* __restrict a = in[0];
  const T* __restrict b = in[1];
  const T* __restrict c = in[2];
  for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b[i], c[i]);
}

template <typename T, typename F>
PwLoop<T> pick_loop(int arity) {
  if constexpr (requires(const F f, T a) { f(a, a, a); }) {
    return &loop3<T, F>;
  } else if constexpr (requires(const F f, T a) { f(a, a); }) {
    return &loop2<T, F>;
  } else {
    return arity == 0 ? &loop0<T, F> : &loop1<T, F>;
  }
}
template <typename T, template <typename> class F>
PwLoop<T> floop(int arity) {
  return pick_loop<T, F<T>>(arity);
}
template <typename T, template <typename> class F>
PwLoop<T> iloop(int arity) {
  return pick_loop<T, F<T>>(arity);
}

// Loops over glibc's vector math (libmvec, through libm): whole vectors of the unit's width,
// the tail padded with zeros, so that every element gets the same function.
template <MvF (*F)(MvF)>
void mv_loop1(const float* const* in, float* out, int64_t n, const PwParams&) {
  const float* a = in[0];
  int64_t i = 0;
  for (; i + kMvW <= n; i += kMvW) mv_store(out + i, F(mv_load(a + i)));
  if (i < n) {
    float ta[kMvW] = {}, to[kMvW];
    std::memcpy(ta, a + i, static_cast<size_t>(n - i) * sizeof(float));
    mv_store(to, F(mv_load(ta)));
    std::memcpy(out + i, to, static_cast<size_t>(n - i) * sizeof(float));
  }
}
template <MvF (*F)(MvF, MvF)>
void mv_loop2(const float* const* in, float* out, int64_t n, const PwParams&) {
  const float* a = in[0];
  const float* b = in[1];
  int64_t i = 0;
  for (; i + kMvW <= n; i += kMvW) mv_store(out + i, F(mv_load(a + i), mv_load(b + i)));
  if (i < n) {
    float ta[kMvW] = {}, tb[kMvW] = {}, to[kMvW];
    std::memcpy(ta, a + i, static_cast<size_t>(n - i) * sizeof(float));
    std::memcpy(tb, b + i, static_cast<size_t>(n - i) * sizeof(float));
    mv_store(to, F(mv_load(ta), mv_load(tb)));
    std::memcpy(out + i, to, static_cast<size_t>(n - i) * sizeof(float));
  }
}

// glibc's vector functions take a slow scalar path for every lane outside their domain (a NaN
// result); these loops hand them an inside value there and write the NaN (or +-inf) themselves.
struct DomAcosh {  // x >= 1
  static bool ok(float x) { return x >= 1.0f; }
  static float bad(float) { return __builtin_nanf(""); }
};
struct DomAtanh {  // |x| < 1; atanh(+-1) = +-inf
  static bool ok(float x) { return x > -1.0f && x < 1.0f; }
  static float bad(float x) {
    return x == 1.0f ? __builtin_inff() : (x == -1.0f ? -__builtin_inff() : __builtin_nanf(""));
  }
};
constexpr int64_t kMvChunk = 256;
template <MvF (*F)(MvF), typename D>
void mv_loop1d(const float* const* in, float* out, int64_t n, const PwParams& p) {
  for (int64_t c = 0; c < n; c += kMvChunk) {
    const int64_t m = n - c < kMvChunk ? n - c : kMvChunk;
    const float* a = in[0] + c;
    // The results of the outside lanes, computed before out (which may be in[0]) is written.
    float t[kMvChunk], fix[kMvChunk];
    bool any = false;
    for (int64_t i = 0; i < m; ++i) {
      const bool ok = D::ok(a[i]);
      t[i] = ok ? a[i] : 0.5f;
      fix[i] = ok ? 0.0f : D::bad(a[i]);
      any |= !ok;
    }
    const float* tp = t;
    if (!any) {
      mv_loop1<F>(&tp, out + c, m, p);
      continue;
    }
    bool outside[kMvChunk];
    for (int64_t i = 0; i < m; ++i) outside[i] = !D::ok(a[i]);
    mv_loop1<F>(&tp, out + c, m, p);
    for (int64_t i = 0; i < m; ++i) out[c + i] = outside[i] ? fix[i] : out[c + i];
  }
}

// pow(a, b) in f32: glibc's vector powf on |a| for the ordinary lanes (a finite and nonzero, b
// finite), the sign of a negative base from b (an odd integer keeps it, a non-integer gives NaN),
// libm's powf for the other lanes (zeros, infinities, NaN: C's special cases).
void mv_pow(const float* const* in, float* out, int64_t n, const PwParams& p) {
  for (int64_t c = 0; c < n; c += kMvChunk) {
    const int64_t m = n - c < kMvChunk ? n - c : kMvChunk;
    const float* a = in[0] + c;
    const float* b = in[1] + c;
    float ta[kMvChunk], tb[kMvChunk], sign[kMvChunk];
    bool special[kMvChunk];
    bool any = false;
    for (int64_t i = 0; i < m; ++i) {
      const float x = a[i], y = b[i];
      const float ax = x < 0.0f ? -x : x, ay = y < 0.0f ? -y : y;
      const bool ordinary = ax > 0.0f && ax < __builtin_inff() && ay < __builtin_inff();
      const bool integer = std::trunc(y) == y;
      // Integers beyond 2^24 are even.
      const bool odd = integer && ay < 16777216.0f && (static_cast<int32_t>(ay) & 1) != 0;
      ta[i] = ordinary ? ax : 1.0f;
      tb[i] = ordinary ? y : 1.0f;
      sign[i] = x >= 0.0f ? 1.0f : (!integer ? __builtin_nanf("") : (odd ? -1.0f : 1.0f));
      special[i] = !ordinary;
      any |= !ordinary;
    }
    // The special lanes' results, before out (which may be in[0]) is written.
    if (any)
      for (int64_t i = 0; i < m; ++i)
        if (special[i]) sign[i] = std::pow(a[i], b[i]);
    const float* tp[2] = {ta, tb};
    mv_loop2<CRUCIBLE_MV2(powf)>(tp, out + c, m, p);
    for (int64_t i = 0; i < m; ++i) out[c + i] = special[i] ? sign[i] : out[c + i] * sign[i];
  }
}

// fmod of f32 values, then (kMode) remainder: moved to the divisor's sign, or floor division:
// ATen's div_floor_floating from that fmod, both in f32 as ATen computes them. In
// f64 the truncated quotient q (|q| < 2^24) times b is exact, and so is a - q b (it fits in 53
// bits); a quotient that rounded up to an integer leaves the wrong sign, corrected by one b.
// Other lanes (huge quotients, zero or infinite divisors, infinities, NaN) take libm's fmodf.
enum FmodMode { kFmod, kRemainder, kDivFloor };
template <FmodMode kMode>
void fmod_loop(const float* const* in, float* out, int64_t n, const PwParams&) {
  for (int64_t c = 0; c < n; c += kMvChunk) {
    const int64_t m = n - c < kMvChunk ? n - c : kMvChunk;
    const float* a = in[0] + c;
    const float* b = in[1] + c;
    float r[kMvChunk], slow[kMvChunk];
    for (int64_t i = 0; i < m; ++i) {
      const double x = a[i], y = b[i];
      const double qd = x / y;
      const double ay = std::fabs(y), aq = std::fabs(qd);
      const double fast = (aq < 16777216.0) & (ay < __builtin_inf()) ? 1.0 : 0.0;
      // trunc(qd) without a conversion or libm call (which keep GCC from vectorizing): the
      // nearest integer of |qd| through 2^52, stepped down to its floor, signed back.
      double t = (aq + 4503599627370496.0) - 4503599627370496.0;
      t = t > aq ? t - 1.0 : t;
      double v = x - std::copysign(t, qd) * y;
      const double sx = std::copysign(1.0, x);
      v = v * sx < 0.0 ? v + sx * ay : v;  // the quotient rounded up: one b back
      v = v == 0.0 ? 0.0 * sx : v;         // a zero has the dividend's sign
      r[i] = static_cast<float>(v);
      slow[i] = fast != 0.0 ? 0.0f : 1.0f;
    }
    float any = 0.0f;
    for (int64_t i = 0; i < m; ++i) any += slow[i];
    if (any)
      for (int64_t i = 0; i < m; ++i)
        if (slow[i] != 0.0f) r[i] = std::fmod(a[i], b[i]);
    // (Sign tests multiply by +-1 and floor goes through 2^23: a libm call or a short-circuit
    // condition would keep these loops scalar.)
    if constexpr (kMode == kRemainder) {
      for (int64_t i = 0; i < m; ++i) {
        const float v = r[i];
        out[c + i] = v * std::copysign(1.0f, b[i]) < 0.0f ? v + b[i] : v;
      }
    } else if constexpr (kMode == kDivFloor) {
      for (int64_t i = 0; i < m; ++i) {
        const float x = a[i], y = b[i], mod = r[i];
        float div = (x - mod) / y;
        div = mod * std::copysign(1.0f, y) < 0.0f ? div - 1.0f : div;
        // floor(div): the nearest integer of |div| through 2^23 stepped down to its floor
        // (from 2^23 on, floats are integers), negated as -ceil for a negative div.
        const float ad = std::fabs(div);
        float t = (ad + 8388608.0f) - 8388608.0f;
        t = t > ad ? t - 1.0f : t;
        t = ad < 8388608.0f ? t : ad;
        const float up = t < ad ? t + 1.0f : t;
        float fl = div < 0.0f ? -up : t;
        fl = div - fl > 0.5f ? fl + 1.0f : fl;
        const float q = x / y;
        const float res = div != 0.0f ? fl : std::copysign(0.0f, q);
        out[c + i] = y == 0.0f ? q : res;
      }
    } else {
      for (int64_t i = 0; i < m; ++i) out[c + i] = r[i];
    }
  }
}

// ---- conversions ----
inline void bf16_to_f32(const uint16_t* __restrict in, float* __restrict out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = std::bit_cast<float>(static_cast<uint32_t>(in[i]) << 16);
}
inline void f32_to_bf16(const float* __restrict in, uint16_t* __restrict out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t u = std::bit_cast<uint32_t>(in[i]);
    const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;  // nearest, ties to even
    const bool nan = (u & 0x7fffffffu) > 0x7f800000u;
    out[i] = static_cast<uint16_t>(nan ? ((u >> 16) | 0x40u) : rounded);
  }
}

inline void f32_to_bool(const float* __restrict in, uint8_t* __restrict out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = in[i] != 0.0f ? 1 : 0;
}
inline void i64_to_bool(const int64_t* __restrict in, uint8_t* __restrict out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = in[i] != 0 ? 1 : 0;
}

PwKernels make_kernels() {
  PwKernels k{};
#define CRUCIBLE_F(OP, F)                                                  \
  k.f32[static_cast<int>(PwOp::OP)] = floop<float, F>(pw_arity(PwOp::OP)); \
  k.f64[static_cast<int>(PwOp::OP)] = floop<double, F>(pw_arity(PwOp::OP));
#define CRUCIBLE_I(OP, F)                                                    \
  k.i64[static_cast<int>(PwOp::OP)] = iloop<int64_t, F>(pw_arity(PwOp::OP)); \
  k.u8[static_cast<int>(PwOp::OP)] = iloop<uint8_t, F>(pw_arity(PwOp::OP));  \
  k.i8[static_cast<int>(PwOp::OP)] = iloop<int8_t, F>(pw_arity(PwOp::OP));
  CRUCIBLE_F(Identity, FIdentity)
  CRUCIBLE_F(Neg, FNeg)
  CRUCIBLE_F(Abs, FAbs)
  CRUCIBLE_F(Relu, FRelu)
  CRUCIBLE_F(Exp, FExp)
  CRUCIBLE_F(Log, FLog)
  CRUCIBLE_F(Sqrt, FSqrt)
  CRUCIBLE_F(Rsqrt, FRsqrt)
  CRUCIBLE_F(Reciprocal, FReciprocal)
  CRUCIBLE_F(Sigmoid, FSigmoid)
  CRUCIBLE_F(Tanh, FTanh)
  CRUCIBLE_F(Erf, FErf)
  CRUCIBLE_F(Gelu, FGelu)
  CRUCIBLE_F(GeluTanh, FGeluTanh)
  CRUCIBLE_F(Silu, FSilu)
  CRUCIBLE_F(Mish, FMish)
  CRUCIBLE_F(Hardsigmoid, FHardsigmoid)
  CRUCIBLE_F(Hardswish, FHardswish)
  CRUCIBLE_F(Floor, FFloor)
  CRUCIBLE_F(Ceil, FCeil)
  CRUCIBLE_F(Trunc, FTrunc)
  CRUCIBLE_F(Round, FRound)
  CRUCIBLE_F(IsNan, FIsNan)
  CRUCIBLE_F(IsInf, FIsInf)
  CRUCIBLE_F(Threshold, FThreshold)
  CRUCIBLE_F(Hardtanh, FHardtanh)
  CRUCIBLE_F(LeakyRelu, FLeakyRelu)
  CRUCIBLE_F(Elu, FElu)
  CRUCIBLE_F(Softplus, FSoftplus)
  CRUCIBLE_F(PowScalar, FPowScalar)
  CRUCIBLE_F(Square, FSquare)
  CRUCIBLE_F(Cube, FCube)
  CRUCIBLE_F(PowHalf, FPowHalf)
  CRUCIBLE_F(PowMinusHalf, FPowMinusHalf)
  CRUCIBLE_F(Fill, FFill)
  CRUCIBLE_F(Sin, FSin)
  CRUCIBLE_F(Cos, FCos)
  CRUCIBLE_F(Tan, FTan)
  CRUCIBLE_F(Asin, FAsin)
  CRUCIBLE_F(Acos, FAcos)
  CRUCIBLE_F(Atan, FAtan)
  CRUCIBLE_F(Sinh, FSinh)
  CRUCIBLE_F(Cosh, FCosh)
  CRUCIBLE_F(Asinh, FAsinh)
  CRUCIBLE_F(Acosh, FAcosh)
  CRUCIBLE_F(Atanh, FAtanh)
  CRUCIBLE_F(Expm1, FExpm1)
  CRUCIBLE_F(Log2, FLog2)
  CRUCIBLE_F(Log10, FLog10)
  CRUCIBLE_F(Log1p, FLog1p)
  CRUCIBLE_F(Sign, FSign)
  CRUCIBLE_F(LogicalNot, FLogicalNot)
  CRUCIBLE_F(RoundDecimals, FRoundDecimals)
  CRUCIBLE_F(Add, FAdd)
  CRUCIBLE_F(Mul, FMul)
  CRUCIBLE_F(Div, FDiv)
  CRUCIBLE_F(DivTrunc, FDivTrunc)
  CRUCIBLE_F(DivFloor, FDivFloor)
  CRUCIBLE_F(Maximum, FMaximum)
  CRUCIBLE_F(Minimum, FMinimum)
  CRUCIBLE_F(Eq, FEq)
  CRUCIBLE_F(Ne, FNe)
  CRUCIBLE_F(Lt, FLt)
  CRUCIBLE_F(Le, FLe)
  CRUCIBLE_F(Gt, FGt)
  CRUCIBLE_F(Ge, FGe)
  CRUCIBLE_F(LogicalAnd, FLogicalAnd)
  CRUCIBLE_F(LogicalOr, FLogicalOr)
  CRUCIBLE_F(LogicalXor, FLogicalXor)
  CRUCIBLE_F(Atan2, FAtan2)
  CRUCIBLE_F(Pow, FPow)
  CRUCIBLE_F(Fmod, FFmod)
  CRUCIBLE_F(Remainder, FRemainder)
  CRUCIBLE_F(ThresholdBackward, FThresholdBackward)
  CRUCIBLE_F(SigmoidBackward, FSigmoidBackward)
  CRUCIBLE_F(TanhBackward, FTanhBackward)
  CRUCIBLE_F(GeluBackward, FGeluBackward)
  CRUCIBLE_F(GeluTanhBackward, FGeluTanhBackward)
  CRUCIBLE_F(SiluBackward, FSiluBackward)
  CRUCIBLE_F(MishBackward, FMishBackward)
  CRUCIBLE_F(HardsigmoidBackward, FHardsigmoidBackward)
  CRUCIBLE_F(HardswishBackward, FHardswishBackward)
  CRUCIBLE_F(HardtanhBackward, FHardtanhBackward)
  CRUCIBLE_F(LeakyReluBackward, FLeakyReluBackward)
  CRUCIBLE_F(EluBackward, FEluBackward)
  CRUCIBLE_F(SoftplusBackward, FSoftplusBackward)
  CRUCIBLE_F(Where, FWhere)
  CRUCIBLE_F(Lerp, FLerp)
  CRUCIBLE_F(Addcmul, FAddcmul)
  CRUCIBLE_F(Addcdiv, FAddcdiv)
  CRUCIBLE_F(Clamp, FClamp)
  CRUCIBLE_I(Identity, IIdentity)
  CRUCIBLE_I(Neg, INeg)
  CRUCIBLE_I(Abs, IAbs)
  CRUCIBLE_I(Relu, IRelu)
  CRUCIBLE_I(Fill, IFill)
  CRUCIBLE_I(Threshold, IThreshold)
  CRUCIBLE_I(Hardtanh, IHardtanh)
  CRUCIBLE_I(Floor, IIdentity)
  CRUCIBLE_I(Ceil, IIdentity)
  CRUCIBLE_I(Trunc, IIdentity)
  CRUCIBLE_I(Round, IIdentity)
  CRUCIBLE_I(Square, ISquare)
  CRUCIBLE_I(Cube, ICube)
  CRUCIBLE_I(PowScalar, IPowScalar)
  CRUCIBLE_I(Sign, ISign)
  CRUCIBLE_I(LogicalNot, ILogicalNot)
  CRUCIBLE_I(BitNot, IBitNot)
  CRUCIBLE_I(Add, IAdd)
  CRUCIBLE_I(Mul, IMul)
  CRUCIBLE_I(DivTrunc, IDivTrunc)
  CRUCIBLE_I(DivFloor, IDivFloor)
  CRUCIBLE_I(Fmod, IFmod)
  CRUCIBLE_I(Remainder, IRemainder)
  CRUCIBLE_I(Pow, IPow)
  CRUCIBLE_I(Maximum, IMaximum)
  CRUCIBLE_I(Minimum, IMinimum)
  CRUCIBLE_I(Eq, IEq)
  CRUCIBLE_I(Ne, INe)
  CRUCIBLE_I(Lt, ILt)
  CRUCIBLE_I(Le, ILe)
  CRUCIBLE_I(Gt, IGt)
  CRUCIBLE_I(Ge, IGe)
  CRUCIBLE_I(BitAnd, IBitAnd)
  CRUCIBLE_I(BitOr, IBitOr)
  CRUCIBLE_I(BitXor, IBitXor)
  CRUCIBLE_I(LogicalAnd, ILogicalAnd)
  CRUCIBLE_I(LogicalOr, ILogicalOr)
  CRUCIBLE_I(LogicalXor, ILogicalXor)
  CRUCIBLE_I(ThresholdBackward, IThresholdBackward)
  CRUCIBLE_I(Where, IWhere)
  CRUCIBLE_I(Addcmul, IAddcmul)
  CRUCIBLE_I(Clamp, IClamp)
  CRUCIBLE_I(IsNan, IZero)
  CRUCIBLE_I(IsInf, IZero)
  // f32 transcendental functions: glibc's vector math at the unit's width.
  k.f32[static_cast<int>(PwOp::Sin)] = &mv_loop1<CRUCIBLE_MV1(sinf)>;
  k.f32[static_cast<int>(PwOp::Cos)] = &mv_loop1<CRUCIBLE_MV1(cosf)>;
  k.f32[static_cast<int>(PwOp::Tan)] = &mv_loop1<CRUCIBLE_MV1(tanf)>;
  k.f32[static_cast<int>(PwOp::Atan)] = &mv_loop1<CRUCIBLE_MV1(atanf)>;
  k.f32[static_cast<int>(PwOp::Sinh)] = &mv_loop1<CRUCIBLE_MV1(sinhf)>;
  k.f32[static_cast<int>(PwOp::Cosh)] = &mv_loop1<CRUCIBLE_MV1(coshf)>;
  k.f32[static_cast<int>(PwOp::Asinh)] = &mv_loop1<CRUCIBLE_MV1(asinhf)>;
  k.f32[static_cast<int>(PwOp::Acosh)] = &mv_loop1d<CRUCIBLE_MV1(acoshf), DomAcosh>;
  k.f32[static_cast<int>(PwOp::Atanh)] = &mv_loop1d<CRUCIBLE_MV1(atanhf), DomAtanh>;
  k.f32[static_cast<int>(PwOp::Expm1)] = &mv_loop1<CRUCIBLE_MV1(expm1f)>;
  k.f32[static_cast<int>(PwOp::Atan2)] = &mv_loop2<CRUCIBLE_MV2(atan2f)>;
  k.f32[static_cast<int>(PwOp::Pow)] = &mv_pow;
  k.f32[static_cast<int>(PwOp::Fmod)] = &fmod_loop<kFmod>;
  k.f32[static_cast<int>(PwOp::Remainder)] = &fmod_loop<kRemainder>;
  k.f32[static_cast<int>(PwOp::DivFloor)] = &fmod_loop<kDivFloor>;
#undef CRUCIBLE_F
#undef CRUCIBLE_I
  // Second input broadcast (f32_b1, f64_b1): the cheap binary ops a row times its column and a
  // tensor times a scalar come to, with the functors of their f32 and f64 loops above (so the
  // same value for every element either way).
#define CRUCIBLE_B1(OP, F)                                           \
  k.f32_b1[static_cast<int>(PwOp::OP)] = &loop2_b1<float, F<float>>; \
  k.f64_b1[static_cast<int>(PwOp::OP)] = &loop2_b1<double, F<double>>;
  CRUCIBLE_B1(Add, FAdd)
  CRUCIBLE_B1(Mul, FMul)
  CRUCIBLE_B1(Div, FDiv)
  CRUCIBLE_B1(Maximum, FMaximum)
  CRUCIBLE_B1(Minimum, FMinimum)
#undef CRUCIBLE_B1
  k.convert.bf16_to_f32 = &bf16_to_f32;
  k.convert.f32_to_bf16 = &f32_to_bf16;
  k.convert.f16_to_f32 = &f16_to_f32;
  k.convert.f32_to_f16 = &f32_to_f16;
  k.convert.f32_to_bool = &f32_to_bool;
  k.convert.i64_to_bool = &i64_to_bool;
  return k;
}
