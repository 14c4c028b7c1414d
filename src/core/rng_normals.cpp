// Standard normals a batch of Philox blocks at a time, rounded to f32, f16 or bf16: the bytes
// Rng::normal() stored one at a time gives, at a fraction of the cost (the C library's log and
// sincos took three quarters of materialising a large tensor).
//
// The pairs are approximated in vectorisable loops (one clone per ISA): the Philox blocks as
// Rng draws them, log and sin/cos as polynomials, sqrt by Newton's iteration, each within 1e-15
// relative (plus 1e-16 absolute for sin and cos) of the true value. normal()'s double is the C
// library's, within a few units in the last place of the true value; so the two lie within
// e = 2^-40 (|v| + 1) of each other, more than a hundred times the sum of both errors (a thousand
// times what 10^8 pairs show). Where every double within e of the approximation rounds to the
// same value of the dtype (rounding is monotone: the two ends rounding alike is enough), that
// value is normal()'s rounded; where not (about one f32 value in ten thousand, f16 or bf16
// values below the smallest normal), the pair is computed again by normal()'s own Box-Muller.
#pragma GCC optimize("O3")

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <numbers>

#include "core/rng_internal.h"
#include "crucible/core/error.h"
#include "crucible/core/tensor.h"

namespace crucible::rng_detail {

namespace {

constexpr size_t kBatch = 256;  // pairs a batch

// The pairs of a batch: the uniforms (for the pairs computed again) and the approximations.
struct Batch {
  alignas(64) double u1[kBatch];
  alignas(64) double u2[kBatch];
  alignas(64) double c[kBatch];
  alignas(64) double s[kBatch];
  alignas(64) uint8_t redo[kBatch];
};

// Philox4x32-10 of blocks first .. first + n - 1, their uniforms as normal() draws them (u1 from
// words 0-1, u2 from words 2-3), and r cos(theta), r sin(theta) approximated.
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) void approximate(
    uint32_t k0, uint32_t k1, uint64_t stream, uint64_t first, size_t n, Batch& b) {
  const auto s0 = static_cast<uint32_t>(stream), s1 = static_cast<uint32_t>(stream >> 32);
  for (size_t j = 0; j < n; ++j) {
    const uint64_t block = first + j;
    uint32_t x0 = static_cast<uint32_t>(block), x1 = static_cast<uint32_t>(block >> 32), x2 = s0,
             x3 = s1;
    philox_rounds(x0, x1, x2, x3, k0, k1);
    const double u1 = 1.0 - unit53((uint64_t{x1} << 32) | x0);  // (0, 1]
    const double u2 = unit53((uint64_t{x3} << 32) | x2);        // [0, 1)
    b.u1[j] = u1;
    b.u2[j] = u2;

    // log(u1) = k log 2 + log m, m in [sqrt(1/2), sqrt(2)); log m = 2 atanh(f / (2 + f)),
    // f = m - 1, by its series to the term of degree 21 (the next is below 1e-18 relative).
    const uint64_t ix = std::bit_cast<uint64_t>(u1);
    const int64_t k = static_cast<int64_t>(ix - 0x3fe6a09e667f3bcdull) >> 52;
    const double m = std::bit_cast<double>(ix - (static_cast<uint64_t>(k) << 52));
    const double f = m - 1.0;
    const double t = f / (2.0 + f);
    const double z = t * t;
    const double series =
        1.0 +
        z * (1.0 / 3 +
             z * (1.0 / 5 +
                  z * (1.0 / 7 +
                       z * (1.0 / 9 +
                            z * (1.0 / 11 +
                                 z * (1.0 / 13 +
                                      z * (1.0 / 15 +
                                           z * (1.0 / 17 + z * (1.0 / 19 + z * (1.0 / 21))))))))));
    const auto kd = static_cast<double>(k);
    const double log_u1 = kd * 6.93147180369123816490e-01 +  // log 2's first 32 bits: exact
                          (kd * 1.90821492927058770002e-10 + 2.0 * t * series);
    // sqrt by Newton's iteration from the exponent halved (6% off at most: four steps take it
    // to the rounding error; a call of sqrt would keep the loop from being vectorised).
    const double y = -2.0 * log_u1;
    double r = std::bit_cast<double>((std::bit_cast<uint64_t>(y) >> 1) + 0x1ff8000000000000ull);
    for (int step = 0; step < 4; ++step) r = 0.5 * (r + y / r);

    // theta exactly as normal() computes it; sin and cos of theta - q pi/2 (|x| <= pi/4 + 1e-16,
    // pi/2 in two parts: the first 33 bits, exact times q <= 4, and the rest) by their Taylor
    // series to degrees 17 and 16.
    const double theta = 2.0 * std::numbers::pi * u2;
    const double qf = (theta * (2.0 / std::numbers::pi) + 0x1.8p52) - 0x1.8p52;
    double x = theta - qf * 1.57079632673412561417e+00;
    x = x - qf * 6.07710050650619224932e-11;
    const double xx = x * x;
    const double sin_x =
        x +
        x * xx *
            (-1.0 / 6 +
             xx * (1.0 / 120 +
                   xx * (-1.0 / 5040 +
                         xx * (1.0 / 362880 + xx * (-1.0 / 39916800 +
                                                    xx * (1.0 / 6227020800 +
                                                          xx * (-1.0 / 1307674368000 +
                                                                xx * (1.0 / 355687428096000))))))));
    const double cos_x =
        1.0 +
        xx * (-0.5 +
              xx * (1.0 / 24 +
                    xx * (-1.0 / 720 +
                          xx * (1.0 / 40320 + xx * (-1.0 / 3628800 +
                                                    xx * (1.0 / 479001600 +
                                                          xx * (-1.0 / 87178291200 +
                                                                xx * (1.0 / 20922789888000))))))));
    const auto q = static_cast<int64_t>(qf);
    const double cq = (q & 1) != 0 ? sin_x : cos_x, sq = (q & 1) != 0 ? cos_x : sin_x;
    b.c[j] = r * (((q + 1) & 2) != 0 ? -cq : cq);
    b.s[j] = r * ((q & 2) != 0 ? -sq : sq);
  }
}

// The bits of x rounded to nearest even at `drop` bits below the double's fraction: x rounded
// to 53 - drop significant bits (correct for a normal result of the narrower format).
[[gnu::always_inline]] inline uint64_t round_bits(double x, int drop) {
  const uint64_t bits = std::bit_cast<uint64_t>(x);
  const uint64_t rounded = bits + ((uint64_t{1} << (drop - 1)) - 1) + ((bits >> drop) & 1);
  return rounded & ~((uint64_t{1} << drop) - 1);
}

[[gnu::always_inline]] inline double margin(double v) { return (std::fabs(v) + 1.0) * 0x1.0p-40; }

__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) void round_f32(
    Batch& b, size_t n, float* out) {
  for (size_t j = 0; j < n; ++j) {
    const double c = b.c[j], s = b.s[j], ec = margin(c), es = margin(s);
    out[2 * j] = static_cast<float>(c);
    out[2 * j + 1] = static_cast<float>(s);
    const bool same = static_cast<float>(c - ec) == static_cast<float>(c + ec) &&
                      static_cast<float>(s - es) == static_cast<float>(s + es);
    b.redo[j] = same ? 0 : 1;
  }
}

