// OpenBLAS-backed strided GEMM (see gemm.h).
#include "backends/cpu/gemm.h"

#include <cblas.h>

#include <algorithm>
#include <vector>

#include "backends/cpu/parallel.h"

namespace crucible::cpu {
namespace {

// How an operand of `rows` x `cols` reaches BLAS: as stored (ld = row stride), transposed
// (ld = column stride), or packed row-major into `packed`.
template <typename T>
struct BlasOperand {
  const T* data;
  CBLAS_TRANSPOSE trans;
  int64_t ld;
  std::vector<T> packed;
};

template <typename T>
void prepare(BlasOperand<T>& op, MatView<T> v, int64_t rows, int64_t cols) {
  // A stride of a size-1 dim is never used: give it the value that makes the layout legal.
  int64_t rs = rows == 1 ? std::max<int64_t>(cols, 1) : v.rs;
  int64_t cs = cols == 1 ? std::max<int64_t>(rows, 1) : v.cs;
  if (cols == 1 && rows == 1) rs = cs = 1;
  if (cs == 1 && rs >= std::max<int64_t>(cols, 1)) {
    op.data = v.data;
    op.trans = CblasNoTrans;
    op.ld = rs;
    return;
  }
  if (rs == 1 && cs >= std::max<int64_t>(rows, 1)) {
    op.data = v.data;
    op.trans = CblasTrans;
    op.ld = cs;
    return;
  }
  op.packed.resize(static_cast<size_t>(rows * cols));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) op.packed[i * cols + j] = v.data[i * v.rs + j * v.cs];
  op.data = op.packed.data();
  op.trans = CblasNoTrans;
  op.ld = std::max<int64_t>(cols, 1);
}

template <typename T>
void scale_c(int64_t m, int64_t n, T beta, T* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    T* row = c + i * ldc;
    if (beta == T(0)) {
      std::fill(row, row + n, T(0));
    } else {
      for (int64_t j = 0; j < n; ++j) row[j] *= beta;
    }
  }
}

}  // namespace

int set_gemm_threads(int n) {
  const int prev = openblas_get_num_threads();
  if (n != prev) openblas_set_num_threads(n);
  return prev;
}

void gemm_f32(int64_t m, int64_t n, int64_t k, float alpha, MatView<float> a, MatView<float> b,
              float beta, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    scale_c(m, n, beta, c, ldc);
    return;
  }
  BlasOperand<float> oa, ob;
  prepare(oa, a, m, k);
  prepare(ob, b, k, n);
  cblas_sgemm(CblasRowMajor, oa.trans, ob.trans, static_cast<blasint>(m), static_cast<blasint>(n),
              static_cast<blasint>(k), alpha, oa.data, static_cast<blasint>(oa.ld), ob.data,
              static_cast<blasint>(ob.ld), beta, c, static_cast<blasint>(ldc));
}

void gemm_f64(int64_t m, int64_t n, int64_t k, double alpha, MatView<double> a, MatView<double> b,
              double beta, double* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    scale_c(m, n, beta, c, ldc);
    return;
  }
  BlasOperand<double> oa, ob;
  prepare(oa, a, m, k);
  prepare(ob, b, k, n);
  cblas_dgemm(CblasRowMajor, oa.trans, ob.trans, static_cast<blasint>(m), static_cast<blasint>(n),
              static_cast<blasint>(k), alpha, oa.data, static_cast<blasint>(oa.ld), ob.data,
              static_cast<blasint>(ob.ld), beta, c, static_cast<blasint>(ldc));
}

}  // namespace crucible::cpu
