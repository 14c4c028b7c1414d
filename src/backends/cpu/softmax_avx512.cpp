// The softmax row loops compiled for AVX-512 (this file gets the ISA's -m flags, see
// cmake/cpu.cmake).
#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "backends/cpu/softmax_kernels.h"

namespace crucible::cpu {
namespace isa_avx512 {
namespace {
constexpr int kVecBytes = 64;
#include "backends/cpu/softmax_loops.h"
}  // namespace
}  // namespace isa_avx512

const SoftmaxKernels& softmax_kernels_avx512() {
  static const SoftmaxKernels k = isa_avx512::make_kernels();
  return k;
}

}  // namespace crucible::cpu
