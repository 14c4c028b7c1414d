// Decode-sized quantized products fused in registers (see quantized_decode.h). This file gets
// the AVX-512 -m flags (cmake/cpu.cmake).
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "backends/cpu/quantized_decode.h"

namespace crucible::cpu::qk {
namespace {

inline float hsum(__m512 v) {
  alignas(64) float x[16];
  _mm512_store_ps(x, v);
  float s = 0;
  for (int i = 0; i < 16; ++i) s += x[i];
  return s;
}

// 16 weight bytes widened to f32 (see RowCode).
template <RowCode C>
inline __m512 widen(__m128i b) {
  if constexpr (C == RowCode::Int8) {
    return _mm512_maskz_cvtepi32_ps(0xFFFF, _mm512_maskz_cvtepi8_epi32(0xFFFF, b));
  } else if constexpr (C == RowCode::E5M2) {  // e5m2 is the top byte of an IEEE half
    return _mm512_maskz_cvtph_ps(0xFFFF, _mm256_slli_epi16(_mm256_cvtepu8_epi16(b), 8));
  } else {  // e4m3fn: sign, then exponent and mantissa shifted into a half: value * 2^-8
    const __m256i t = _mm256_srai_epi16(_mm256_slli_epi16(_mm256_cvtepu8_epi16(b), 8), 1);
    return _mm512_maskz_cvtph_ps(
        0xFFFF, _mm256_and_si256(t, _mm256_set1_epi16(static_cast<int16_t>(0xBFFF))));
  }
}

// A tile of MR rows of A by NR rows of W (4 x 4, or 8 x 2 where A has 8 rows: each widened
// vector of W then serves twice as many rows of A).
template <RowCode C, int MR, int NR = 4>
bool rows_tile(int64_t k, const float* a, int64_t lda, const uint8_t* const* wr, float* out,
               int64_t ldo) {
  __m512 acc[MR][NR];
  for (int i = 0; i < MR; ++i)
    for (int r = 0; r < NR; ++r) acc[i][r] = _mm512_setzero_ps();
  __mmask16 nan = 0;
  const __m128i low7 = _mm_set1_epi8(0x7F);
  // Full vectors of K unmasked (the loads of A fold into the fmas), then the masked tail.
  auto step = [&](int64_t q, __mmask16 mk, auto masked) {
    __m512 wv[NR];
    for (int r = 0; r < NR; ++r) {
      const __m128i b = masked ? _mm_maskz_loadu_epi8(mk, wr[r] + q)
                               : _mm_loadu_si128(reinterpret_cast<const __m128i*>(wr[r] + q));
      if constexpr (C == RowCode::E4M3Over256)
        nan |= _mm_cmpeq_epi8_mask(_mm_and_si128(b, low7), low7);
      wv[r] = widen<C>(b);
    }
    for (int i = 0; i < MR; ++i) {
      const __m512 av =
          masked ? _mm512_maskz_loadu_ps(mk, a + i * lda + q) : _mm512_loadu_ps(a + i * lda + q);
      for (int r = 0; r < NR; ++r) acc[i][r] = _mm512_fmadd_ps(av, wv[r], acc[i][r]);
    }
  };
  int64_t q = 0;
  for (; q + 16 <= k; q += 16) step(q, __mmask16{0xFFFF}, std::false_type{});
  if (q < k) step(q, static_cast<__mmask16>((1u << (k - q)) - 1), std::true_type{});
  if (nan) return false;
  for (int i = 0; i < MR; ++i)
    for (int r = 0; r < NR; ++r) out[i * ldo + r] = hsum(acc[i][r]);
  return true;
}

template <RowCode C>
bool rows(int64_t m, int64_t j0, int64_t j1, int64_t k, const float* a, int64_t lda,
          const uint8_t* w, int64_t ldw, float* c, int64_t ldc) {
  bool ok = true;
  for (int64_t j = j0; j < j1; j += 4) {
    const int64_t nr = std::min<int64_t>(4, j1 - j);
    const uint8_t* wr[4];
    for (int64_t r = 0; r < 4; ++r) wr[r] = w + (j + std::min(r, nr - 1)) * ldw;
    // Every eight (then four) rows of A against these four rows of W (read again from L1).
    for (int64_t i0 = 0; i0 < m;) {
      float out[8 * 4];
      bool tile_ok = false;
      const float* ai = a + i0 * lda;
      const int64_t mr = m - i0 >= 8 ? 8 : std::min<int64_t>(4, m - i0);
      switch (mr) {
        case 8:
          tile_ok = rows_tile<C, 8, 2>(k, ai, lda, wr, out, 4) &&
                    rows_tile<C, 8, 2>(k, ai, lda, wr + 2, out + 2, 4);
          break;
        case 1:
          tile_ok = rows_tile<C, 1>(k, ai, lda, wr, out, 4);
          break;
        case 2:
          tile_ok = rows_tile<C, 2>(k, ai, lda, wr, out, 4);
          break;
        case 3:
          tile_ok = rows_tile<C, 3>(k, ai, lda, wr, out, 4);
          break;
        default:
          tile_ok = rows_tile<C, 4>(k, ai, lda, wr, out, 4);
          break;
      }
      if (!tile_ok) {
        ok = false;
        break;
      }
      for (int64_t i = 0; i < mr; ++i)
        for (int64_t r = 0; r < nr; ++r) c[(i0 + i) * ldc + j + r] = out[i * 4 + r];
      i0 += mr;
    }
  }
  return ok;
}

// Vectors [V0, V0 + NV) of one 64-column int4 block (16 columns each: 0-1 from the low
// nibbles, 2-3 from the high ones) for MR rows of A: all four for up to 4 rows, two at a time
// for 8 (each dequantized vector then serves twice the rows).
template <int MR, int V0, int NV>
void int4_block(int64_t jb, int64_t n, int64_t k, const float* a, int64_t lda, const uint8_t* blk,
                const float* sz, int64_t group, float* c, int64_t ldc) {
  __m512 acc[MR][NV];
  for (int i = 0; i < MR; ++i)
    for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_setzero_ps();
  const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  const __m512i eight = _mm512_set1_epi32(8);
  for (int64_t g0 = 0; g0 < k; g0 += group) {
    // Columns jb + 16 v + [0, 16): (scale, zero) pairs at sz[((g * n) + col) * 2].
    const float* p = sz + ((g0 / group) * n + jb) * 2;
    __m512 s[NV], z[NV];
    for (int v = 0; v < NV; ++v) {
      const __m512 lo = _mm512_loadu_ps(p + 32 * (V0 + v));
      const __m512 hi = _mm512_loadu_ps(p + 32 * (V0 + v) + 16);
      s[v] = _mm512_permutex2var_ps(lo, even, hi);
      z[v] = _mm512_permutex2var_ps(lo, odd, hi);
    }
    const int64_t g1 = std::min(k, g0 + group);
    for (int64_t q = g0; q < g1; ++q) {
      const __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + q * 32));
      const __m256i lo = _mm256_and_si256(bytes, low4);
      const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(bytes, 4), low4);
      const __m128i parts[4] = {_mm256_castsi256_si128(lo), _mm256_extracti128_si256(lo, 1),
                                _mm256_castsi256_si128(hi), _mm256_extracti128_si256(hi, 1)};
      __m512 wv[NV];
      for (int v = 0; v < NV; ++v) {
        const __m512 x = _mm512_maskz_cvtepi32_ps(
            0xFFFF, _mm512_sub_epi32(_mm512_maskz_cvtepu8_epi32(0xFFFF, parts[V0 + v]), eight));
        wv[v] = _mm512_fmadd_ps(x, s[v], z[v]);
      }
      for (int i = 0; i < MR; ++i) {
        const __m512 av = _mm512_set1_ps(a[i * lda + q]);
        for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_fmadd_ps(av, wv[v], acc[i][v]);
      }
    }
  }
  for (int i = 0; i < MR; ++i)
    for (int v = 0; v < NV; ++v) _mm512_storeu_ps(c + i * ldc + jb + 16 * (V0 + v), acc[i][v]);
}

}  // namespace

