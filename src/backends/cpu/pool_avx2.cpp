// The f32 pooling plane kernels compiled for AVX2 (this file gets the ISA's -m flags, see
// cmake/cpu.cmake).
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "backends/cpu/pool_kernels.h"

namespace crucible::cpu {
namespace isa_avx2 {
namespace {
constexpr int kVecBytes = 32;
#include "backends/cpu/pool_loops.h"
}  // namespace
}  // namespace isa_avx2

const PoolKernels& pool_kernels_avx2() {
  static const PoolKernels k = isa_avx2::make_kernels();
  return k;
}

}  // namespace crucible::cpu
