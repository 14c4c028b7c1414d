// The numeric rules crucible and kernels written against its ABI share, header-only C++17: ATen's
// scalar types, type promotion and casting rules, and rounding to the reduced-precision formats
// (f16, bf16, fp8), once. crucible's core (DType, half.h) and crucible/kernel.hpp both build on
// this file, so the reference and a kernel's helpers cannot disagree on a rule.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace crucible::numeric {

// ATen's ScalarType order for the types crucible has (the fp8 types after the complex ones).
enum class ScalarType : uint8_t {
  Bool,
  UInt8,
  Int8,
  Int16,
  Int32,
  Int64,
  Float16,
  BFloat16,
  Float32,
  Float64,
  Complex32,
  Complex64,
  Complex128,
  Float8E4M3FN,
  Float8E5M2,
  Undefined,
};

inline constexpr bool is_floating(ScalarType t) {
  return t == ScalarType::Float16 || t == ScalarType::BFloat16 || t == ScalarType::Float32 ||
         t == ScalarType::Float64 || t == ScalarType::Float8E4M3FN || t == ScalarType::Float8E5M2;
}
inline constexpr bool is_complex(ScalarType t) {
  return t == ScalarType::Complex32 || t == ScalarType::Complex64 || t == ScalarType::Complex128;
}
inline constexpr bool is_integral(ScalarType t, bool include_bool) {
  return (include_bool && t == ScalarType::Bool) || t == ScalarType::UInt8 ||
         t == ScalarType::Int8 || t == ScalarType::Int16 || t == ScalarType::Int32 ||
         t == ScalarType::Int64;
}

// The component type of a complex type (c32 -> f16, c64 -> f32, c128 -> f64); others unchanged.
inline constexpr ScalarType to_real(ScalarType t) {
  return t == ScalarType::Complex32    ? ScalarType::Float16
         : t == ScalarType::Complex64  ? ScalarType::Float32
         : t == ScalarType::Complex128 ? ScalarType::Float64
                                       : t;
}
// ATen's toComplexType: f16 -> c32, bf16 and f32 -> c64 (bfloat16 has f32's range), f64 -> c128,
// complex types unchanged; Undefined for the others ("Unknown Complex ScalarType").
inline constexpr ScalarType to_complex(ScalarType t) {
  return t == ScalarType::Float16                                ? ScalarType::Complex32
         : t == ScalarType::BFloat16 || t == ScalarType::Float32 ? ScalarType::Complex64
         : t == ScalarType::Float64                              ? ScalarType::Complex128
         : is_complex(t)                                         ? t
                                                                 : ScalarType::Undefined;
}

// ATen's promote_types (c10/core/ScalarType.cpp): the fp8 types promote with themselves only
// (Undefined otherwise, an error in ATen). Complex wins and keeps the wider component: the
// complex type of the promotion of both value types (i64 + c32 -> c32, bf16 + c32 -> c64,
// f64 + c64 -> c128). Bool gives way to anything; f16 with bf16 gives f32; u8 with a signed type
// gives that type, i8 widened to i16 (to hold 0..255).
inline constexpr ScalarType promote_types(ScalarType a, ScalarType b) {
  if (a == b) return a;
  if (a == ScalarType::Undefined || b == ScalarType::Undefined || a >= ScalarType::Float8E4M3FN ||
      b >= ScalarType::Float8E4M3FN)
    return ScalarType::Undefined;
  if (is_complex(a) || is_complex(b)) {
    const ScalarType ra = to_real(a), rb = to_real(b);
    const ScalarType comp = is_integral(ra, true)   ? rb
                            : is_integral(rb, true) ? ra
                                                    : promote_types(ra, rb);
    return to_complex(comp);
  }
  if (a == ScalarType::Bool) return b;
  if (b == ScalarType::Bool) return a;
  if (is_floating(a) || is_floating(b)) {
    if (!is_floating(a)) return b;
    if (!is_floating(b)) return a;
    if ((a == ScalarType::Float16 && b == ScalarType::BFloat16) ||
        (a == ScalarType::BFloat16 && b == ScalarType::Float16))
      return ScalarType::Float32;
    return a > b ? a : b;  // f16/bf16 < f32 < f64
  }
  if (a == ScalarType::UInt8 || b == ScalarType::UInt8) {
    const ScalarType s = a == ScalarType::UInt8 ? b : a;
    return s == ScalarType::Int8 ? ScalarType::Int16 : s;
  }
  return a > b ? a : b;
}

// ATen's canCast, what an in-place or out= op may write into its output: no complex -> real,
// no floating -> integral (or bool), no non-bool -> bool.
inline constexpr bool can_cast(ScalarType from, ScalarType to) {
  if (is_complex(from) && !is_complex(to)) return false;
  if (is_floating(from) && is_integral(to, true)) return false;
  if (from != ScalarType::Bool && to == ScalarType::Bool) return false;
  return true;
}

// ---- the reduced-precision formats: round to nearest, ties to even, exactly once -------------

// A binary floating-point storage format of `ebits` exponent and `mbits` fraction bits.
struct FloatFormat {
  int ebits;
  int mbits;
  int bias;
  bool ieee_specials;  // exponent all ones = inf/NaN; otherwise only S.1111.111 is NaN (e4m3fn)
  uint32_t nan_bits;   // the NaN produced (without sign)
  bool nan_keeps_sign;
};

inline constexpr FloatFormat kHalf{5, 10, 15, true, 0x7E00, true};
inline constexpr FloatFormat kBFloat16{8, 7, 127, true, 0x7FC0, false};
// float8_e4m3fn: no infinities; values that round beyond 448 (and +-inf) become NaN, as c10's
// conversion does. float8_e5m2: IEEE-like, overflow rounds to infinity.
inline constexpr FloatFormat kFloat8E4M3FN{4, 3, 7, false, 0x7F, true};
inline constexpr FloatFormat kFloat8E5M2{5, 2, 15, true, 0x7F, true};

// The bits of `x` in format `f`: the double's 53-bit significand rounded directly to the
// format's precision with integer arithmetic (never through float, so f64 -> f16 is correctly
// rounded).
inline uint32_t encode(double x, const FloatFormat& f) {
  uint64_t u = 0;
  std::memcpy(&u, &x, sizeof u);
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
  const uint64_t bits =
      subnormal ? r : (static_cast<uint64_t>(e + f.bias) << f.mbits) + r - (uint64_t{1} << f.mbits);
  if (f.ieee_specials) {
    if (bits >= inf_bits) return overflow;
  } else if (bits >= f.nan_bits) {
    return overflow;
  }
  return sign | static_cast<uint32_t>(bits);
}

// The value of `bits` in format `f` (every value of these formats is a float exactly).
inline float decode(uint32_t bits, const FloatFormat& f) {
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
    const uint32_t fbits =
        ((e - static_cast<uint32_t>(f.bias) + 127) << 23) | (m << (23 - f.mbits));
    std::memcpy(&v, &fbits, sizeof v);
  }
  return negative ? -v : v;
}

}  // namespace crucible::numeric
