// The f32 row distances compiled for the baseline x86-64 ISA (SSE2), at -O3 like the other
// vector loops, and the choice of loop set for the processor the backend runs on.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "backends/cpu/cpu_features.h"
#include "backends/cpu/distance_kernels.h"

#pragma GCC optimize("O3")

namespace crucible::cpu {
namespace isa_portable {
namespace {
constexpr int kVecBytes = 16;
#include "backends/cpu/distance_loops.h"
}  // namespace
}  // namespace isa_portable

const DistanceKernels& distance_kernels_portable() {
  static const DistanceKernels k = isa_portable::make_kernels();
  return k;
}

const DistanceKernels& distance_kernels() {
  static const DistanceKernels& k = isa_level() == "avx512" ? distance_kernels_avx512()
                                    : isa_level() == "avx2" ? distance_kernels_avx2()
                                                            : distance_kernels_portable();
  return k;
}

}  // namespace crucible::cpu
