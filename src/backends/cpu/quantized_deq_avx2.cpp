// The dequantizing loops (quantized_deq_loops.h) compiled for AVX2 (this file gets the ISA's -m
// flags, see cmake/cpu.cmake).
#include <bit>
#include <cstdint>

#include "backends/cpu/quantized_deq.h"

namespace crucible::cpu {
namespace isa_avx2 {
namespace {
#include "backends/cpu/quantized_deq_loops.h"
}  // namespace
}  // namespace isa_avx2

const QuantDeqKernels& quant_deq_kernels_avx2() {
  static const QuantDeqKernels k = isa_avx2::make_kernels();
  return k;
}

}  // namespace crucible::cpu