bool fused_rows_avx512(RowCode code, int64_t m, int64_t j0, int64_t j1, int64_t k, const float* a,
                       int64_t lda, const uint8_t* w, int64_t ldw, float* c, int64_t ldc) {
  switch (code) {
    case RowCode::Int8:
      return rows<RowCode::Int8>(m, j0, j1, k, a, lda, w, ldw, c, ldc);
    case RowCode::E5M2:
      return rows<RowCode::E5M2>(m, j0, j1, k, a, lda, w, ldw, c, ldc);
    default:
      return rows<RowCode::E4M3Over256>(m, j0, j1, k, a, lda, w, ldw, c, ldc);
  }
}

void fused_int4_avx512(int64_t m, int64_t b0, int64_t b1, int64_t n, int64_t k, const float* a,
                       int64_t lda, const uint8_t* packed, const float* scale_zero, int64_t group,
                       float* c, int64_t ldc) {
  for (int64_t b = b0; b < b1; ++b) {
    const int64_t jb = b * 64;
    const uint8_t* blk = packed + jb * k / 2;
    for (int64_t i0 = 0; i0 < m;) {
      const float* ai = a + i0 * lda;
      float* ci = c + i0 * ldc;
      const int64_t mr = m - i0 >= 8 ? 8 : std::min<int64_t>(4, m - i0);
      switch (mr) {
        case 8:
          int4_block<8, 0, 2>(jb, n, k, ai, lda, blk, scale_zero, group, ci, ldc);
          int4_block<8, 2, 2>(jb, n, k, ai, lda, blk, scale_zero, group, ci, ldc);
          break;
        case 1:
          int4_block<1, 0, 4>(jb, n, k, ai, lda, blk, scale_zero, group, ci, ldc);
          break;
        case 2:
          int4_block<2, 0, 4>(jb, n, k, ai, lda, blk, scale_zero, group, ci, ldc);
          break;
        case 3:
          int4_block<3, 0, 4>(jb, n, k, ai, lda, blk, scale_zero, group, ci, ldc);
          break;
        default:
          int4_block<4, 0, 4>(jb, n, k, ai, lda, blk, scale_zero, group, ci, ldc);
          break;
      }
      i0 += mr;
    }
  }
}

}  // namespace crucible::cpu::qk
