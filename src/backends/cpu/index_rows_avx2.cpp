// The row kernels of index_rows.h compiled for AVX2 (this file gets -mavx2 -mfma).
#include <cstdint>
#include <cstring>

#include "backends/cpu/index_rows.h"

namespace crucible::cpu {
namespace isa_avx2 {
namespace {
constexpr int kLanes = 8;
constexpr int kBagVectors = 12;
#include "backends/cpu/index_rows_loops.h"
}  // namespace
}  // namespace isa_avx2

const RowKernels& row_kernels_avx2() {
  static const RowKernels k = isa_avx2::make_row_kernels();
  return k;
}

}  // namespace crucible::cpu
