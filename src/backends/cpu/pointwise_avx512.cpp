// (maskz_ forms of the f16 conversions: GCC 12 warns about the undefined pass-through of the
// unmasked ones.)
// The elementwise loops compiled for AVX-512 (this file gets -mavx512f -mavx512bw -mavx512vl).
#include <immintrin.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "backends/cpu/pointwise_kernels.h"

#define CRUCIBLE_MVEC_T __m512
#define CRUCIBLE_MV1(f) _ZGVeN16v_##f
#define CRUCIBLE_MV2(f) _ZGVeN16vv_##f
#include "backends/cpu/pointwise_mvec.h"

namespace crucible::cpu {
namespace isa_avx512 {
namespace {
void f16_to_f32(const uint16_t* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(out + i,
                     _mm512_maskz_cvtph_ps(
                         0xffff, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i))));
  for (; i < n; ++i) out[i] = _cvtsh_ss(in[i]);
}
void f32_to_f16(const float* in, uint16_t* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(
        reinterpret_cast<__m256i*>(out + i),
        _mm512_maskz_cvtps_ph(0xffff, _mm512_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT));
  for (; i < n; ++i) out[i] = _cvtss_sh(in[i], _MM_FROUND_TO_NEAREST_INT);
}
using MvF = __m512;
constexpr int64_t kMvW = 16;
inline MvF mv_load(const float* p) { return _mm512_loadu_ps(p); }
inline void mv_store(float* p, MvF v) { _mm512_storeu_ps(p, v); }
#include "backends/cpu/pointwise_loops.h"
}  // namespace
}  // namespace isa_avx512

const PwKernels& pw_kernels_avx512() {
  static const PwKernels k = isa_avx512::make_kernels();
  return k;
}

}  // namespace crucible::cpu
