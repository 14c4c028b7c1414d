// The softmax row loops compiled for the baseline x86-64 ISA (any processor), at -O3 like the
// other vector loops (GCC's -O2 vectorizer leaves loops with an epilogue scalar), and the choice
// of loop set for the processor the backend runs on.
#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "backends/cpu/cpu_features.h"
#include "backends/cpu/softmax_kernels.h"

#pragma GCC optimize("O3")

namespace crucible::cpu {
namespace isa_portable {
namespace {
constexpr int kVecBytes = 16;  // SSE2
#include "backends/cpu/softmax_loops.h"
}  // namespace
}  // namespace isa_portable

const SoftmaxKernels& softmax_kernels_portable() {
  static const SoftmaxKernels k = isa_portable::make_kernels();
  return k;
}

const SoftmaxKernels& softmax_kernels() {
  static const SoftmaxKernels& k = isa_level() == "avx512" ? softmax_kernels_avx512()
                                   : isa_level() == "avx2" ? softmax_kernels_avx2()
                                                           : softmax_kernels_portable();
  return k;
}

}  // namespace crucible::cpu
