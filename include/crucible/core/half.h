// Reduced-precision floating-point storage types: IEEE half, bfloat16 and the two OCP fp8
// formats. Conversions from float and double round to nearest, ties to even, exactly once.
#pragma once

#include <cstdint>

namespace crucible {

// Bit-level conversions. `from_double` rounds the double directly (never through float), so
// f64 -> f16 is correctly rounded; `from_float` is the same for float inputs.
uint16_t half_from_double(double x);
uint16_t half_from_float(float x);
float half_to_float(uint16_t bits);

uint16_t bf16_from_double(double x);
uint16_t bf16_from_float(float x);
float bf16_to_float(uint16_t bits);

// float8_e4m3fn: no infinities, one NaN pattern per sign (S.1111.111); values that round
// beyond the largest finite (448), i.e. |x| > 464 and +-inf, become NaN, as c10's conversion does.
uint8_t fp8e4m3fn_from_double(double x);
float fp8e4m3fn_to_float(uint8_t bits);
// float8_e5m2: IEEE-like with infinities; overflow rounds to infinity.
uint8_t fp8e5m2_from_double(double x);
float fp8e5m2_to_float(uint8_t bits);

struct Half {
  uint16_t bits = 0;
  Half() = default;
  explicit Half(float f) : bits(half_from_float(f)) {}
  explicit Half(double d) : bits(half_from_double(d)) {}
  static Half from_bits(uint16_t b) {
    Half h;
    h.bits = b;
    return h;
  }
  operator float() const { return half_to_float(bits); }
};

struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  explicit BFloat16(float f) : bits(bf16_from_float(f)) {}
  explicit BFloat16(double d) : bits(bf16_from_double(d)) {}
  static BFloat16 from_bits(uint16_t b) {
    BFloat16 h;
    h.bits = b;
    return h;
  }
  operator float() const { return bf16_to_float(bits); }
};

struct Float8E4M3FN {
  uint8_t bits = 0;
  Float8E4M3FN() = default;
  explicit Float8E4M3FN(double d) : bits(fp8e4m3fn_from_double(d)) {}
  static Float8E4M3FN from_bits(uint8_t b) {
    Float8E4M3FN h;
    h.bits = b;
    return h;
  }
  operator float() const { return fp8e4m3fn_to_float(bits); }
};

struct Float8E5M2 {
  uint8_t bits = 0;
  Float8E5M2() = default;
  explicit Float8E5M2(double d) : bits(fp8e5m2_from_double(d)) {}
  static Float8E5M2 from_bits(uint8_t b) {
    Float8E5M2 h;
    h.bits = b;
    return h;
  }
  operator float() const { return fp8e5m2_to_float(bits); }
};

}  // namespace crucible
