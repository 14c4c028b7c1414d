// The elementwise loops compiled for AVX2 and FMA (this file gets -mavx2 -mfma -mf16c).
#include <immintrin.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "backends/cpu/pointwise_kernels.h"

#define CRUCIBLE_MVEC_T __m256
#define CRUCIBLE_MV1(f) _ZGVdN8v_##f
#define CRUCIBLE_MV2(f) _ZGVdN8vv_##f
#include "backends/cpu/pointwise_mvec.h"

namespace crucible::cpu {
namespace isa_avx2 {
namespace {
void f16_to_f32(const uint16_t* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i,
                     _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
  for (; i < n; ++i) out[i] = _cvtsh_ss(in[i]);
}
void f32_to_f16(const float* in, uint16_t* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT));
  for (; i < n; ++i) out[i] = _cvtss_sh(in[i], _MM_FROUND_TO_NEAREST_INT);
}
using MvF = __m256;
constexpr int64_t kMvW = 8;
inline MvF mv_load(const float* p) { return _mm256_loadu_ps(p); }
inline void mv_store(float* p, MvF v) { _mm256_storeu_ps(p, v); }
#include "backends/cpu/pointwise_loops.h"
}  // namespace
}  // namespace isa_avx2

const PwKernels& pw_kernels_avx2() {
  static const PwKernels k = isa_avx2::make_kernels();
  return k;
}

}  // namespace crucible::cpu
