#include "ops/ref_gemm.h"

#include <cblas.h>

#include <algorithm>

#include "crucible/core/error.h"
#include "ops/ref_parallel.h"

namespace crucible::refgemm {
namespace {

// Multiply-adds per task: large enough that a task outweighs starting a thread.
constexpr double kTaskGrain = 1 << 22;
constexpr int64_t kMaxTasks = 64;

// OpenBLAS runs single-threaded within the scope (the tasks are the parallelism), and is given
// back its thread count after.
class SingleThreadedBlas {
 public:
  SingleThreadedBlas() : prev_(openblas_get_num_threads()) {
    if (prev_ != 1) openblas_set_num_threads(1);
  }
  ~SingleThreadedBlas() {
    if (prev_ != 1) openblas_set_num_threads(prev_);
  }
  SingleThreadedBlas(const SingleThreadedBlas&) = delete;
  SingleThreadedBlas& operator=(const SingleThreadedBlas&) = delete;

 private:
  int prev_;
};

void scale(int64_t m, int64_t n, double beta, double* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    double* row = c + i * ldc;
    if (beta == 0) {
      std::fill(row, row + n, 0.0);
    } else {
      for (int64_t j = 0; j < n; ++j) row[j] *= beta;
    }
  }
}

blasint checked(int64_t v) {
  if (v > 0x7fffffff) internal_error("reference gemm: a size above 2^31 - 1");
  return static_cast<blasint>(v);
}

}  // namespace

void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda,
          const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    scale(m, n, beta, c, ldc);
    return;
  }
  const double work = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  // One task a thread, each owning whole elements of C, split along C's longer side: every
  // task's dgemm packs its share of the operand along that side and all of the other one, so
  // the larger operand is packed once and the smaller once a task. (A task per 64 rows of a
  // [4096, 1024] x [1024, 50265] product packed the 411 MB right operand 64 times: 60% of its
  // 95 s.) Each element's sum runs over k in the same blocks however C is split.
  const bool by_rows = m >= n;
  const int64_t span = by_rows ? m : n;
  const int64_t limit = std::min<int64_t>({span, kMaxTasks, std::max(1, refpar::threads())});
  const int64_t tasks = refpar::task_count(work, kTaskGrain, limit);
  const SingleThreadedBlas single;
  refpar::for_each_task(tasks, [&](int64_t t) {
    const int64_t lo = t * span / tasks, hi = (t + 1) * span / tasks;
    if (lo >= hi) return;
    const double* ap = a;
    const double* bp = b;
    double* cp = c;
    int64_t mm = m, nn = n;
    if (by_rows) {
      ap = trans_a ? a + lo : a + lo * lda;
      cp = c + lo * ldc;
      mm = hi - lo;
    } else {
      bp = trans_b ? b + lo * ldb : b + lo;
      cp = c + lo;
      nn = hi - lo;
    }
    cblas_dgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                trans_b ? CblasTrans : CblasNoTrans, checked(mm), checked(nn), checked(k), 1.0, ap,
                checked(lda), bp, checked(ldb), beta, cp, checked(ldc));
  });
}

Tensor to_f64(const Tensor& t) { return t.to(DType::Float64); }

}  // namespace crucible::refgemm
