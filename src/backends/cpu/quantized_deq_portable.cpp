// The dequantizing loops (quantized_deq_loops.h) compiled for the baseline x86-64 ISA (any
// processor), at -O3, and the choice of loops for the processor the backend runs on.
#include <bit>
#include <cstdint>

#include "backends/cpu/cpu_features.h"
#include "backends/cpu/quantized_deq.h"

#pragma GCC optimize("O3")

namespace crucible::cpu {
namespace isa_portable {
namespace {
#include "backends/cpu/quantized_deq_loops.h"
}  // namespace
}  // namespace isa_portable

const QuantDeqKernels& quant_deq_kernels_portable() {
  static const QuantDeqKernels k = isa_portable::make_kernels();
  return k;
}

const QuantDeqKernels& quant_deq_kernels() {
  static const QuantDeqKernels& k = isa_level() == "avx512" ? quant_deq_kernels_avx512()
                                    : isa_level() == "avx2" ? quant_deq_kernels_avx2()
                                                            : quant_deq_kernels_portable();
  return k;
}

}  // namespace crucible::cpu
