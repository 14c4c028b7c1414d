// The row kernels of index_rows.h compiled for the baseline x86-64 ISA (at -O3, so that the
// loops vectorise with SSE2), and the choice of kernel set for the processor.
#pragma GCC optimize("O3")
#include <cstdint>
#include <cstring>
#include <string>

#include "backends/cpu/cpu_features.h"
#include "backends/cpu/index_rows.h"

namespace crucible::cpu {
namespace isa_portable {
namespace {
constexpr int kLanes = 4;
constexpr int kBagVectors = 12;
#include "backends/cpu/index_rows_loops.h"
}  // namespace
}  // namespace isa_portable

const RowKernels& row_kernels_portable() {
  static const RowKernels k = isa_portable::make_row_kernels();
  return k;
}

const RowKernels& row_kernels() {
  static const RowKernels* k = [] {
    const std::string level = isa_level();
    if (level == "avx512") return &row_kernels_avx512();
    if (level == "avx2") return &row_kernels_avx2();
    return &row_kernels_portable();
  }();
  return *k;
}

}  // namespace crucible::cpu
