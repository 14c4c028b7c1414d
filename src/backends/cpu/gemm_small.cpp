// Products with few rows (see gemm_small.h): the batch items and blocks of columns spread over
// the thread pool; each block is one call of the ISA level's loops.
#include "backends/cpu/gemm_small.h"

#include <algorithm>
#include <atomic>
#include <vector>

#include "backends/cpu/parallel.h"

namespace crucible::cpu {

namespace {

constexpr int64_t kNnBlockColumns = 1024, kNtBlockColumns = 256;  // columns of C per task

// Products of fewer multiply-adds stay on the calling thread: a memory-bound 768 x 768
// matrix-vector product (2.4 MB of B) took 0.14 ms on one thread and 0.20 ms on two, the
// second waking from sleep for every call.
constexpr int64_t kSerialWork = int64_t{1} << 22;

}  // namespace

bool small_gemm_applies(int64_t m, int64_t n, int64_t k, int64_t brs, int64_t bcs) {
  if (m < 1 || m > kSmallGemmMaxRows || n < 1 || k < 1) return false;
  return bcs == 1 || n == 1 || brs == 1 || k == 1;
}

bool small_gemm_f32(int64_t nb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                    int64_t abs, int64_t ars, int64_t acs, const float* b, int64_t bbs, int64_t brs,
                    int64_t bcs, float beta, float* c, int64_t cbs, int64_t ldc) {
  const SmallGemmKernels& kern = small_gemm_kernels();
  // B^T's rows are B's columns: the dot-product loops where B's rows are not contiguous.
  const bool transposed = !(bcs == 1 && n > 1) && (brs == 1 || k == 1);
  std::vector<float> packed;
  if (transposed && acs != 1 && k > 1) {  // the dot products read A's rows as vectors
    packed.resize(static_cast<size_t>(nb * m * k));
    for (int64_t t = 0; t < nb; ++t)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t q = 0; q < k; ++q)
          packed[static_cast<size_t>((t * m + i) * k + q)] = a[t * abs + i * ars + q * acs];
    a = packed.data();
    abs = m * k;
    ars = k;
    acs = 1;
  }
  // Blocks of columns: up to 1024 for row-major B (whole pages of each row, see
  // gemm_small_loops.h), 256 for the dot products, narrower where that leaves fewer than two
  // tasks per thread.
  const int64_t tasks_per_item =
      std::max<int64_t>(1, (2 * num_threads() + nb - 1) / std::max<int64_t>(nb, 1));
  const int64_t even = ((n + tasks_per_item - 1) / tasks_per_item + 63) / 64 * 64;
  const int64_t width = std::min(even, transposed ? kNtBlockColumns : kNnBlockColumns);
  const int64_t blocks = (n + width - 1) / width;
  const int64_t work = m * k * width;  // multiply-adds per task
  std::atomic<bool> extreme{false};
  parallel_for(
      0, nb * blocks, std::max<int64_t>(1, kSerialWork / work), [&](int64_t t0, int64_t t1) {
        bool bad = false;
        for (int64_t t = t0; t < t1; ++t) {
          const int64_t bi = t / blocks, j0 = (t % blocks) * width;
          const int64_t j1 = std::min(n, j0 + width);
          const float* ab = a + bi * abs;
          float* cb = c + bi * cbs;
          if (transposed)
            bad |= kern.nt(m, j0, j1, k, alpha, ab, ars, acs, b + bi * bbs, bcs, beta, cb, ldc);
          else
            bad |= kern.nn(m, j0, j1, k, alpha, ab, ars, acs, b + bi * bbs, brs, beta, cb, ldc);
        }
        if (bad) extreme.store(true, std::memory_order_relaxed);
      });
  return !extreme.load();
}

}  // namespace crucible::cpu
