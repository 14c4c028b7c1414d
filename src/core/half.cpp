// Conversions between double/float and the reduced-precision formats, rounding to nearest,
// ties to even, exactly once: the routines of crucible/numeric.h, which kernel.hpp shares.
#include "crucible/core/half.h"

#include "crucible/core/half_bulk.h"

#include <bit>
#include <cmath>
#include <cstdint>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "crucible/numeric.h"

namespace crucible {

using numeric::decode;
using numeric::encode;
using numeric::kBFloat16;
using numeric::kFloat8E4M3FN;
using numeric::kFloat8E5M2;
using numeric::kHalf;

// The processor's own conversions (F16C) where it has them: half -> float is exact, and
// float -> half rounds to nearest, ties to even, once. A double is handed to them only when it
// is a float exactly, so f64 -> f16 still rounds once. Materialising, rounding and comparing
// f16 tensors converts every element, and the generic routines cost tens of cycles each.
#if defined(__x86_64__)
namespace {
const bool g_f16c = __builtin_cpu_supports("f16c");
__attribute__((target("f16c"))) float f16c_to_float(uint16_t bits) { return _cvtsh_ss(bits); }
__attribute__((target("f16c"))) uint16_t f16c_from_float(float x) {
  return static_cast<uint16_t>(_cvtss_sh(x, _MM_FROUND_TO_NEAREST_INT));
}
}  // namespace

// A finite double that is not a float goes through the float nearest it rounded to odd: x
// truncated to float's 24 bits with the last bit set when anything was cut off. Rounding that
// float to half's 11 bits gives x rounded to half once, since 24 >= 11 + 2 (the round-to-odd
// double rounding rule); doubles beyond float's range become FLT_MAX with the sticky bit,
// which still rounds to half's infinity, and those below it a float subnormal that rounds to 0.
uint16_t half_from_double(double x) {
  if (g_f16c) {
    auto f = static_cast<float>(x);
    if (static_cast<double>(f) == x) return f16c_from_float(f);
    if (std::isfinite(x)) {
      uint32_t bits = std::bit_cast<uint32_t>(f);
      if (std::fabs(static_cast<double>(f)) > std::fabs(x)) --bits;  // toward zero
      return f16c_from_float(std::bit_cast<float>(bits | 1u));
    }
  }
  return static_cast<uint16_t>(encode(x, kHalf));
}
uint16_t half_from_float(float x) {
  return g_f16c ? f16c_from_float(x) : static_cast<uint16_t>(encode(x, kHalf));
}
float half_to_float(uint16_t bits) { return g_f16c ? f16c_to_float(bits) : decode(bits, kHalf); }

namespace {
__attribute__((target("avx,f16c"))) void f16c_to_double_n(const uint16_t* in, double* out,
                                                          size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 f = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i)));
    _mm256_storeu_pd(out + i, _mm256_cvtps_pd(_mm256_castps256_ps128(f)));
    _mm256_storeu_pd(out + i + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(f, 1)));
  }
  for (; i < n; ++i) out[i] = f16c_to_float(in[i]);
}
}  // namespace

void half_to_double_n(const uint16_t* in, double* out, size_t n) {
  if (g_f16c && __builtin_cpu_supports("avx")) return f16c_to_double_n(in, out, n);
  for (size_t i = 0; i < n; ++i) out[i] = half_to_float(in[i]);
}
#else
uint16_t half_from_double(double x) { return static_cast<uint16_t>(encode(x, kHalf)); }
uint16_t half_from_float(float x) { return half_from_double(static_cast<double>(x)); }
float half_to_float(uint16_t bits) { return decode(bits, kHalf); }
void half_to_double_n(const uint16_t* in, double* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = half_to_float(in[i]);
}
#endif

uint16_t bf16_from_double(double x) { return static_cast<uint16_t>(encode(x, kBFloat16)); }
uint16_t bf16_from_float(float x) { return bf16_from_double(static_cast<double>(x)); }
float bf16_to_float(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}
void bf16_to_double_n(const uint16_t* in, double* out, size_t n) {
  for (size_t i = 0; i < n; ++i)  // a shift and a widening: the compiler vectorises it
    out[i] = static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(in[i]) << 16));
}

uint8_t fp8e4m3fn_from_double(double x) { return static_cast<uint8_t>(encode(x, kFloat8E4M3FN)); }
float fp8e4m3fn_to_float(uint8_t bits) { return decode(bits, kFloat8E4M3FN); }

uint8_t fp8e5m2_from_double(double x) { return static_cast<uint8_t>(encode(x, kFloat8E5M2)); }
float fp8e5m2_to_float(uint8_t bits) { return decode(bits, kFloat8E5M2); }

}  // namespace crucible
