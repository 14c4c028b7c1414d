// The f32 row distances compiled for AVX-512 (see cmake/cpu.cmake).
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "backends/cpu/distance_kernels.h"

namespace crucible::cpu {
namespace isa_avx512 {
namespace {
constexpr int kVecBytes = 64;
#include "backends/cpu/distance_loops.h"
}  // namespace
}  // namespace isa_avx512

const DistanceKernels& distance_kernels_avx512() {
  static const DistanceKernels k = isa_avx512::make_kernels();
  return k;
}

}  // namespace crucible::cpu
