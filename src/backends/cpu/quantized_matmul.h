// The `cpu` backend's products with a quantized weight: C [m, n] = A [m, k] @ W^T for an f32 A
// and a weight W [n, k] stored packed (int8, int4, float8), never widened whole. The weight is
// read in strips that a `WeightSource` dequantizes into a small f32 buffer:
//  - decode (m <= kSmallGemmMaxRows), where the register-fused loops of quantized_decode.h do
//    not apply (no AVX-512, int4's last partial block, a _scaled_mm weight that is not a
//    transpose): strips of 16 rows (64 columns of a column-major source) by at most 1024 (256)
//    of K, in L2, each multiplied with every row of A by the small-product loops (gemm_small.h)
//    while it is there; the strips are spread over the thread pool. Memory traffic is the
//    packed weight, read once.
//  - prefill: panels of W's rows (about 32 MB of f32 each) dequantized by the pool and multiplied
//    by the f32 gemm (gemm.h), panel after panel: the dequantization costs O(n * k) once per call.
#pragma once

#include <cstdint>
#include <functional>

namespace crucible::cpu {

struct WeightSource {
  // Fills rows [j0, j1) x columns [q0, q1) of W as f32. Row-major sources write
  // out[(j - j0) * ld + (q - q0)]; column-major ones (`k_major`) write W^T's rows,
  // out[(q - q0) * ld + (j - j0)]. Called from several threads at once.
  std::function<void(int64_t j0, int64_t j1, int64_t q0, int64_t q1, float* out, int64_t ld)> fill;
  bool k_major = false;
  // Strips and panels start at multiples of this many rows of W (a block of a packed layout).
  int64_t align = 1;
};

// c[i * ldc + j] = sum_q a[i * k + q] * W[j, q] (f32). `panel_rows` > 0 forces the prefill
// path with panels of that many rows (rounded up to `align`), for tests; 0 chooses by m.
void quantized_matmul(int64_t m, int64_t n, int64_t k, const float* a, const WeightSource& w,
                      float* c, int64_t ldc, int64_t panel_rows = 0);

}  // namespace crucible::cpu
