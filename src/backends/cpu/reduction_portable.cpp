// The reduction and norm loops compiled for the baseline x86-64 ISA (any processor), and the
// choice of loop set for the processor the backend runs on.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "backends/cpu/cpu_features.h"
#include "backends/cpu/reduction_kernels.h"

// The loops pass vectors between functions internal to this unit: the notes about their ABI
// (which differs between ISA levels) do not apply.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace crucible::cpu {
namespace red_portable {
namespace {
constexpr int kVecBytes = 16;
#include "backends/cpu/reduction_loops.h"
}  // namespace
}  // namespace red_portable

const RedKernels& red_kernels_portable() {
  static const RedKernels k = red_portable::make_red_kernels();
  return k;
}

const RedKernels& red_kernels() {
  static const RedKernels* k = [] {
    const std::string level = isa_level();
    if (level == "avx512") return &red_kernels_avx512();
    if (level == "avx2") return &red_kernels_avx2();
    return &red_kernels_portable();
  }();
  return *k;
}

}  // namespace crucible::cpu
