// The small-row f32 products of gemm_small.h for baseline x86-64 (SSE2, no FMA), and the
// choice of level at run time.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "backends/cpu/cpu_features.h"
#include "backends/cpu/gemm_small.h"

namespace crucible::cpu {
namespace isa_portable {
namespace {
constexpr int kLanes = 4;
constexpr int kNnVectors = 2;
constexpr int kNtColumns = 2;
typedef float VF __attribute__((vector_size(4 * kLanes)));
inline VF fmadd(VF a, VF b, VF c) { return a * b + c; }
#include "backends/cpu/gemm_small_loops.h"
}  // namespace
}  // namespace isa_portable

const SmallGemmKernels& small_gemm_kernels_portable() {
  static const SmallGemmKernels k = isa_portable::make_small_gemm_kernels();
  return k;
}

const SmallGemmKernels& small_gemm_kernels() {
  static const SmallGemmKernels* k = [] {
    const std::string level = isa_level();
    if (level == "avx512") return &small_gemm_kernels_avx512();
    if (level == "avx2") return &small_gemm_kernels_avx2();
    return &small_gemm_kernels_portable();
  }();
  return *k;
}

}  // namespace crucible::cpu
