// Conversions between double/float and the reduced-precision formats, rounding to nearest,
// ties to even, exactly once: the routines of crucible/numeric.h, which kernel.hpp shares.
#include "crucible/core/half.h"

#include <bit>

#include "crucible/numeric.h"

namespace crucible {

using numeric::decode;
using numeric::encode;
using numeric::kBFloat16;
using numeric::kFloat8E4M3FN;
using numeric::kFloat8E5M2;
using numeric::kHalf;

uint16_t half_from_double(double x) { return static_cast<uint16_t>(encode(x, kHalf)); }
uint16_t half_from_float(float x) { return half_from_double(static_cast<double>(x)); }
float half_to_float(uint16_t bits) { return decode(bits, kHalf); }

uint16_t bf16_from_double(double x) { return static_cast<uint16_t>(encode(x, kBFloat16)); }
uint16_t bf16_from_float(float x) { return bf16_from_double(static_cast<double>(x)); }
float bf16_to_float(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

uint8_t fp8e4m3fn_from_double(double x) { return static_cast<uint8_t>(encode(x, kFloat8E4M3FN)); }
float fp8e4m3fn_to_float(uint8_t bits) { return decode(bits, kFloat8E4M3FN); }

uint8_t fp8e5m2_from_double(double x) { return static_cast<uint8_t>(encode(x, kFloat8E5M2)); }
float fp8e5m2_to_float(uint8_t bits) { return decode(bits, kFloat8E5M2); }

}  // namespace crucible
