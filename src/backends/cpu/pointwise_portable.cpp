// The elementwise loops compiled for the baseline x86-64 ISA (any processor), the arity of each
// op, and the choice of loop set for the processor the backend runs on.
#include <immintrin.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "backends/cpu/cpu_features.h"
#include "backends/cpu/pointwise_kernels.h"
#include "crucible/core/half.h"

#define CRUCIBLE_MVEC_T __m128
#define CRUCIBLE_MV1(f) _ZGVbN4v_##f
#define CRUCIBLE_MV2(f) _ZGVbN4vv_##f
#include "backends/cpu/pointwise_mvec.h"

namespace crucible::cpu {
namespace isa_portable {
namespace {
void f16_to_f32(const uint16_t* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = half_to_float(in[i]);
}
void f32_to_f16(const float* in, uint16_t* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = half_from_float(in[i]);
}
using MvF = __m128;
constexpr int64_t kMvW = 4;
inline MvF mv_load(const float* p) { return _mm_loadu_ps(p); }
inline void mv_store(float* p, MvF v) { _mm_storeu_ps(p, v); }
#include "backends/cpu/pointwise_loops.h"
}  // namespace
}  // namespace isa_portable

int pw_arity(PwOp op) {
  if (op == PwOp::Fill) return 0;
  if (op < PwOp::Add) return 1;
  if (op < PwOp::Where) return 2;
  return 3;
}

const PwKernels& pw_kernels_portable() {
  static const PwKernels k = isa_portable::make_kernels();
  return k;
}

const PwKernels& pw_kernels() {
  static const PwKernels* k = [] {
    const std::string level = isa_level();
    if (level == "avx512") return &pw_kernels_avx512();
    if (level == "avx2") return &pw_kernels_avx2();
    return &pw_kernels_portable();
  }();
  return *k;
}

}  // namespace crucible::cpu
