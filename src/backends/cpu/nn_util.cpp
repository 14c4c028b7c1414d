// The extreme-value scans of nn_util.h. Each is an OR of comparisons over the whole range (no
// early exit, so it vectorises) and is compiled for AVX-512, AVX2 and the baseline x86-64 ISA;
// the loader picks the widest the processor has (GCC's target_clones). The scan runs before
// every matmul, convolution and norm call: at n = 256 the baseline's 4-lane scan of both
// operands kept mm at 0.88 of OpenBLAS's sgemm (bench_cpu_gemm_vs_openblas), above 0.93 at 16.
#include <cstring>

#include "backends/cpu/nn_util.h"

namespace crucible::cpu {

#if defined(__x86_64__)
#define CRUCIBLE_SCAN_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define CRUCIBLE_SCAN_CLONES
#endif

CRUCIBLE_SCAN_CLONES __attribute__((optimize("O3"))) bool any_above32(const char* p, int64_t n,
                                                                      int32_t limit) {
  int32_t bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, p + 4 * i, 4);
    bad |= static_cast<int32_t>(u & 0x7fffffffu) > limit;
  }
  return bad != 0;
}

CRUCIBLE_SCAN_CLONES __attribute__((optimize("O3"))) bool any_above16(const char* p, int64_t n,
                                                                      int16_t limit) {
  int16_t bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint16_t u;
    std::memcpy(&u, p + 2 * i, 2);
    bad |= static_cast<int16_t>(u & 0x7fffu) > limit;
  }
  return bad != 0;
}

}  // namespace crucible::cpu
