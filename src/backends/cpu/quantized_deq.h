// The `cpu` backend's dequantizing loops: runs of packed weights (int8, int4 in ATen's CPU
// layout, float8 e4m3fn/e5m2, unsigned or signed integers with a zero point) widened to f32.
// They are the inner loops of the quantized products (quantized_matmul.h) and of the
// dequantize steps (quantized_qdq.cpp). Compiled once per ISA level
// (quantized_deq_{avx512,avx2,portable}.cpp, the loops in quantized_deq_loops.h); every level
// gives the same bits.
#pragma once

#include <cstdint>

namespace crucible::cpu {

struct QuantDeqKernels {
  // out[q] = float(w[q]) * s (one f32 rounding).
  void (*int8_scaled)(const int8_t* w, int64_t len, float s, float* out);
  // out[q] = widen(w[q]) * s (one f32 rounding; e4m3fn when `e4m3`, else e5m2). With s = 1
  // the value itself, exactly.
  void (*fp8_scaled)(const uint8_t* w, int64_t len, bool e4m3, float s, float* out);
  // Rows [q0, q1) of one block of ATen's int4 CPU layout (`width` columns, 16/32/48/64;
  // `blk` at the block's first byte, width / 2 bytes a row): out[(q - q0) * ld + d] =
  // float(nibble - 8) * s[d] + z[d], the scale and zero of one group.
  void (*int4_block)(const uint8_t* blk, int64_t width, int64_t q0, int64_t q1, const float* s,
                     const float* z, float* out, int64_t ld);
  // out[i] = float((double(q[i]) - z) * s): the catalog's dequantize, rounded once.
  void (*affine_u8)(const uint8_t* q, int64_t len, double z, double s, float* out);
  void (*affine_i8)(const int8_t* q, int64_t len, double z, double s, float* out);
  void (*affine_i32)(const int32_t* q, int64_t len, double z, double s, float* out);
};

const QuantDeqKernels& quant_deq_kernels();  // the widest level this processor runs
const QuantDeqKernels& quant_deq_kernels_avx512();
const QuantDeqKernels& quant_deq_kernels_avx2();
const QuantDeqKernels& quant_deq_kernels_portable();

}  // namespace crucible::cpu
