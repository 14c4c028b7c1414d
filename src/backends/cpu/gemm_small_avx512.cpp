// The small-row f32 products of gemm_small.h compiled for AVX-512 (this file gets -mavx512f
// -mavx512bw -mavx512vl -mfma).
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "backends/cpu/gemm_small.h"

namespace crucible::cpu {
namespace isa_avx512 {
namespace {
constexpr int kLanes = 16;
constexpr int kNnVectors = 4;  // 4 rows x 4 vectors of accumulators, 4 of B: 20 of 32 registers
constexpr int kNtColumns = 4;
typedef float VF __attribute__((vector_size(4 * kLanes)));
inline VF fmadd(VF a, VF b, VF c) {
  return reinterpret_cast<VF>(_mm512_fmadd_ps(
      reinterpret_cast<__m512>(a), reinterpret_cast<__m512>(b), reinterpret_cast<__m512>(c)));
}
#include "backends/cpu/gemm_small_loops.h"
}  // namespace
}  // namespace isa_avx512

const SmallGemmKernels& small_gemm_kernels_avx512() {
  static const SmallGemmKernels k = isa_avx512::make_small_gemm_kernels();
  return k;
}

}  // namespace crucible::cpu
