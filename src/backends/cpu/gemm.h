// The `cpu` backend's matrix-multiply primitive: C = alpha * A @ B + beta * C on strided
// f32/f64 matrices, through OpenBLAS (see docs/cpu-gemm.md for why). Transposed operands are
// passed to BLAS as transposed (no copy); other layouts are packed first.
#pragma once

#include <cstdint>

namespace crucible::cpu {

// A matrix operand: element (i, j) at data[i * rs + j * cs].
template <typename T>
struct MatView {
  const T* data;
  int64_t rs, cs;
};

// C[i, j] (at c[i * ldc + j]) = alpha * sum_q A[i, q] * B[q, j] + beta * C[i, j], for an
// [m, k] A and a [k, n] B. beta == 0 does not read C. k == 0 scales C by beta. Uses up to
// num_threads() threads.
void gemm_f32(int64_t m, int64_t n, int64_t k, float alpha, MatView<float> a, MatView<float> b,
              float beta, float* c, int64_t ldc);
void gemm_f64(int64_t m, int64_t n, int64_t k, double alpha, MatView<double> a, MatView<double> b,
              double beta, double* c, int64_t ldc);

// The number of threads BLAS calls may use from now on (1 inside parallel_for chunks).
// Returns the previous value.
int set_gemm_threads(int n);

}  // namespace crucible::cpu