// f16 (10 fraction bits, smallest normal 2^-14) or bf16 (7, 2^-126): sign, exponent rebiased,
// fraction; values at least the smallest normal and far below the largest.
template <int kFraction, int kBias, double kTiny>
struct Narrow {
  static constexpr int kDrop = 52 - kFraction;
  [[gnu::always_inline]] static uint16_t encode(uint64_t rounded) {
    const uint64_t sign = (rounded >> 48) & 0x8000;
    const uint64_t exponent = ((rounded >> 52) & 0x7ff) - 1023 + kBias;
    const uint64_t fraction = (rounded >> kDrop) & ((uint64_t{1} << kFraction) - 1);
    return static_cast<uint16_t>(sign | (exponent << kFraction) | fraction);
  }
  [[gnu::always_inline]] static bool settled(double v, double e) {
    return std::fabs(v) - e >= kTiny && round_bits(v - e, kDrop) == round_bits(v + e, kDrop);
  }
};
using F16 = Narrow<10, 15, 0x1.0p-14>;
using BF16 = Narrow<7, 127, 0x1.0p-126>;

template <class N>
[[gnu::always_inline]] inline void round_narrow(Batch& b, size_t n, uint16_t* out) {
  for (size_t j = 0; j < n; ++j) {
    const double c = b.c[j], s = b.s[j];
    out[2 * j] = N::encode(round_bits(c, N::kDrop));
    out[2 * j + 1] = N::encode(round_bits(s, N::kDrop));
    b.redo[j] = N::settled(c, margin(c)) && N::settled(s, margin(s)) ? 0 : 1;
  }
}

__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) void round_f16(
    Batch& b, size_t n, uint16_t* out) {
  round_narrow<F16>(b, n, out);
}

__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) void round_bf16(
    Batch& b, size_t n, uint16_t* out) {
  round_narrow<BF16>(b, n, out);
}

}  // namespace

void draw_normal_pairs(std::array<uint32_t, 2> key, uint64_t stream, uint64_t first, size_t pairs,
                       void* out, DType t) {
  if (t != DType::Float32 && t != DType::Float16 && t != DType::BFloat16)
    internal_error("draw_normal_pairs: not f32, f16 or bf16");
  const size_t width = itemsize(t);
  Batch b;
  for (size_t at = 0; at < pairs; at += kBatch) {
    const size_t n = std::min(kBatch, pairs - at);
    char* dst = static_cast<char*>(out) + 2 * at * width;
    approximate(key[0], key[1], stream, first + at, n, b);
    if (t == DType::Float32)
      round_f32(b, n, reinterpret_cast<float*>(dst));
    else if (t == DType::Float16)
      round_f16(b, n, reinterpret_cast<uint16_t*>(dst));
    else
      round_bf16(b, n, reinterpret_cast<uint16_t*>(dst));
    for (size_t j = 0; j < n; ++j) {
      if (b.redo[j] == 0) continue;
      const auto [c, s] = box_muller(b.u1[j], b.u2[j]);
      store_from_double(dst + 2 * j * width, t, c);
      store_from_double(dst + (2 * j + 1) * width, t, s);
    }
  }
}

}  // namespace crucible::rng_detail
