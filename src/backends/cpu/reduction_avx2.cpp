// The reduction and norm loops compiled for AVX2 and FMA (this file gets -mavx2 -mfma -mf16c).
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "backends/cpu/reduction_kernels.h"

// The loops pass vectors between functions internal to this unit: the notes about their ABI
// (which differs between ISA levels) do not apply.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace crucible::cpu {
namespace red_avx2 {
namespace {
constexpr int kVecBytes = 32;
#define CRUCIBLE_RED_AVX2 1
#include "backends/cpu/reduction_loops.h"
#undef CRUCIBLE_RED_AVX2
}  // namespace
}  // namespace red_avx2

const RedKernels& red_kernels_avx2() {
  static const RedKernels k = red_avx2::make_red_kernels();
  return k;
}

}  // namespace crucible::cpu
