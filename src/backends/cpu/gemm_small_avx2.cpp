// The small-row f32 products of gemm_small.h compiled for AVX2 and FMA (this file gets -mavx2
// -mfma).
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "backends/cpu/gemm_small.h"

namespace crucible::cpu {
namespace isa_avx2 {
namespace {
constexpr int kLanes = 8;
constexpr int kNnVectors = 2;  // 4 rows x 2 vectors of accumulators, 2 of B: 11 of 16 registers
constexpr int kNtColumns = 2;
typedef float VF __attribute__((vector_size(4 * kLanes)));
inline VF fmadd(VF a, VF b, VF c) {
  return reinterpret_cast<VF>(_mm256_fmadd_ps(
      reinterpret_cast<__m256>(a), reinterpret_cast<__m256>(b), reinterpret_cast<__m256>(c)));
}
#include "backends/cpu/gemm_small_loops.h"
}  // namespace
}  // namespace isa_avx2

const SmallGemmKernels& small_gemm_kernels_avx2() {
  static const SmallGemmKernels k = isa_avx2::make_small_gemm_kernels();
  return k;
}

}  // namespace crucible::cpu
