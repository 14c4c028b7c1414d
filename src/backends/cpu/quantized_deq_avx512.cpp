// The dequantizing loops (quantized_deq_loops.h) compiled for AVX-512 (this file gets the ISA's
// -m flags, see cmake/cpu.cmake), and the float8 widening written with the half-precision
// converter, which the vectorizer does not find: e5m2 is the top byte of an IEEE half, e4m3fn
// shifted into a half is its value times 2^-8.
#include <immintrin.h>

#include <bit>
#include <cmath>
#include <cstdint>

#include "backends/cpu/quantized_deq.h"

namespace crucible::cpu {
namespace isa_avx512 {
namespace {
#include "backends/cpu/quantized_deq_loops.h"

void fp8_scaled_vec(const uint8_t* w, int64_t len, bool e4m3, float s, float* out) {
  // e4m3: (value * 2^-8) * (s * 2^8), both factors exact, so the one rounding is value * s's.
  const float sv = e4m3 ? s * 256.0f : s;
  if (!std::isfinite(sv) && std::isfinite(s)) return fp8_scaled(w, len, e4m3, s, out);
  const __m512 vs = _mm512_set1_ps(sv);
  const __m512 qnan = _mm512_set1_ps(NAN);
  const __m256i low7 = _mm256_set1_epi16(0x7F);
  int64_t q = 0;
  for (; q + 16 <= len; q += 16) {
    const __m256i b =
        _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + q)));
    const __m256i t = _mm256_slli_epi16(b, 8);
    __m512 v;
    if (e4m3) {
      const __m256i h = _mm256_and_si256(_mm256_srai_epi16(t, 1),
                                         _mm256_set1_epi16(static_cast<int16_t>(0xBFFF)));
      v = _mm512_mul_ps(_mm512_maskz_cvtph_ps(0xFFFF, h), vs);
      const __mmask16 nan = _mm256_cmpeq_epi16_mask(_mm256_and_si256(b, low7), low7);
      v = _mm512_mask_mov_ps(v, nan, qnan);
    } else {
      v = _mm512_mul_ps(_mm512_maskz_cvtph_ps(0xFFFF, t), vs);
    }
    _mm512_storeu_ps(out + q, v);
  }
  fp8_scaled(w + q, len - q, e4m3, s, out + q);
}

}  // namespace
}  // namespace isa_avx512

const QuantDeqKernels& quant_deq_kernels_avx512() {
  static const QuantDeqKernels k = [] {
    QuantDeqKernels t = isa_avx512::make_kernels();
    t.fp8_scaled = isa_avx512::fp8_scaled_vec;
    return t;
  }();
  return k;
}

}  // namespace crucible::cpu
