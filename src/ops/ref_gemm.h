// Double-precision matrix products and tensor conversions for the catalog's references: the
// products go through OpenBLAS's dgemm (one BLAS thread per call) cut into row or column
// blocks that depend only on the sizes and run on refpar's threads, so that a reference's result
// is the same bits for any thread count. Internal to libcrucible.
#pragma once

#include <cstdint>

#include "crucible/core/tensor.h"

namespace crucible::refgemm {

// C = op(A) op(B) + beta * C, row-major; op(A) is [m, k] (A stored [k, m] when trans_a), op(B)
// is [k, n] (B stored [n, k] when trans_b). beta == 0 overwrites C without reading it; k == 0
// gives beta * C. Every element of C is summed by one thread over k in BLAS's fixed order.
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda,
          const double* b, int64_t ldb, double beta, double* c, int64_t ldc);

// A contiguous f64 copy of `t` (real part of complex values), any layout or dtype.
Tensor to_f64(const Tensor& t);

}  // namespace crucible::refgemm
