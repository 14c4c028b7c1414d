// The loops of gemm_small.h, included inside one namespace per ISA level, after the file
// defines kLanes (f32 lanes of its widest vector: 16, 8 or 4), kNnVectors and kNtColumns (the
// tile widths that keep a tile's accumulators in that level's registers) and
// fmadd(a, b, c) = a * b + c on VF (one rounding where the level has FMA). No include guard:
// each including file compiles them once with its own flags.

// Rows of C per tile: four rows' accumulators stay in registers next to a tile of B.
constexpr int kRows = 4;

typedef int32_t VI __attribute__((vector_size(4 * kLanes)));

inline VF loadv(const float* p) {
  VF v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

inline void storev(float* p, VF v) { std::memcpy(p, &v, sizeof(v)); }

// The magnitudes seen so far as integers: the bits with the sign cleared order |x| as the
// floats do, NaN above infinity, so one integer maximum per vector keeps the largest and the
// limit 2^50 (0x58800000) is tested once at the end.
inline void track(VI& seen, VF v) {
  VI bits;
  std::memcpy(&bits, &v, sizeof(bits));
  bits &= 0x7fffffff;
  seen = bits > seen ? bits : seen;
}

inline bool extreme_scalar(float x) {
  int32_t bits;
  std::memcpy(&bits, &x, sizeof(bits));
  return (bits & 0x7fffffff) > 0x58800000;
}

inline bool any_extreme_lane(VI seen) {
  bool r = false;
#pragma GCC unroll 16
  for (int l = 0; l < kLanes; ++l) r |= seen[l] > 0x58800000;
  return r;
}

inline float hsum(VF v) {
  float s = 0;
#pragma GCC unroll 16
  for (int l = 0; l < kLanes; ++l) s += v[l];
  return s;
}

inline float finish(float acc, float alpha, float beta, const float* c) {
  return beta == 0.0f ? alpha * acc : alpha * acc + beta * *c;
}

// Columns whose partial sums the row-major loops keep (kSmallGemmMaxRows x 1024 floats, 64 KB,
// in L2), and rows of B per pass: each pass reads kNnDepth rows of B across all of the block's
// columns, whole pages at a time, streams the hardware prefetcher follows (a tile walking down
// all of K read 256 bytes per 4 KB page and waited for memory at every row).
constexpr int64_t kNnChunk = 1024;
constexpr int64_t kNnDepth = 16;

// Partial sums p[0, MR) x [0, NV * kLanes) (row stride kNnChunk) += A[:, q0..q1) @ B[q0..q1, :]
// of a row-major B: for each q, NV vectors of B's row q times the broadcast A[i, q]. first: p
// starts at zero. kCheck: test the values of B read (the first row tile of a column block).
template <int MR, int NV, bool kCheck>
inline void nn_tile(int64_t q0, int64_t q1, const float* a, int64_t ars, int64_t acs,
                    const float* b, int64_t ldb, float* p, bool first, VI& bad) {
  VF acc[MR][NV];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 16
    for (int v = 0; v < NV; ++v) acc[r][v] = first ? VF{} : loadv(p + r * kNnChunk + v * kLanes);
  for (int64_t q = q0; q < q1; ++q) {
    const float* br = b + q * ldb;
    VF bv[NV];
#pragma GCC unroll 16
    for (int v = 0; v < NV; ++v) {
      bv[v] = loadv(br + v * kLanes);
      if (kCheck) track(bad, bv[v]);
    }
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const VF av = VF{} + a[r * ars + q * acs];
#pragma GCC unroll 16
      for (int v = 0; v < NV; ++v) acc[r][v] = fmadd(av, bv[v], acc[r][v]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 16
    for (int v = 0; v < NV; ++v) storev(p + r * kNnChunk + v * kLanes, acc[r][v]);
}

template <int NV, bool kCheck>
inline void nn_rows(int64_t rows, int64_t q0, int64_t q1, const float* a, int64_t ars, int64_t acs,
                    const float* b, int64_t ldb, float* p, bool first, VI& bad) {
  switch (rows) {
    case 1:
      return nn_tile<1, NV, kCheck>(q0, q1, a, ars, acs, b, ldb, p, first, bad);
    case 2:
      return nn_tile<2, NV, kCheck>(q0, q1, a, ars, acs, b, ldb, p, first, bad);
    case 3:
      return nn_tile<3, NV, kCheck>(q0, q1, a, ars, acs, b, ldb, p, first, bad);
    default:
      return nn_tile<4, NV, kCheck>(q0, q1, a, ars, acs, b, ldb, p, first, bad);
  }
}

// Columns [0, NV * kLanes) of the partial sums for every row.
template <int NV>
inline void nn_block(int64_t m, int64_t q0, int64_t q1, const float* a, int64_t ars, int64_t acs,
                     const float* b, int64_t ldb, float* p, bool first, VI& bad) {
  for (int64_t i = 0; i < m; i += kRows) {
    const int64_t rows = std::min<int64_t>(kRows, m - i);
    if (i == 0)
      nn_rows<NV, true>(rows, q0, q1, a, ars, acs, b, ldb, p, first, bad);
    else
      nn_rows<NV, false>(rows, q0, q1, a + i * ars, ars, acs, b, ldb, p + i * kNnChunk, first, bad);
  }
}

bool nn(int64_t m, int64_t j0, int64_t j1, int64_t k, float alpha, const float* a, int64_t ars,
        int64_t acs, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  VI bad = {};
  bool extreme = false;
  float part[kSmallGemmMaxRows * kNnChunk];
  for (int64_t cj = j0; cj < j1; cj += kNnChunk) {
    const int64_t cn = std::min(kNnChunk, j1 - cj);
    const int64_t vec_end = cn - cn % kLanes;  // the rest: fewer than a vector
    for (int64_t q0 = 0; q0 < k; q0 += kNnDepth) {
      const int64_t q1 = std::min(k, q0 + kNnDepth);
      int64_t j = 0;
      for (; j + kNnVectors * kLanes <= cn; j += kNnVectors * kLanes)
        nn_block<kNnVectors>(m, q0, q1, a, ars, acs, b + cj + j, ldb, part + j, q0 == 0, bad);
      for (; j < vec_end; j += kLanes)
        nn_block<1>(m, q0, q1, a, ars, acs, b + cj + j, ldb, part + j, q0 == 0, bad);
    }
    for (int64_t j = vec_end; j < cn; ++j) {
      for (int64_t q = 0; q < k; ++q) extreme |= extreme_scalar(b[q * ldb + cj + j]);
      for (int64_t i = 0; i < m; ++i) {
        float s = 0;
        for (int64_t q = 0; q < k; ++q) s += a[i * ars + q * acs] * b[q * ldb + cj + j];
        part[i * kNnChunk + j] = s;
      }
    }
    for (int64_t i = 0; i < m; ++i) {
      const float* pr = part + i * kNnChunk;
      float* cr = c + i * ldc + cj;
      if (beta == 0.0f) {
        for (int64_t j = 0; j < cn; ++j) cr[j] = alpha * pr[j];
      } else {
        for (int64_t j = 0; j < cn; ++j) cr[j] = alpha * pr[j] + beta * cr[j];
      }
    }
  }
  return extreme || any_extreme_lane(bad);
}

// How far ahead of its loads the first pass over B^T's rows prefetches them (floats): the
// hardware prefetcher starts late on rows of a few KB (a linear layer's weight rows), and
// past a row's end the prefetches reach the rows of the next tile.
constexpr int64_t kNtAhead = 256;

// C[0, MR) x [0, NC) for B given by its transpose: dot products along q of A's rows with
// NC rows of B^T, kLanes terms at a time, then summed across the lanes with the last terms.
template <int MR, int NC, bool kCheck>
inline void nt_tile(int64_t k, float alpha, const float* a, int64_t ars, const float* bt,
                    int64_t ldb, float beta, float* c, int64_t ldc, VI& bad) {
  VF acc[MR][NC] = {};
  int64_t q = 0;
  for (; q + kLanes <= k; q += kLanes) {
    VF bv[NC];
#pragma GCC unroll 16
    for (int n = 0; n < NC; ++n) {
      bv[n] = loadv(bt + n * ldb + q);
      if (kCheck) {  // the first pass over these rows of B^T: from memory
        track(bad, bv[n]);
        __builtin_prefetch(bt + n * ldb + q + kNtAhead);
      }
    }
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const VF av = loadv(a + r * ars + q);
#pragma GCC unroll 16
      for (int n = 0; n < NC; ++n) acc[r][n] = fmadd(av, bv[n], acc[r][n]);
    }
  }
  float s[MR][NC];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 16
    for (int n = 0; n < NC; ++n) s[r][n] = hsum(acc[r][n]);
  for (; q < k; ++q) {
#pragma GCC unroll 16
    for (int n = 0; n < NC; ++n) {
      const float x = bt[n * ldb + q];
      if (kCheck && extreme_scalar(x)) bad[0] = 0x7fffffff;
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) s[r][n] += a[r * ars + q] * x;
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 16
    for (int n = 0; n < NC; ++n) c[r * ldc + n] = finish(s[r][n], alpha, beta, c + r * ldc + n);
}

template <int NC, bool kCheck>
inline void nt_rows(int64_t rows, int64_t k, float alpha, const float* a, int64_t ars,
                    const float* bt, int64_t ldb, float beta, float* c, int64_t ldc, VI& bad) {
  switch (rows) {
    case 1:
      return nt_tile<1, NC, kCheck>(k, alpha, a, ars, bt, ldb, beta, c, ldc, bad);
    case 2:
      return nt_tile<2, NC, kCheck>(k, alpha, a, ars, bt, ldb, beta, c, ldc, bad);
    case 3:
      return nt_tile<3, NC, kCheck>(k, alpha, a, ars, bt, ldb, beta, c, ldc, bad);
    default:
      return nt_tile<4, NC, kCheck>(k, alpha, a, ars, bt, ldb, beta, c, ldc, bad);
  }
}

template <int NC>
inline void nt_block(int64_t m, int64_t k, float alpha, const float* a, int64_t ars,
                     const float* bt, int64_t ldb, float beta, float* c, int64_t ldc, VI& bad) {
  for (int64_t i = 0; i < m; i += kRows) {
    const int64_t rows = std::min<int64_t>(kRows, m - i);
    if (i == 0)
      nt_rows<NC, true>(rows, k, alpha, a, ars, bt, ldb, beta, c, ldc, bad);
    else
      nt_rows<NC, false>(rows, k, alpha, a + i * ars, ars, bt, ldb, beta, c + i * ldc, ldc, bad);
  }
}

bool nt(int64_t m, int64_t j0, int64_t j1, int64_t k, float alpha, const float* a, int64_t ars,
        int64_t /*acs: 1*/, const float* bt, int64_t ldb, float beta, float* c, int64_t ldc) {
  VI bad = {};
  int64_t j = j0;
  for (; j + kNtColumns <= j1; j += kNtColumns)
    nt_block<kNtColumns>(m, k, alpha, a, ars, bt + j * ldb, ldb, beta, c + j, ldc, bad);
  for (; j < j1; ++j) nt_block<1>(m, k, alpha, a, ars, bt + j * ldb, ldb, beta, c + j, ldc, bad);
  return any_extreme_lane(bad);
}

SmallGemmKernels make_small_gemm_kernels() { return SmallGemmKernels{nn, nt}; }
