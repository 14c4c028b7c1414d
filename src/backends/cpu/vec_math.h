// Branchless f32 math for the elementwise loops (exp, log, tanh, erf, ...), written so that the
// compiler vectorizes the loops that call them (selects instead of branches, bit casts for the
// exponent). Accuracy: a few ulp, within crucible's f32 tolerance (atol 1e-5, rtol 1.3e-6).
// NaN and ±inf behave as in libm. The f64 overloads call libm.
//
// Included once per ISA translation unit, inside that unit's own namespace (the same source is
// compiled with different -m flags; separate namespaces keep the copies apart). The includer
// provides <bit>, <cmath>, <cstdint>.
#pragma once

#if defined(__FMA__)
#define CRUCIBLE_FMAF(a, b, c) __builtin_fmaf((a), (b), (c))
#else
#define CRUCIBLE_FMAF(a, b, c) ((a) * (b) + (c))
#endif

namespace vm {

inline float bits_to_f(int32_t b) { return std::bit_cast<float>(b); }
inline int32_t f_to_bits(float f) { return std::bit_cast<int32_t>(f); }

// Round to nearest integer (|v| < 2^22) without a libm call.
inline float round_small(float v) {
  const float magic = 12582912.0f;  // 1.5 * 2^23
  return (v + magic) - magic;
}

// exp's range reduction: xc = k ln2 + r with k integral and |r| <= ln2/2, and e^r by Taylor to
// degree 7 (truncation < 1e-9 relative). xc must be finite and small enough for round_small.
inline float exp_reduced(float xc, float& k) {
  k = round_small(xc * 1.44269504088896341f);
  float r = CRUCIBLE_FMAF(k, -0.693145751953125f, xc);
  r = CRUCIBLE_FMAF(k, -1.428606765330187045e-06f, r);
  float p = 1.0f / 5040.0f;
  p = CRUCIBLE_FMAF(p, r, 1.0f / 720.0f);
  p = CRUCIBLE_FMAF(p, r, 1.0f / 120.0f);
  p = CRUCIBLE_FMAF(p, r, 1.0f / 24.0f);
  p = CRUCIBLE_FMAF(p, r, 1.0f / 6.0f);
  p = CRUCIBLE_FMAF(p, r, 0.5f);
  p = CRUCIBLE_FMAF(p, r, 1.0f);
  return CRUCIBLE_FMAF(p, r, 1.0f);
}

inline float exp(float x) {
  const bool nan = x != x;
  float xc = x < -104.0f ? -104.0f : x;
  xc = xc > 89.0f ? 89.0f : xc;
  xc = nan ? 0.0f : xc;
  float k;
  const float p = exp_reduced(xc, k);
  const int32_t ki = static_cast<int32_t>(k);
  const int32_t k1 = ki / 2, k2 = ki - k1;  // two factors keep each 2^k normal
  const float res = p * bits_to_f((k1 + 127) << 23) * bits_to_f((k2 + 127) << 23);
  return nan ? x : res;
}

// x = m * 2^e with m in [sqrt(1/2), sqrt(2)): e (as a float) and log(m), for x > 0 (subnormals
// included); other inputs give garbage that log_special replaces.
inline void log_parts(float x, float& ef, float& lm) {
  // log(m) = 2 atanh(f / (2 + f)), f = m - 1.
  const bool sub = x < 1.17549435e-38f;
  const float xs = sub ? x * 8388608.0f : x;  // subnormals: scale by 2^23
  int32_t bits = f_to_bits(xs);
  int32_t e = ((bits >> 23) & 0xff) - 127;
  float m = bits_to_f((bits & 0x007fffff) | 0x3f800000);  // [1, 2)
  const bool big = m > 1.41421356f;
  m = big ? m * 0.5f : m;
  e = big ? e + 1 : e;
  ef = static_cast<float>(e) - (sub ? 23.0f : 0.0f);
  const float f = m - 1.0f;
  const float s = f / (2.0f + f);
  const float z = s * s;
  float p = 2.0f / 13.0f;
  p = CRUCIBLE_FMAF(p, z, 2.0f / 11.0f);
  p = CRUCIBLE_FMAF(p, z, 2.0f / 9.0f);
  p = CRUCIBLE_FMAF(p, z, 2.0f / 7.0f);
  p = CRUCIBLE_FMAF(p, z, 2.0f / 5.0f);
  p = CRUCIBLE_FMAF(p, z, 2.0f / 3.0f);
  // log(m) = 2s + s*z*p = f - f*s + s*z*p  (f - f*s = 2s exactly in real arithmetic)
  lm = CRUCIBLE_FMAF(s * z, p, 2.0f * s);
}

// A logarithm's result for zero, negative, infinite and NaN x (res: the value for x > 0).
inline float log_special(float x, float res) {
  res = x == 0.0f ? -__builtin_inff() : res;
  res = x < 0.0f ? __builtin_nanf("") : res;
  res = x == __builtin_inff() ? x : res;
  return x != x ? x : res;
}

inline float log(float x) {
  float ef, lm;
  log_parts(x, ef, lm);
  return log_special(
      x, CRUCIBLE_FMAF(ef, 0.693145751953125f, CRUCIBLE_FMAF(ef, 1.428606765330187045e-06f, lm)));
}

// log2(x) = e + log(m) / ln 2: the integer part exact.
inline float log2(float x) {
  float ef, lm;
  log_parts(x, ef, lm);
  return log_special(x, CRUCIBLE_FMAF(lm, 1.44269504088896341f, ef));
}

// log10(x) = e log10(2) + log(m) log10(e), log10(2) split in two parts.
inline float log10(float x) {
  float ef, lm;
  log_parts(x, ef, lm);
  return log_special(
      x, CRUCIBLE_FMAF(ef, 0.301025390625f,
                       CRUCIBLE_FMAF(ef, 4.605039066518657e-06f, lm * 0.434294481903251828f)));
}

inline float log1p(float x) {
  // log(1 + x) with the rounding of 1 + x corrected: log1p(x) ~ log(u) + (x - (u - 1)) / u.
  const float u = 1.0f + x;
  const float corr = (x - (u - 1.0f)) / u;
  const float res = log(u) + corr;
  return (u == __builtin_inff() || u == 0.0f || u < 0.0f) ? log(u) : res;
}

// sqrt(z) for z in [0, 1] without libm (a vectorizable loop cannot call sqrtf, which may set
// errno): the bit-trick reciprocal square root refined by three Newton steps (about 1 ulp).
inline float sqrt_unit(float z) {
  // (in unsigned arithmetic: a lane of -0 or NaN, computed and then discarded, must not overflow)
  float y =
      bits_to_f(static_cast<int32_t>(0x5f3759dfu - (static_cast<uint32_t>(f_to_bits(z)) >> 1)));
  const float h = 0.5f * z;
  y = y * (1.5f - h * y * y);
  y = y * (1.5f - h * y * y);
  y = y * (1.5f - h * y * y);
  const float s = z * y;
  // One more Newton step on s itself: s + (z - s^2) / (2 s).
  const float r = CRUCIBLE_FMAF(CRUCIBLE_FMAF(-s, s, z), 0.5f * y, s);
  return z > 0.0f ? r : 0.0f;
}

// asin on [0, 0.5] (s) with z = s * s: Cephes' asinf polynomial (about 1 ulp).
inline float asin_core(float s, float z) {
  float p = 4.2163199048e-2f;
  p = CRUCIBLE_FMAF(p, z, 2.4181311049e-2f);
  p = CRUCIBLE_FMAF(p, z, 4.5470025998e-2f);
  p = CRUCIBLE_FMAF(p, z, 7.4953002686e-2f);
  p = CRUCIBLE_FMAF(p, z, 1.6666752422e-1f);
  return CRUCIBLE_FMAF(p * z, s, s);
}

// asin: |x| > 0.5 through asin(x) = pi/2 - 2 asin(sqrt((1 - |x|) / 2)); NaN outside [-1, 1].
inline float asin(float x) {
  const float ax = x < 0 ? -x : x;
  const bool big = ax > 0.5f;
  const float z = big ? 0.5f * (1.0f - ax) : ax * ax;
  const float s = big ? sqrt_unit(z) : ax;
  const float a = asin_core(s, z);
  float r = big ? 1.57079632679489662f - 2.0f * a : a;
  r = x < 0 ? -r : r;
  return ax > 1.0f ? __builtin_nanf("") : (x != x ? x : r);
}

// acos: 2 asin(sqrt((1 - x) / 2)) above 0.5, pi - that of -x below -0.5, else pi/2 - asin(x).
inline float acos(float x) {
  const float ax = x < 0 ? -x : x;
  const bool big = ax > 0.5f;
  const float z = big ? 0.5f * (1.0f - ax) : ax * ax;
  const float s = big ? sqrt_unit(z) : ax;
  const float a = asin_core(s, z);
  const float mid = 1.57079632679489662f - (x < 0 ? -a : a);
  const float hi = 2.0f * a;
  const float r = !big ? mid : (x > 0 ? hi : 3.14159265358979324f - hi);
  return ax > 1.0f ? __builtin_nanf("") : (x != x ? x : r);
}

inline float sigmoid(float x) { return 1.0f / (1.0f + exp(-x)); }

inline float tanh(float x) {
  // Small |x|: odd Taylor polynomial (|x| < 0.0625, error < 1e-10); else 1 - 2 / (e^2|x| + 1).
  const float ax = x < 0 ? -x : x;
  const float e = exp(2.0f * ax);
  float big = 1.0f - 2.0f / (e + 1.0f);
  const float z = x * x;
  float p = 17.0f / 315.0f;
  p = CRUCIBLE_FMAF(p, -z, 2.0f / 15.0f);
  p = CRUCIBLE_FMAF(p, -z, 1.0f / 3.0f);
  const float small = CRUCIBLE_FMAF(-x * z, p, x);
  big = x < 0 ? -big : big;
  const float res = ax < 0.0625f ? small : big;
  return x != x ? x : res;
}

// erfc(ax) for ax >= 0 (NaN propagates): Numerical Recipes' erfcc fit t * exp(-ax^2 + P(t)),
// t = 1 / (1 + ax/2), relative error < 1.2e-7 over the whole range (the tail included).
inline float erfc_nonneg(float ax) {
  const float t = 1.0f / CRUCIBLE_FMAF(0.5f, ax, 1.0f);
  float r = 0.17087277f;
  r = CRUCIBLE_FMAF(r, t, -0.82215223f);
  r = CRUCIBLE_FMAF(r, t, 1.48851587f);
  r = CRUCIBLE_FMAF(r, t, -1.13520398f);
  r = CRUCIBLE_FMAF(r, t, 0.27886807f);
  r = CRUCIBLE_FMAF(r, t, -0.18628806f);
  r = CRUCIBLE_FMAF(r, t, 0.09678418f);
  r = CRUCIBLE_FMAF(r, t, 0.37409196f);
  r = CRUCIBLE_FMAF(r, t, 1.00002368f);
  r = CRUCIBLE_FMAF(r, t, -1.26551223f);
  return t * exp(CRUCIBLE_FMAF(-ax, ax, r));
}

// exp(x) for x <= 0 (gelu's exp(-x^2 / 2)): exp_reduced, one power of two (k >= -126 keeps it
// normal) and no overflow side; below -87.3, where exp(x) is under the smallest normal float,
// 0. NaN gives NaN.
inline float exp_nonpositive(float x) {
  const float xc = x >= -87.3f ? x : -87.3f;  // NaN too: no conversion of NaN below
  float k;
  const float p = exp_reduced(xc, k);
  const float res = p * bits_to_f((static_cast<int32_t>(k) + 127) << 23);
  return x >= -87.3f ? res : (x != x ? x : 0.0f);
}

// erfc(z) / 2 for z >= 0, given e = exp(-z^2): Abramowitz and Stegun's 7.1.26, t P(t) e with
// t = 1 / (1 + 0.3275911 z), absolute error below 7.5e-8 (ATen's vectorized erf uses the same
// fit). Gelu and its derivative share it with the density's exp(-x^2 / 2).
inline float half_erfc_as(float z, float e) {
  const float t = 1.0f / CRUCIBLE_FMAF(0.3275911f, z, 1.0f);
  float p = 1.061405429f;
  p = CRUCIBLE_FMAF(p, t, -1.453152027f);
  p = CRUCIBLE_FMAF(p, t, 1.421413741f);
  p = CRUCIBLE_FMAF(p, t, -0.284496736f);
  p = CRUCIBLE_FMAF(p, t, 0.254829592f);
  return 0.5f * t * p * e;
}

// The standard normal CDF, Phi(x) = erfc(-x / sqrt(2)) / 2: absolute error below 7.5e-8, so
// gelu's x Phi(x) is within 1e-5 of the exact value for |x| < 130 (beyond, Phi is 0 or 1 in
// f32 either way). One exp, no second branch.
inline float normal_cdf(float x) {
  const float z = (x < 0 ? -x : x) * 0.70710678118654752f;
  const float h = half_erfc_as(z, exp_nonpositive(-z * z));
  return x < 0 ? h : 1.0f - h;
}

// Phi(x) + x phi(x), gelu's derivative: exp(-z^2) = exp(-x^2 / 2) is the density's, one exp for
// both terms.
inline float gelu_derivative(float x) {
  const float e = exp_nonpositive(-0.5f * x * x);
  const float z = (x < 0 ? -x : x) * 0.70710678118654752f;
  const float h = half_erfc_as(z, e);
  const float cdf = x < 0 ? h : 1.0f - h;
  return CRUCIBLE_FMAF(x * 0.3989422804014327f, e, cdf);
}

inline float erf(float x) {
  // |x| < 1: the Taylor series; else 1 - erfc(|x|) with Numerical Recipes' erfcc fit.
  const float ax = x < 0 ? -x : x;
  const float z = x * x;
  // Taylor series of erf to x^17 on |x| < 1: terms 2/sqrt(pi) * (-1)^n x^(2n+1) / (n! (2n+1)).
  float q = 1.0f / (362880.0f * 19.0f);
  q = CRUCIBLE_FMAF(q, -z, 1.0f / (40320.0f * 17.0f));
  q = CRUCIBLE_FMAF(q, -z, 1.0f / (5040.0f * 15.0f));
  q = CRUCIBLE_FMAF(q, -z, 1.0f / (720.0f * 13.0f));
  q = CRUCIBLE_FMAF(q, -z, 1.0f / (120.0f * 11.0f));
  q = CRUCIBLE_FMAF(q, -z, 1.0f / (24.0f * 9.0f));
  q = CRUCIBLE_FMAF(q, -z, 1.0f / (6.0f * 7.0f));
  q = CRUCIBLE_FMAF(q, -z, 1.0f / (2.0f * 5.0f));
  q = CRUCIBLE_FMAF(q, -z, 1.0f / 3.0f);
  q = CRUCIBLE_FMAF(q, -z, 1.0f);
  const float small = 1.1283791670955126f * x * q;
  // |x| >= 1: 1 - erfc(ax).
  float big = 1.0f - erfc_nonneg(ax);
  big = x < 0 ? -big : big;
  const float res = ax < 1.0f ? small : big;
  return x != x ? x : res;
}

inline double exp(double x) { return std::exp(x); }
inline double log(double x) { return std::log(x); }
inline double log1p(double x) { return std::log1p(x); }
inline double log2(double x) { return std::log2(x); }
inline double asin(double x) { return std::asin(x); }
inline double acos(double x) { return std::acos(x); }
inline double log10(double x) { return std::log10(x); }
inline double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
inline double tanh(double x) { return std::tanh(x); }
inline double erf(double x) { return std::erf(x); }
inline double normal_cdf(double x) { return 0.5 * std::erfc(-x * 0.70710678118654752440); }
inline double gelu_derivative(double x) {
  return normal_cdf(x) + x * 0.3989422804014327 * std::exp(-0.5 * x * x);
}

}  // namespace vm
