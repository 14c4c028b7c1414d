// The f32 row distances compiled for AVX2 (see cmake/cpu.cmake).
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "backends/cpu/distance_kernels.h"

namespace crucible::cpu {
namespace isa_avx2 {
namespace {
constexpr int kVecBytes = 32;
#include "backends/cpu/distance_loops.h"
}  // namespace
}  // namespace isa_avx2

const DistanceKernels& distance_kernels_avx2() {
  static const DistanceKernels k = isa_avx2::make_kernels();
  return k;
}

}  // namespace crucible::cpu
