// f32 vectors for the loops compiled per ISA (softmax_loops.h, pool_loops.h): GCC vector types
// of kVecBytes (defined by the including translation unit: 64 AVX-512, 32 AVX2, 16 SSE2),
// unaligned loads and stores, partial ones that touch only the first n lanes' memory (masked
// where the ISA has masks), and streaming stores. Explicit vectors rather than the
// auto-vectorizer: it keeps NaN-aware selects and compares scalar (they may trap).
//
// Included inside the unit's own namespace, after <immintrin.h> and <cstdint>.
#pragma once

constexpr int kW = kVecBytes / 4;  // f32 lanes

typedef float vf __attribute__((vector_size(kVecBytes)));
typedef int32_t vi __attribute__((vector_size(kVecBytes)));
typedef int64_t vl __attribute__((vector_size(2 * kVecBytes)));
typedef float vf_u __attribute__((vector_size(kVecBytes), aligned(4)));
typedef int32_t vi_u __attribute__((vector_size(kVecBytes), aligned(4)));
typedef int64_t vl_u __attribute__((vector_size(2 * kVecBytes), aligned(8)));

inline vf ldf(const float* p) { return *reinterpret_cast<const vf_u*>(p); }
inline vi ldi(const int32_t* p) { return *reinterpret_cast<const vi_u*>(p); }
inline void stf(float* p, vf v) { *reinterpret_cast<vf_u*>(p) = v; }
inline void sti(int32_t* p, vi v) { *reinterpret_cast<vi_u*>(p) = v; }
inline void stl(int64_t* p, vl v) { *reinterpret_cast<vl_u*>(p) = v; }
inline vf splat(float s) { return vf{} + s; }

inline vi iota(int32_t step) {
  vi v;
  for (int l = 0; l < kW; ++l) v[l] = l * step;
  return v;
}

// v with its halves (of `half` lanes, within each 2 * half group) swapped: a step of a tree
// reduction.
inline vf swap_halves(vf v, int half) { return __builtin_shuffle(v, iota(1) ^ half); }

// The sum of the lanes, pairwise (log2(kW) vector steps rather than kW dependent adds).
inline float hsum_tree(vf v) {
  for (int half = kW / 2; half > 0; half /= 2) v += swap_halves(v, half);
  return v[0];
}

inline bool any(vi m) {
  int32_t r = 0;
  for (int l = 0; l < kW; ++l) r |= m[l];
  return r != 0;
}

// The first n < kW lanes (the others 0); memory past them is not touched.
inline vf ldf_part(const float* p, int64_t n) {
#if defined(__AVX512F__)
  static_assert(kVecBytes == 64);
  return reinterpret_cast<vf>(_mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << n) - 1), p));
#elif defined(__AVX2__)
  static_assert(kVecBytes == 32);
  const vi m = iota(1) < static_cast<int32_t>(n);
  return reinterpret_cast<vf>(_mm256_maskload_ps(p, reinterpret_cast<__m256i>(m)));
#else
  vf v = vf{};
  for (int64_t l = 0; l < n; ++l) v[l] = p[l];
  return v;
#endif
}

inline void stf_part(float* p, vf v, int64_t n) {
#if defined(__AVX512F__)
  _mm512_mask_storeu_ps(p, static_cast<__mmask16>((1u << n) - 1), reinterpret_cast<__m512>(v));
#elif defined(__AVX2__)
  const vi m = iota(1) < static_cast<int32_t>(n);
  _mm256_maskstore_ps(p, reinterpret_cast<__m256i>(m), reinterpret_cast<__m256>(v));
#else
  for (int64_t l = 0; l < n; ++l) p[l] = v[l];
#endif
}

inline void sti_part(int32_t* p, vi v, int64_t n) {
  stf_part(reinterpret_cast<float*>(p), reinterpret_cast<vf>(v), n);
}

// A streaming (non-temporal) store to p, aligned to kVecBytes: the line is written without
// being read first, which saves a third of the traffic of a large output written once.
// stream_fence() orders them before the thread signals that its work is done.
inline void stream(float* p, vf v) {
#if defined(__AVX512F__)
  _mm512_stream_ps(p, reinterpret_cast<__m512>(v));
#elif defined(__AVX2__)
  _mm256_stream_ps(p, reinterpret_cast<__m256>(v));
#else
  _mm_stream_ps(p, reinterpret_cast<__m128>(v));
#endif
}
inline void stream_fence() { _mm_sfence(); }

// Elements from p to the next kVecBytes boundary (p is 4-byte aligned).
inline int64_t to_aligned(const float* p) {
  return static_cast<int64_t>((-reinterpret_cast<uintptr_t>(p) / 4) & (kW - 1));
}

// out[j] for j < n from f(j, m), the vector at j with m valid lanes (m < kW only at the ends):
// streamed where aligned when `nt`, else plain stores.
template <typename F>
inline void write_row(float* out, int64_t n, bool nt, F f) {
  int64_t j = 0;
  if (nt) {
    const int64_t head = std::min(to_aligned(out), n);
    if (head > 0) stf_part(out, f(0, head), head);
    for (j = head; j + kW <= n; j += kW) stream(out + j, f(j, kW));
  } else {
    for (; j + kW <= n; j += kW) stf(out + j, f(j, kW));
  }
  if (j < n) stf_part(out + j, f(j, n - j), n - j);
}

// x[j..j+m) as a vector (m == kW: a plain load).
inline vf ldf_n(const float* p, int64_t m) { return m == kW ? ldf(p) : ldf_part(p, m); }
