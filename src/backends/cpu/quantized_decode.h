// The `cpu` backend's decode-sized quantized products fused in registers (AVX-512, a product
// of at most kFusedDecodeRows rows of A): each vector of the packed weight is widened in
// registers and multiplied into four or eight rows of A at once (and again, from L1, into the
// rows after those), so a call reads the packed weight from memory once and writes nothing
// else.
// Larger products, other ISA levels and the rows these give back take the strips and panels of
// quantized_matmul.h. Called only where cpu_features() reports AVX-512 (F, BW, VL).
#pragma once

#include <cstdint>

namespace crucible::cpu::qk {

constexpr int64_t kFusedDecodeRows = 16;

// Which values a row-major weight holds, and how they widen: int8 exactly; float8 e5m2
// exactly; float8 e4m3fn as its value times 2^-8 (exact; the caller scales the sums by 2^8).
enum class RowCode { Int8, E4M3Over256, E5M2 };

// c[i * ldc + j] = sum_q a[i * lda + q] * W[j, q] for j in [j0, j1), i < m <= 4, W's row j at
// w + j * ldw (k bytes). Returns false when an e4m3 row holds a NaN code: the rows of that
// four-row tile are then not written, and the caller computes the call another way.
bool fused_rows_avx512(RowCode code, int64_t m, int64_t j0, int64_t j1, int64_t k, const float* a,
                       int64_t lda, const uint8_t* w, int64_t ldw, float* c, int64_t ldc);

// The same for full 64-column blocks [b0, b1) of ATen's int4 CPU layout (`packed` [n, k / 2]),
// W = (nibble - 8) * scale + zero (one f32 fma) with scale_zero [ceil(k / group), n, 2].
void fused_int4_avx512(int64_t m, int64_t b0, int64_t b1, int64_t n, int64_t k, const float* a,
                       int64_t lda, const uint8_t* packed, const float* scale_zero, int64_t group,
                       float* c, int64_t ldc);

}  // namespace crucible::cpu::qk
