// OpenBLAS-backed strided GEMM (see gemm.h).
#include "backends/cpu/gemm.h"

#include <cblas.h>

#include <algorithm>
#include <thread>
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

namespace {

// Products are cut into the same parts whatever the thread count, each part a single-threaded
// BLAS call, and the parts spread over the cpu pool. OpenBLAS's own threading splits the
// output by thread count, and its kernels round an element differently at a split's edges
// than inside, so a product would change with --threads and --workers (seen: a [64, 96] x
// [96, 80] f32 product differed between one and two threads on an AVX2 processor). The number
// of parts is the machine's core count (at most 8), fixed for the process: a product is the
// same on every thread count of one machine (other machines may differ anyway: their BLAS
// kernels do), and each part repacks the other operand, so more parts than cores only cost.
constexpr double kSplitMin = 1 << 22;  // multiply-adds below which a product is one call
const int64_t kParts =
    std::clamp<int64_t>(static_cast<int64_t>(std::thread::hardware_concurrency()), 1, 8);

int64_t round_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

void blas_gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m, int64_t n, int64_t k, float alpha,
               const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
               int64_t ldc) {
  cblas_sgemm(CblasRowMajor, ta, tb, static_cast<blasint>(m), static_cast<blasint>(n),
              static_cast<blasint>(k), alpha, a, static_cast<blasint>(lda), b,
              static_cast<blasint>(ldb), beta, c, static_cast<blasint>(ldc));
}
void blas_gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m, int64_t n, int64_t k,
               double alpha, const double* a, int64_t lda, const double* b, int64_t ldb,
               double beta, double* c, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, ta, tb, static_cast<blasint>(m), static_cast<blasint>(n),
              static_cast<blasint>(k), alpha, a, static_cast<blasint>(lda), b,
              static_cast<blasint>(ldb), beta, c, static_cast<blasint>(ldc));
}

// OpenBLAS single-threaded for the scope (the parts are the parallelism); its thread count is
// given back after, on every path out.
class SingleThreadedBlas {
 public:
  SingleThreadedBlas() : prev_(set_gemm_threads(1)) {}
  ~SingleThreadedBlas() { set_gemm_threads(prev_); }
  SingleThreadedBlas(const SingleThreadedBlas&) = delete;
  SingleThreadedBlas& operator=(const SingleThreadedBlas&) = delete;
  int prev() const { return prev_; }

 private:
  int prev_;
};

template <typename T>
void gemm(int64_t m, int64_t n, int64_t k, T alpha, MatView<T> a, MatView<T> b, T beta, T* c,
          int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    scale_c(m, n, beta, c, ldc);
    return;
  }
  BlasOperand<T> oa, ob;
  prepare(oa, a, m, k);
  prepare(ob, b, k, n);
  const double work = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const bool by_rows = m >= n;
  const int64_t extent = by_rows ? m : n;
  const int64_t step = work < kSplitMin ? extent
                                        : round_up((extent + kParts - 1) / kParts,
                                                   by_rows ? int64_t{16} : int64_t{64});
  const int64_t parts = (extent + step - 1) / step;
  auto part = [&](int64_t p) {
    const int64_t lo = p * step, hi = std::min(extent, lo + step);
    if (by_rows) {
      const T* pa = oa.trans == CblasNoTrans ? oa.data + lo * oa.ld : oa.data + lo;
      blas_gemm(oa.trans, ob.trans, hi - lo, n, k, alpha, pa, oa.ld, ob.data, ob.ld, beta,
                c + lo * ldc, ldc);
    } else {
      const T* pb = ob.trans == CblasNoTrans ? ob.data + lo : ob.data + lo * ob.ld;
      blas_gemm(oa.trans, ob.trans, m, hi - lo, k, alpha, oa.data, oa.ld, pb, ob.ld, beta, c + lo,
                ldc);
    }
  };
  const SingleThreadedBlas single;
  if (single.prev() > 1 && parts > 1) {
    parallel_for(0, parts, 1, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) part(p);
    });
  } else {
    for (int64_t p = 0; p < parts; ++p) part(p);
  }
}

}  // namespace

void gemm_f32(int64_t m, int64_t n, int64_t k, float alpha, MatView<float> a, MatView<float> b,
              float beta, float* c, int64_t ldc) {
  gemm<float>(m, n, k, alpha, a, b, beta, c, ldc);
}

void gemm_f64(int64_t m, int64_t n, int64_t k, double alpha, MatView<double> a, MatView<double> b,
              double beta, double* c, int64_t ldc) {
  gemm<double>(m, n, k, alpha, a, b, beta, c, ldc);
}

}  // namespace crucible::cpu
