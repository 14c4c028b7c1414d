// The `cpu` backend's f32 products with few rows (decode-sized linear layers, bmm of a few
// query rows): C = alpha * A @ B + beta * C without packing B, which OpenBLAS copies whole
// before a product of any height. B is read from memory once (again from cache for each
// further four rows of C), and every value of B is tested for being extreme (nn_util.h) as it
// is first loaded, so the caller needs no separate pass over B to choose the f64 path. The loops
// are compiled once per ISA level (gemm_small_{avx512,avx2,portable}.cpp, the loops in
// gemm_small_loops.h).
#pragma once

#include <cstdint>

namespace crucible::cpu {

// Columns [j0, j1) of C[m, *] (at c[i * ldc + j]) = alpha * A @ B + beta * C (beta == 0 does
// not read C), A[i, q] at a[i * ars + q * acs]. Each returns whether a value of B it read is
// extreme (NaN, infinite or above 2^50 in magnitude); C is then not meaningful.
struct SmallGemmKernels {
  // B row-major: B[q, j] at b[q * ldb + j].
  bool (*nn)(int64_t m, int64_t j0, int64_t j1, int64_t k, float alpha, const float* a, int64_t ars,
             int64_t acs, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
  // B given by its transpose: B[q, j] at bt[j * ldb + q]; A's rows contiguous (acs == 1).
  bool (*nt)(int64_t m, int64_t j0, int64_t j1, int64_t k, float alpha, const float* a, int64_t ars,
             int64_t acs, const float* bt, int64_t ldb, float beta, float* c, int64_t ldc);
};

const SmallGemmKernels& small_gemm_kernels();  // the widest level this processor runs
const SmallGemmKernels& small_gemm_kernels_avx512();
const SmallGemmKernels& small_gemm_kernels_avx2();
const SmallGemmKernels& small_gemm_kernels_portable();

// The most rows a product takes the small path with.
constexpr int64_t kSmallGemmMaxRows = 16;

// A batch of products C[b] = alpha * A[b] @ B[b] + beta * C[b] ([m, k] by [k, n], C[b] at
// c + b * cbs, row stride ldc), the batch items and column blocks spread over the thread pool.
// Element (i, q) of A[b] is at a + b * abs + i * ars + q * acs, likewise for B. Returns false,
// without a meaningful C, when a value of B is extreme; the caller checks A and C's prior
// contents itself. Requires small_gemm_applies().
bool small_gemm_f32(int64_t nb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                    int64_t abs, int64_t ars, int64_t acs, const float* b, int64_t bbs, int64_t brs,
                    int64_t bcs, float beta, float* c, int64_t cbs, int64_t ldc);

// Whether a product of these sizes and B strides takes the small path: 1..kSmallGemmMaxRows
// rows, a non-empty product, and B with unit stride along one of its dims.
bool small_gemm_applies(int64_t m, int64_t n, int64_t k, int64_t brs, int64_t bcs);

}  // namespace crucible::cpu
