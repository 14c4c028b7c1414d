// The row kernels of index_rows.h compiled for AVX-512 (this file gets -mavx512f -mavx512bw
// -mavx512vl).
#include <cstdint>
#include <cstring>

#include "backends/cpu/index_rows.h"

namespace crucible::cpu {
namespace isa_avx512 {
namespace {
constexpr int kLanes = 16;
constexpr int kBagVectors = 12;
#include "backends/cpu/index_rows_loops.h"
}  // namespace
}  // namespace isa_avx512

const RowKernels& row_kernels_avx512() {
  static const RowKernels k = isa_avx512::make_row_kernels();
  return k;
}

}  // namespace crucible::cpu
