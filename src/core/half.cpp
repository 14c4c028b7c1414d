// Conversions between double/float and the reduced-precision formats, rounding to nearest,
// ties to even, exactly once. One routine serves every format: it rounds the double's 53-bit
// significand directly to the format's precision with integer arithmetic.
#include "crucible/core/half.h"

#include <bit>
#include <cmath>

namespace crucible {

namespace {

// A binary floating-point storage format with `ebits` exponent and `mbits` fraction bits.
struct Format {
  int ebits;
  int mbits;
  int bias;
  bool ieee_specials;  // exponent all ones = inf/NaN; otherwise only S.1111.111 is NaN (e4m3fn)
  uint32_t nan_bits;   // the NaN produced (without sign)
  bool nan_keeps_sign;
};

constexpr Format kHalf{5, 10, 15, true, 0x7E00, true};
constexpr Format kBf16{8, 7, 127, true, 0x7FC0, false};
constexpr Format kE4M3FN{4, 3, 7, false, 0x7F, true};
constexpr Format kE5M2{5, 2, 15, true, 0x7F, true};

uint32_t encode(double x, const Format& f) {
  const uint64_t u = std::bit_cast<uint64_t>(x);
  const uint32_t sign = static_cast<uint32_t>(u >> 63) << (f.ebits + f.mbits);
  const uint64_t mag = u & ~(uint64_t{1} << 63);
  const uint32_t exp_all_ones = (uint32_t{1} << f.ebits) - 1;
  const uint32_t inf_bits = exp_all_ones << f.mbits;
  const uint32_t nan_bits = f.nan_bits | (f.nan_keeps_sign ? sign : 0);
  const uint32_t overflow = f.ieee_specials ? (sign | inf_bits) : nan_bits;

  constexpr uint64_t kDoubleInf = uint64_t{0x7FF} << 52;
  if (mag > kDoubleInf) return nan_bits;
  if (mag == kDoubleInf) return overflow;
  const int biased = static_cast<int>(mag >> 52);
  // Zero and double subnormals (< 2^-1022) are far below half the smallest subnormal of every
  // format here, so they round to a signed zero.
  if (biased == 0) return sign;

  const int e = biased - 1023;  // x = sig * 2^(e - 52), sig in [2^52, 2^53)
  const uint64_t sig = (mag & ((uint64_t{1} << 52) - 1)) | (uint64_t{1} << 52);
  if (e + f.bias >= static_cast<int>(exp_all_ones) + 1) return overflow;

  const int emin = 1 - f.bias;
  const bool subnormal = e < emin;
  // Bits to drop so that the kept integer counts units of the result's last place.
  const int shift = 52 - f.mbits + (subnormal ? emin - e : 0);
  uint64_t r = 0;
  if (shift < 64) {
    r = sig >> shift;
    const uint64_t rem = sig & ((uint64_t{1} << shift) - 1);
    const uint64_t halfway = uint64_t{1} << (shift - 1);
    if (rem > halfway || (rem == halfway && (r & 1) != 0)) ++r;
  }
  // For normals the implicit bit is replaced by the exponent field; a carry out of the
  // significand (r == 2^(mbits+1)) moves into the exponent naturally. For subnormals, r ==
  // 2^mbits is exactly the encoding of the smallest normal.
  uint64_t bits =
      subnormal ? r : (static_cast<uint64_t>(e + f.bias) << f.mbits) + r - (uint64_t{1} << f.mbits);
  if (f.ieee_specials) {
    if (bits >= inf_bits) return overflow;
  } else if (bits >= f.nan_bits) {
    return overflow;
  }
  return sign | static_cast<uint32_t>(bits);
}

float decode(uint32_t bits, const Format& f) {
  const uint32_t total = static_cast<uint32_t>(f.ebits + f.mbits);
  const bool negative = ((bits >> total) & 1) != 0;
  const uint32_t exp_all_ones = (uint32_t{1} << f.ebits) - 1;
  const uint32_t e = (bits >> f.mbits) & exp_all_ones;
  const uint32_t m = bits & ((uint32_t{1} << f.mbits) - 1);
  float v;
  if (f.ieee_specials && e == exp_all_ones) {
    v = m == 0 ? INFINITY : NAN;
  } else if (!f.ieee_specials && e == exp_all_ones && m == (uint32_t{1} << f.mbits) - 1) {
    v = NAN;
  } else if (e == 0) {
    v = std::ldexp(static_cast<float>(m), 1 - f.bias - f.mbits);
  } else {
    // Every value of these formats is exactly representable as a float.
    const uint32_t fbits = ((e - f.bias + 127) << 23) | (m << (23 - f.mbits));
    v = std::bit_cast<float>(fbits);
  }
  return negative ? -v : v;
}

}  // namespace

uint16_t half_from_double(double x) { return static_cast<uint16_t>(encode(x, kHalf)); }
uint16_t half_from_float(float x) { return half_from_double(static_cast<double>(x)); }
float half_to_float(uint16_t bits) { return decode(bits, kHalf); }

uint16_t bf16_from_double(double x) { return static_cast<uint16_t>(encode(x, kBf16)); }
uint16_t bf16_from_float(float x) { return bf16_from_double(static_cast<double>(x)); }
float bf16_to_float(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

uint8_t fp8e4m3fn_from_double(double x) { return static_cast<uint8_t>(encode(x, kE4M3FN)); }
float fp8e4m3fn_to_float(uint8_t bits) { return decode(bits, kE4M3FN); }

uint8_t fp8e5m2_from_double(double x) { return static_cast<uint8_t>(encode(x, kE5M2)); }
float fp8e5m2_to_float(uint8_t bits) { return decode(bits, kE5M2); }

}  // namespace crucible
