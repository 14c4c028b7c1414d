// The quantized inner loops compiled for AVX-512 (this file gets -mavx512f -mavx512bw
// -mavx512vl; the int8 products also use AVX-512 VNNI through a function target).
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "backends/cpu/parallel.h"
#include "backends/cpu/quantized_kernels.h"

namespace crucible::cpu::qk {
namespace {

// Horizontal sum through memory (GCC 12 warns about the undefined pass-through of the
// unmasked extracts _mm512_reduce_add_* use).
inline int32_t hsum(__m512i v) {
  alignas(64) int32_t x[16];
  _mm512_store_si512(x, v);
  uint32_t s = 0;
  for (int i = 0; i < 16; ++i) s += static_cast<uint32_t>(x[i]);
  return static_cast<int32_t>(s);
}

// The mask of the first `r` (0..64) bytes of a 64-byte vector.
inline __mmask64 byte_mask(int64_t r) {
  return r >= 64 ? ~__mmask64{0} : ((__mmask64{1} << r) - 1);
}

// A tile of MR rows of `au` (a + 128 as uint8, row stride k) by NR rows of w: the exact sums
// sum_q (a + 128) * w, and (when `sums`) sum_q w per w row.
template <int MR, int NR>
__attribute__((target("avx512vnni,avx512bw,avx512f"))) void tile(int64_t k, const uint8_t* au,
                                                                 const int8_t* w, int32_t* out,
                                                                 int64_t ldo, int32_t* wsum) {
  __m512i acc[MR][NR];
  __m512i sacc[NR];
  for (int r = 0; r < MR; ++r)
    for (int c = 0; c < NR; ++c) acc[r][c] = _mm512_setzero_si512();
  for (int c = 0; c < NR; ++c) sacc[c] = _mm512_setzero_si512();
  const __m512i ones = _mm512_set1_epi8(1);
  for (int64_t q = 0; q < k; q += 64) {
    const __mmask64 mk = byte_mask(k - q);
    __m512i wv[NR];
    for (int c = 0; c < NR; ++c) {
      wv[c] = _mm512_maskz_loadu_epi8(mk, w + c * k + q);
      if (wsum) sacc[c] = _mm512_dpbusd_epi32(sacc[c], ones, wv[c]);
    }
    for (int r = 0; r < MR; ++r) {
      const __m512i av = _mm512_maskz_loadu_epi8(mk, au + r * k + q);
      for (int c = 0; c < NR; ++c) acc[r][c] = _mm512_dpbusd_epi32(acc[r][c], av, wv[c]);
    }
  }
  for (int r = 0; r < MR; ++r)
    for (int c = 0; c < NR; ++c) out[r * ldo + c] = hsum(acc[r][c]);
  if (wsum)
    for (int c = 0; c < NR; ++c) wsum[c] = hsum(sacc[c]);
}

// Rows [0, m) of `au` against NR rows of w; `wsum` holds sum(w) per w row, computed by the
// first tile when `first`.
template <int NR>
void rows(int64_t m, int64_t k, const uint8_t* au, const int8_t* w, int32_t* c, int64_t ldc,
          int32_t* wsum, bool first) {
  int32_t part[4 * NR];
  for (int64_t i = 0; i < m; i += 4) {
    const int64_t mr = std::min<int64_t>(4, m - i);
    int32_t* ws = first && i == 0 ? wsum : nullptr;
    switch (mr) {
      case 4:
        tile<4, NR>(k, au + i * k, w, part, NR, ws);
        break;
      case 3:
        tile<3, NR>(k, au + i * k, w, part, NR, ws);
        break;
      case 2:
        tile<2, NR>(k, au + i * k, w, part, NR, ws);
        break;
      default:
        tile<1, NR>(k, au + i * k, w, part, NR, ws);
        break;
    }
    for (int64_t r = 0; r < mr; ++r)
      for (int cc = 0; cc < NR; ++cc)
        c[(i + r) * ldc + cc] = static_cast<int32_t>(static_cast<uint32_t>(part[r * NR + cc]) -
                                                     128u * static_cast<uint32_t>(wsum[cc]));
  }
}

}  // namespace

void int8_gemm_nt_vnni(int64_t m, int64_t n, int64_t k, const int8_t* a, const int8_t* w,
                       int32_t* c, int64_t ldc) {
  // a + 128 as uint8 (vpdpbusd multiplies unsigned by signed bytes); the 128 * sum(w) it adds
  // is taken off again per column.
  uint8_t* au = static_cast<uint8_t*>(std::aligned_alloc(64, ((m * k + 63) / 64) * 64 + 64));
  for (int64_t i = 0; i < m * k; ++i) au[i] = static_cast<uint8_t>(a[i]) ^ 0x80u;
  std::vector<int32_t> wsum(static_cast<size_t>(n));
  constexpr int kNr = 4;
  // A block of rows of a stays in L2 while every column of the thread's share passes by.
  const int64_t row_block =
      std::max<int64_t>(4, ((int64_t{192} << 10) / std::max<int64_t>(k, 1)) / 4 * 4);
  const int64_t groups = (n + kNr - 1) / kNr;
  parallel_for(0, groups, 1, [&](int64_t g0, int64_t g1) {
    for (int64_t i0 = 0; i0 < m; i0 += row_block) {
      const int64_t mb = std::min(row_block, m - i0);
      for (int64_t g = g0; g < g1; ++g) {
        const int64_t j = g * kNr, nr = std::min<int64_t>(kNr, n - j);
        const uint8_t* ab = au + i0 * k;
        int32_t* cb = c + i0 * ldc + j;
        const bool first = i0 == 0;
        switch (nr) {
          case 4:
            rows<4>(mb, k, ab, w + j * k, cb, ldc, wsum.data() + j, first);
            break;
          case 3:
            rows<3>(mb, k, ab, w + j * k, cb, ldc, wsum.data() + j, first);
            break;
          case 2:
            rows<2>(mb, k, ab, w + j * k, cb, ldc, wsum.data() + j, first);
            break;
          default:
            rows<1>(mb, k, ab, w + j * k, cb, ldc, wsum.data() + j, first);
            break;
        }
      }
    }
  });
  std::free(au);
}

void quantize_int8_avx512(const float* x, int64_t n, double scale, double zp, double qmin,
                          double qmax, int8_t* q) {
  const __m512d vs = _mm512_set1_pd(scale), vz = _mm512_set1_pd(zp);
  const __m512d lo = _mm512_set1_pd(qmin), hi = _mm512_set1_pd(qmax);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m512d v = _mm512_maskz_cvtps_pd(0xff, _mm256_loadu_ps(x + i));
    v = _mm512_add_pd(_mm512_div_pd(v, vs), vz);
    v = _mm512_maskz_roundscale_pd(0xff, v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    v = _mm512_maskz_mov_pd(_mm512_cmp_pd_mask(v, v, _CMP_ORD_Q), v);  // NaN -> 0
    v = _mm512_maskz_min_pd(0xff, _mm512_maskz_max_pd(0xff, v, lo), hi);
    const __m256i w = _mm512_maskz_cvtpd_epi32(0xff, v);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(q + i), _mm256_maskz_cvtepi32_epi8(0xff, w));
  }
  for (; i < n; ++i) {
    const double t = std::nearbyint(x[i] / scale + zp);
    q[i] = static_cast<int8_t>(std::clamp(std::isnan(t) ? 0.0 : t, qmin, qmax));
  }
}

}  // namespace crucible::cpu::qk
