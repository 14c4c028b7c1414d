// Exhaustive checks of the reduced-precision conversions against an independent decoding
// formula: (-1)^s * 2^(e - bias) * (1 + m / 2^k), subnormals 2^(1 - bias) * (m / 2^k).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "crucible/core/half.h"
#include "crucible/core/half_bulk.h"
#include "crucible/numeric.h"

namespace crucible {
namespace {

struct Spec {
  int ebits;
  int mbits;
  int bias;
  bool has_inf;  // IEEE-like: exponent all ones is inf/NaN; else only S.1..1.1..1 is NaN
};

constexpr Spec kHalfSpec{5, 10, 15, true};
constexpr Spec kBf16Spec{8, 7, 127, true};
constexpr Spec kE4M3Spec{4, 3, 7, false};
constexpr Spec kE5M2Spec{5, 2, 15, true};

// The reference decoder, written from the format definition only.
double reference_value(uint32_t bits, const Spec& f) {
  const uint32_t s = (bits >> (f.ebits + f.mbits)) & 1;
  const uint32_t e = (bits >> f.mbits) & ((1u << f.ebits) - 1);
  const uint32_t m = bits & ((1u << f.mbits) - 1);
  const double sign = s ? -1.0 : 1.0;
  const uint32_t e_max = (1u << f.ebits) - 1;
  const double frac = static_cast<double>(m) / std::pow(2.0, f.mbits);
  if (f.has_inf && e == e_max) {
    return m == 0 ? sign * std::numeric_limits<double>::infinity()
                  : std::numeric_limits<double>::quiet_NaN();
  }
  if (!f.has_inf && e == e_max && m == (1u << f.mbits) - 1) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  if (e == 0) return sign * std::pow(2.0, 1 - f.bias) * frac;
  return sign * std::pow(2.0, static_cast<int>(e) - f.bias) * (1.0 + frac);
}

bool is_nan_pattern(uint32_t bits, const Spec& f) { return std::isnan(reference_value(bits, f)); }

struct Codec {
  Spec spec;
  std::function<float(uint32_t)> to_float;
  std::function<uint32_t(double)> from_double;
  std::function<uint32_t(float)> from_float;  // empty for the fp8 formats
};

Codec half_codec() {
  return {kHalfSpec, [](uint32_t b) { return half_to_float(static_cast<uint16_t>(b)); },
          [](double x) -> uint32_t { return half_from_double(x); },
          [](float x) -> uint32_t { return half_from_float(x); }};
}
Codec bf16_codec() {
  return {kBf16Spec, [](uint32_t b) { return bf16_to_float(static_cast<uint16_t>(b)); },
          [](double x) -> uint32_t { return bf16_from_double(x); },
          [](float x) -> uint32_t { return bf16_from_float(x); }};
}
Codec e4m3_codec() {
  return {kE4M3Spec, [](uint32_t b) { return fp8e4m3fn_to_float(static_cast<uint8_t>(b)); },
          [](double x) -> uint32_t { return fp8e4m3fn_from_double(x); }, nullptr};
}
Codec e5m2_codec() {
  return {kE5M2Spec, [](uint32_t b) { return fp8e5m2_to_float(static_cast<uint8_t>(b)); },
          [](double x) -> uint32_t { return fp8e5m2_from_double(x); }, nullptr};
}

uint32_t num_patterns(const Spec& f) { return 1u << (1 + f.ebits + f.mbits); }
uint32_t sign_bit(const Spec& f) { return 1u << (f.ebits + f.mbits); }

// Every pattern decodes to the reference value and converts back to itself.
void check_decode_and_round_trip(const Codec& c) {
  int failures = 0;
  for (uint32_t b = 0; b < num_patterns(c.spec) && failures < 10; ++b) {
    const double ref = reference_value(b, c.spec);
    const float got = c.to_float(b);
    if (std::isnan(ref)) {
      if (!std::isnan(got)) ++failures;
      EXPECT_TRUE(std::isnan(got)) << std::hex << b;
      EXPECT_TRUE(is_nan_pattern(c.from_double(ref), c.spec)) << std::hex << b;
      if (c.from_float) {
        EXPECT_TRUE(is_nan_pattern(c.from_float(got), c.spec)) << std::hex << b;
      }
      continue;
    }
    if (static_cast<double>(got) != ref || std::signbit(got) != std::signbit(ref)) ++failures;
    EXPECT_EQ(static_cast<double>(got), ref) << std::hex << b;
    EXPECT_EQ(std::signbit(got), std::signbit(ref)) << std::hex << b;
    EXPECT_EQ(c.from_double(ref), b) << std::hex << b;
    if (c.from_float) {
      EXPECT_EQ(c.from_float(static_cast<float>(ref)), b) << std::hex << b;
    }
  }
  EXPECT_EQ(failures, 0);
}

// Between every two adjacent finite values: the exact midpoint rounds to the one with the even
// mantissa, and the doubles (and floats) right next to it round to the nearer one.
void check_midpoints(const Codec& c) {
  int failures = 0;
  for (uint32_t lo = 0; lo + 1 < sign_bit(c.spec) && failures < 10; ++lo) {
    const uint32_t hi = lo + 1;
    const double a = reference_value(lo, c.spec);
    const double b = reference_value(hi, c.spec);
    if (!std::isfinite(a) || !std::isfinite(b)) continue;
    const double mid = (a + b) / 2;  // exact: both have few significant bits
    ASSERT_TRUE(mid > a && mid < b);
    const uint32_t even = (lo & 1) == 0 ? lo : hi;
    const double inf = std::numeric_limits<double>::infinity();
    for (uint32_t sign : {0u, sign_bit(c.spec)}) {
      const double sg = sign ? -1.0 : 1.0;
      const uint32_t r_mid = c.from_double(sg * mid);
      const uint32_t r_below = c.from_double(sg * std::nextafter(mid, 0.0));
      const uint32_t r_above = c.from_double(sg * std::nextafter(mid, inf));
      if (r_mid != (sign | even) || r_below != (sign | lo) || r_above != (sign | hi)) ++failures;
      EXPECT_EQ(r_mid, sign | even) << "midpoint " << sg * mid;
      EXPECT_EQ(r_below, sign | lo) << "below " << sg * mid;
      EXPECT_EQ(r_above, sign | hi) << "above " << sg * mid;
      if (c.from_float) {
        const float fm = static_cast<float>(mid);
        ASSERT_EQ(static_cast<double>(fm), mid);
        const float finf = std::numeric_limits<float>::infinity();
        EXPECT_EQ(c.from_float(static_cast<float>(sg) * fm), sign | even) << sg * mid;
        EXPECT_EQ(c.from_float(static_cast<float>(sg) * std::nextafter(fm, 0.0f)), sign | lo);
        EXPECT_EQ(c.from_float(static_cast<float>(sg) * std::nextafter(fm, finf)), sign | hi);
      }
    }
  }
  EXPECT_EQ(failures, 0);
}

TEST(Half, DecodesAndRoundTripsAllPatterns) { check_decode_and_round_trip(half_codec()); }
TEST(Half, MidpointsRoundToEven) { check_midpoints(half_codec()); }

TEST(Half, OverflowsToInfinityAt65520) {
  EXPECT_EQ(half_from_double(65504.0), 0x7BFF);
  EXPECT_EQ(half_from_double(65520.0), 0x7C00);  // the tie goes to the even "next" value: inf
  EXPECT_EQ(half_from_double(std::nextafter(65520.0, 0.0)), 0x7BFF);
  EXPECT_EQ(half_from_float(65520.0f), 0x7C00);
  EXPECT_EQ(half_from_float(std::nextafter(65520.0f, 0.0f)), 0x7BFF);
  EXPECT_EQ(half_from_double(-65520.0), 0xFC00);
  EXPECT_EQ(half_from_double(1e300), 0x7C00);
  EXPECT_EQ(half_from_double(std::numeric_limits<double>::infinity()), 0x7C00);
  EXPECT_EQ(half_from_double(-std::numeric_limits<double>::infinity()), 0xFC00);
}

TEST(Half, UnderflowAndSignedZero) {
  EXPECT_EQ(half_from_double(std::ldexp(1.0, -25)), 0x0000);  // tie between 0 and 2^-24
  EXPECT_EQ(half_from_double(std::nextafter(std::ldexp(1.0, -25), 1.0)), 0x0001);
  EXPECT_EQ(half_from_double(-0.0), 0x8000);
  EXPECT_EQ(half_from_double(-1e-300), 0x8000);
  EXPECT_EQ(half_from_double(std::numeric_limits<double>::denorm_min()), 0x0000);
}

TEST(Half, FromDoubleRoundsOnceNotThroughFloat) {
  // Just above the midpoint between 1 and 1 + 2^-10. Through float the 2^-40 is lost, leaving
  // an exact tie that goes down to 1.0; rounded directly the answer is 1 + 2^-10.
  const double x = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  EXPECT_EQ(half_from_float(static_cast<float>(x)), 0x3C00);
  EXPECT_EQ(half_from_double(x), 0x3C01);
}

// Doubles that are not floats (the path through a float rounded to odd): the same half as the
// generic once-rounding routine, over random significands at every exponent a half can round
// from, with the bits just beside a half midpoint, and beyond float's range.
TEST(Half, FromDoubleMatchesTheGenericRoundingOnNonFloats) {
  uint64_t state = 0x9e3779b97f4a7c15ull;
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  int checked = 0;
  for (int e = -40; e <= 20; ++e) {
    for (int i = 0; i < 4000; ++i) {
      const uint64_t r = next();
      const double m = 1.0 + static_cast<double>(r >> 12) * 0x1.0p-52;
      double x = std::ldexp(m, e) * ((r & 1) ? -1.0 : 1.0);
      if (i % 4 == 1) x = std::nextafter(x, 0.0);
      if (static_cast<double>(static_cast<float>(x)) == x) continue;
      ASSERT_EQ(half_from_double(x), numeric::encode(x, numeric::kHalf)) << std::hexfloat << x;
      ++checked;
    }
  }
  for (double x :
       {1e39, -1e300, 3.4028235677973366e38, 1e-50, -1e-300, 5.960464477539063e-8 + 1e-30})
    EXPECT_EQ(half_from_double(x), numeric::encode(x, numeric::kHalf)) << x;
  EXPECT_GT(checked, 200000);
}

// The bulk widening gives every pattern exactly what the one-value conversion gives (NaN
// payloads and signs included), whatever the array's length and its start's alignment.
TEST(Half, BulkWideningIsTheOneValueConversion) {
  std::vector<uint16_t> all(65536 + 3);
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint16_t>(i * 7919);
  for (size_t start : {0, 1, 3}) {
    const size_t n = all.size() - start;
    std::vector<double> h(n), b(n);
    half_to_double_n(all.data() + start, h.data(), n);
    bf16_to_double_n(all.data() + start, b.data(), n);
    for (size_t i = 0; i < n; ++i) {
      const uint16_t bits = all[start + i];
      const double eh = half_to_float(bits), eb = bf16_to_float(bits);
      ASSERT_EQ(std::bit_cast<uint64_t>(h[i]), std::bit_cast<uint64_t>(eh)) << bits;
      ASSERT_EQ(std::bit_cast<uint64_t>(b[i]), std::bit_cast<uint64_t>(eb)) << bits;
    }
  }
}

TEST(Half, NanStaysNan) {
  const uint16_t n = half_from_double(std::numeric_limits<double>::quiet_NaN());
  EXPECT_TRUE(std::isnan(half_to_float(n)));
  EXPECT_TRUE(std::isnan(half_to_float(half_from_float(-std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(
      std::isnan(half_to_float(half_from_float(std::numeric_limits<float>::signaling_NaN()))));
}

TEST(Half, WrapperTypes) {
  EXPECT_EQ(Half(1.5f).bits, 0x3E00);
  EXPECT_EQ(static_cast<float>(Half::from_bits(0x3E00)), 1.5f);
  EXPECT_EQ(BFloat16(1.5).bits, 0x3FC0);
  EXPECT_EQ(static_cast<float>(Float8E4M3FN(448.0)), 448.0f);
  EXPECT_EQ(static_cast<float>(Float8E5M2(-57344.0)), -57344.0f);
}

TEST(BFloat16, DecodesAndRoundTripsAllPatterns) { check_decode_and_round_trip(bf16_codec()); }
TEST(BFloat16, MidpointsRoundToEven) { check_midpoints(bf16_codec()); }

TEST(BFloat16, Overflow) {
  const double max = reference_value(0x7F7F, kBf16Spec);
  EXPECT_EQ(max, 3.3895313892515355e38);
  const double threshold = std::ldexp(2.0 - std::ldexp(1.0, -8), 127);
  EXPECT_EQ(bf16_from_double(threshold), 0x7F80);
  EXPECT_EQ(bf16_from_double(std::nextafter(threshold, 0.0)), 0x7F7F);
  EXPECT_EQ(bf16_from_float(static_cast<float>(threshold)), 0x7F80);
  EXPECT_EQ(bf16_from_float(std::nextafter(static_cast<float>(threshold), 0.0f)), 0x7F7F);
  EXPECT_EQ(bf16_from_float(std::numeric_limits<float>::max()), 0x7F80);
  EXPECT_EQ(bf16_from_double(-1e300), 0xFF80);
}

TEST(BFloat16, FromDoubleRoundsOnceNotThroughFloat) {
  const double x = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40);
  EXPECT_EQ(bf16_from_float(static_cast<float>(x)), 0x3F80);
  EXPECT_EQ(bf16_from_double(x), 0x3F81);
}

TEST(Float8E4M3FN, DecodesAndRoundTripsAllPatterns) { check_decode_and_round_trip(e4m3_codec()); }
TEST(Float8E4M3FN, MidpointsRoundToEven) { check_midpoints(e4m3_codec()); }

TEST(Float8E4M3FN, NoInfinityOutOfRangeIsNan) {
  EXPECT_EQ(reference_value(0x7E, kE4M3Spec), 448.0);
  EXPECT_EQ(fp8e4m3fn_from_double(448.0), 0x7E);
  // Above 448 the next step of the grid would be 480, whose pattern S.1111.111 is NaN: values
  // up to the midpoint 464 (a tie, to the even 448) round to 448, anything beyond is NaN, as
  // c10's rounding produces.
  EXPECT_EQ(fp8e4m3fn_from_double(464.0), 0x7E);
  EXPECT_EQ(fp8e4m3fn_from_double(std::nextafter(464.0, 1000.0)), 0x7F);
  EXPECT_EQ(fp8e4m3fn_from_double(480.0), 0x7F);
  EXPECT_EQ(fp8e4m3fn_from_double(-480.0), 0xFF);
  EXPECT_EQ(fp8e4m3fn_from_double(1e10), 0x7F);
  EXPECT_EQ(fp8e4m3fn_from_double(std::numeric_limits<double>::infinity()), 0x7F);
  EXPECT_EQ(fp8e4m3fn_from_double(-std::numeric_limits<double>::infinity()), 0xFF);
  EXPECT_TRUE(std::isnan(fp8e4m3fn_to_float(0x7F)));
  EXPECT_TRUE(std::isnan(fp8e4m3fn_to_float(0xFF)));
  EXPECT_EQ(fp8e4m3fn_to_float(0x78), 256.0f);  // exponent all ones is an ordinary binade
  EXPECT_EQ(fp8e4m3fn_to_float(0x01), 0.001953125f);
}

TEST(Float8E5M2, DecodesAndRoundTripsAllPatterns) { check_decode_and_round_trip(e5m2_codec()); }
TEST(Float8E5M2, MidpointsRoundToEven) { check_midpoints(e5m2_codec()); }

TEST(Float8E5M2, OverflowsToInfinity) {
  EXPECT_EQ(fp8e5m2_from_double(57344.0), 0x7B);
  EXPECT_EQ(fp8e5m2_from_double(std::nextafter(61440.0, 0.0)), 0x7B);
  EXPECT_EQ(fp8e5m2_from_double(61440.0), 0x7C);
  EXPECT_EQ(fp8e5m2_from_double(-1e9), 0xFC);
  EXPECT_TRUE(std::isinf(fp8e5m2_to_float(0x7C)));
  EXPECT_TRUE(std::isnan(fp8e5m2_to_float(0x7D)));
  EXPECT_TRUE(std::isnan(fp8e5m2_to_float(fp8e5m2_from_double(std::nan("")))));
}

}  // namespace
}  // namespace crucible
