// Products with a quantized weight (see quantized_matmul.h): strips for decode, panels for
// prefill.
#include "backends/cpu/quantized_matmul.h"

#include <algorithm>
#include <vector>

#include "backends/cpu/gemm.h"
#include "backends/cpu/gemm_small.h"
#include "backends/cpu/parallel.h"

namespace crucible::cpu {
namespace {

constexpr int64_t kStripRows = 16;                  // rows of W in a row-major decode strip
constexpr int64_t kStripColumns = 64;               // rows of W in a column-major decode strip
constexpr int64_t kRowMajorChunk = 1024;            // K per strip buffer, row-major (64 KB)
constexpr int64_t kColumnMajorChunk = 256;          // K per strip buffer, column-major (64 KB)
constexpr int64_t kPanelFloats = int64_t{1} << 23;  // a prefill panel: 32 MB of f32
// Strips holding fewer weight values than this per task stay on the calling thread.
constexpr int64_t kSerialValues = int64_t{1} << 18;

int64_t round_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

// The strip [j0, j1) of C computed again in double, chunk by chunk (a strip whose f32 loops
// met a value of W that is extreme: NaN, infinite, or so large that f32 sums could overflow).
void strip_exact(int64_t m, int64_t k, const float* a, const WeightSource& w, int64_t j0,
                 int64_t j1, int64_t chunk, std::vector<float>& buf, float* c, int64_t ldc) {
  const int64_t rows = j1 - j0;
  std::vector<double> acc(static_cast<size_t>(m * rows), 0.0);
  for (int64_t q0 = 0; q0 < k; q0 += chunk) {
    const int64_t q1 = std::min(k, q0 + chunk), kc = q1 - q0;
    const int64_t ld = w.k_major ? rows : kc;
    w.fill(j0, j1, q0, q1, buf.data(), ld);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t r = 0; r < rows; ++r) {
        double s = 0;
        for (int64_t q = 0; q < kc; ++q)
          s += static_cast<double>(a[i * k + q0 + q]) *
               (w.k_major ? buf[static_cast<size_t>(q * ld + r)]
                          : buf[static_cast<size_t>(r * ld + q)]);
        acc[static_cast<size_t>(i * rows + r)] += s;
      }
  }
  for (int64_t i = 0; i < m; ++i)
    for (int64_t r = 0; r < rows; ++r)
      c[i * ldc + j0 + r] = static_cast<float>(acc[static_cast<size_t>(i * rows + r)]);
}

void decode(int64_t m, int64_t n, int64_t k, const float* a, const WeightSource& w, float* c,
            int64_t ldc) {
  const SmallGemmKernels& kern = small_gemm_kernels();
  const int64_t strip = round_up(w.k_major ? kStripColumns : kStripRows, w.align);
  const int64_t chunk = w.k_major ? kColumnMajorChunk : kRowMajorChunk;
  const int64_t strips = (n + strip - 1) / strip;
  const int64_t grain = std::max<int64_t>(1, kSerialValues / std::max<int64_t>(1, strip * k));
  parallel_for(0, strips, grain, [&](int64_t s0, int64_t s1) {
    std::vector<float> buf(static_cast<size_t>(strip * std::min(k, chunk)));
    for (int64_t s = s0; s < s1; ++s) {
      const int64_t j0 = s * strip, j1 = std::min(n, j0 + strip), rows = j1 - j0;
      bool extreme = false;
      for (int64_t q0 = 0; q0 < k; q0 += chunk) {
        const int64_t q1 = std::min(k, q0 + chunk), kc = q1 - q0;
        const float beta = q0 == 0 ? 0.0f : 1.0f;
        if (w.k_major) {
          w.fill(j0, j1, q0, q1, buf.data(), rows);
          extreme |=
              kern.nn(m, 0, rows, kc, 1.0f, a + q0, k, 1, buf.data(), rows, beta, c + j0, ldc);
        } else {
          w.fill(j0, j1, q0, q1, buf.data(), kc);
          extreme |= kern.nt(m, 0, rows, kc, 1.0f, a + q0, k, 1, buf.data(), kc, beta, c + j0, ldc);
        }
      }
      if (extreme) strip_exact(m, k, a, w, j0, j1, chunk, buf, c, ldc);
    }
  });
}

void prefill(int64_t m, int64_t n, int64_t k, const float* a, const WeightSource& w, float* c,
             int64_t ldc, int64_t panel_rows) {
  const int64_t panel = round_up(
      panel_rows > 0 ? panel_rows
                     : std::max<int64_t>(kStripRows, kPanelFloats / std::max<int64_t>(k, 1)),
      w.align);
  const int64_t fill_rows = round_up(w.k_major ? kStripColumns : kStripRows, w.align);
  // The panel buffer stays with the calling thread between calls: a fresh one of this size
  // costs its page faults (the kernel zeroing 32 MB) on every call.
  // (The pool's workers fill it through this pointer: the name would be their own buffer.)
  thread_local std::vector<float> kept;
  kept.resize(std::max(kept.size(), static_cast<size_t>(std::min(panel, n) * k)));
  float* const buf = kept.data();
  for (int64_t p0 = 0; p0 < n; p0 += panel) {
    const int64_t p1 = std::min(n, p0 + panel), rows = p1 - p0;
    const int64_t pieces = (rows + fill_rows - 1) / fill_rows;
    parallel_for(0, pieces, std::max<int64_t>(1, kSerialValues / (fill_rows * k)),
                 [&](int64_t t0, int64_t t1) {
                   const int64_t j0 = p0 + t0 * fill_rows, j1 = std::min(p1, p0 + t1 * fill_rows);
                   if (w.k_major)
                     w.fill(j0, j1, 0, k, buf + (j0 - p0), rows);
                   else
                     w.fill(j0, j1, 0, k, buf + (j0 - p0) * k, k);
                 });
    // B[q, j] = W[p0 + j, q]: W's rows as stored, or W^T's rows.
    const MatView<float> b = w.k_major ? MatView<float>{buf, rows, 1} : MatView<float>{buf, 1, k};
    gemm_f32(m, rows, k, 1.0f, {a, k, 1}, b, 0.0f, c + p0, ldc);
  }
}

}  // namespace

void quantized_matmul(int64_t m, int64_t n, int64_t k, const float* a, const WeightSource& w,
                      float* c, int64_t ldc, int64_t panel_rows) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, 0.0f);
    return;
  }
  if (panel_rows == 0 && m <= kSmallGemmMaxRows)
    decode(m, n, k, a, w, c, ldc);
  else
    prefill(m, n, k, a, w, c, ldc, panel_rows);
}

}  // namespace crucible::cpu
