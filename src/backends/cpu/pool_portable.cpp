// The f32 pooling plane kernels compiled for the baseline x86-64 ISA (any processor), at -O3
// like the other vector loops, and the choice of kernel set for the processor the backend runs
// on.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "backends/cpu/cpu_features.h"
#include "backends/cpu/pool_kernels.h"

#pragma GCC optimize("O3")

namespace crucible::cpu {
namespace isa_portable {
namespace {
constexpr int kVecBytes = 16;  // SSE2
#include "backends/cpu/pool_loops.h"
}  // namespace
}  // namespace isa_portable

const PoolKernels& pool_kernels_portable() {
  static const PoolKernels k = isa_portable::make_kernels();
  return k;
}

const PoolKernels& pool_kernels() {
  static const PoolKernels& k = isa_level() == "avx512" ? pool_kernels_avx512()
                                : isa_level() == "avx2" ? pool_kernels_avx2()
                                                        : pool_kernels_portable();
  return k;
}

}  // namespace crucible::cpu
