// The vector lanes of the cpu backend's reduction and norm loops (reduction_loops.h): GCC's
// vector types of the ISA's register width (kVecBytes), loads and stores, widening f32 to f64,
// masked loads of a row's last part, folding the lanes, |x|, "wild" lanes and prefetching. Like
// reduction_loops.h it is included inside each ISA unit's own namespace (reduction_avx512.cpp,
// reduction_avx2.cpp, reduction_portable.cpp) after kVecBytes is defined. The loops use these
// explicit lanes rather than auto-vectorisation, because floating reductions only vectorise
// when the lanes are written out (the compiler may not reorder the additions). Wider types than
// the registers are not lowered to pairs of registers: a loop's accumulators of a 64-byte type
// lived on the stack under AVX2 (a sum of f32 ran at a fifth of ATen's speed).

using vf = float __attribute__((vector_size(kVecBytes)));
using vd = double __attribute__((vector_size(kVecBytes)));
using vi = int32_t __attribute__((vector_size(kVecBytes)));
using vl = int64_t __attribute__((vector_size(kVecBytes)));
using vfh = float __attribute__((vector_size(kVecBytes / 2)));  // the floats of one vd
constexpr int kD = kVecBytes / 8;                               // lanes of a vd
constexpr int kP = 2 * kD;  // elements of one to_d: the lanes of two vd

// Lanes of T: the vector, its comparison mask (also the lane index type) and the lane count.
template <typename T>
struct Lanes;
template <>
struct Lanes<float> {
  using V = vf;
  using M = vi;
  using I = int32_t;
  static constexpr int kN = kVecBytes / 4;
};
template <>
struct Lanes<double> {
  using V = vd;
  using M = vl;
  using I = int64_t;
  static constexpr int kN = kVecBytes / 8;
};

template <typename V, typename T>
inline V load(const T* p) {
  V v;
  std::memcpy(&v, p, sizeof(V));
  return v;
}
template <typename V, typename T>
inline void store(T* p, const V& v) {
  std::memcpy(p, &v, sizeof(V));
}

// kP elements from p as two f64 vectors.
inline void to_d(const float* p, vd& lo, vd& hi) {
#ifdef CRUCIBLE_RED_AVX512
  // (the maskz_ form: GCC 12 warns about the undefined pass-through of the unmasked one)
  lo = (vd)_mm512_maskz_cvtps_pd(0xff, _mm256_loadu_ps(p));
  hi = (vd)_mm512_maskz_cvtps_pd(0xff, _mm256_loadu_ps(p + 8));
#elif defined(CRUCIBLE_RED_AVX2)
  // (GCC 12 converts a 4-float vector type two floats at a time)
  lo = (vd)_mm256_cvtps_pd(_mm_loadu_ps(p));
  hi = (vd)_mm256_cvtps_pd(_mm_loadu_ps(p + 4));
#else
  lo = __builtin_convertvector(load<vfh>(p), vd);
  hi = __builtin_convertvector(load<vfh>(p + kD), vd);
#endif
}
inline void to_d(const double* p, vd& lo, vd& hi) {
  lo = load<vd>(p);
  hi = load<vd>(p + kD);
}

// The sum and the product of the lanes, halving: the upper half of the lanes combined into the
// lower, until one lane is left (log2 of the lanes vector operations, no trip through memory:
// a row of a few dozen elements spent more time in a lane-by-lane fold than in its loop).
using vd4 = double __attribute__((vector_size(32)));
using vd2 = double __attribute__((vector_size(16)));
using vf8 = float __attribute__((vector_size(32)));
using vf4 = float __attribute__((vector_size(16)));
template <typename Op>
inline double fold2(const vd2& v, Op op) {
  return op(v[0], v[1]);
}
template <typename Op>
inline double fold4(const vd4& v, Op op) {
  return fold2(op(__builtin_shufflevector(v, v, 0, 1), __builtin_shufflevector(v, v, 2, 3)), op);
}
template <typename V, typename Op>
inline double fold_lanes(const V& v, Op op) {
  if constexpr (sizeof(V) == 64)
    return fold4(
        op(__builtin_shufflevector(v, v, 0, 1, 2, 3), __builtin_shufflevector(v, v, 4, 5, 6, 7)),
        op);
  else if constexpr (sizeof(V) == 32)
    return fold4(v, op);
  else
    return fold2(v, op);
}
inline double hsum(const vd& v) {
  return fold_lanes(v, [](auto a, auto b) { return a + b; });
}
inline double hprod(const vd& v) {
  return fold_lanes(v, [](auto a, auto b) { return a * b; });
}
// The sum of f32 lanes, halving in f32.
inline float hsum_f4(const vf4& v) {
  const vf4 a = v + __builtin_shufflevector(v, v, 2, 3, 0, 1);
  return a[0] + a[1];
}
inline float hsum_f8(const vf8& v) {
  return hsum_f4(__builtin_shufflevector(v, v, 0, 1, 2, 3) +
                 __builtin_shufflevector(v, v, 4, 5, 6, 7));
}
template <typename V>
inline float hsum_f(const V& v) {
  if constexpr (sizeof(V) == 64)
    return hsum_f8(__builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7) +
                   __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15));
  else if constexpr (sizeof(V) == 32)
    return hsum_f8(v);
  else
    return hsum_f4(v);
}
inline float hsum(const vf& v) { return hsum_f(v); }
inline vd vabs(const vd& v) { return (vd)((vl)v & 0x7fffffffffffffffLL); }
inline vf vabs(const vf& v) { return (vf)((vi)v & 0x7fffffff); }

// "Wild" lanes: NaN, infinite or above 2^50 in magnitude (the criterion of extreme()).
inline vl wild(const vd& v) { return ~(vabs(v) <= 0x1p50); }
inline vi wild(const vf& v) { return ~(vabs(v) <= 0x1p50f); }
template <typename T>
inline bool wild1(T v) {
  return !(std::abs(static_cast<double>(v)) <= 0x1p50);
}

template <typename M>
inline bool any_lane(const M& m) {
  typename Lanes<float>::I acc = 0;
  for (int k = 0; k < static_cast<int>(sizeof(M) / sizeof(m[0])); ++k)
    acc |= static_cast<int32_t>(m[k] != 0);
  return acc != 0;
}

// Software prefetch kAhead bytes in front of a stream: with one stream per core the hardware
// prefetchers alone leave these loops well short of the memory bandwidth.
constexpr int64_t kAhead = 8192;
template <typename T>
inline void ahead(const T* p) {
  __builtin_prefetch(reinterpret_cast<const char*>(p) + kAhead);
}
// The lines of kP elements from p (a line or part of one; two lines of f64 under AVX-512).
template <typename T>
inline void ahead_p(const T* p) {
  ahead(p);
  if constexpr (kP * sizeof(T) > 64) ahead(p + 64 / sizeof(T));
}

// The kP floats of a vf as two f64 vectors (from a register: one load of a whole line).
inline void split_d(const vf& v, vd& lo, vd& hi) {
#ifdef CRUCIBLE_RED_AVX512
  lo = (vd)_mm512_maskz_cvtps_pd(0xff,
                                 (__m256)__builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7));
  hi = (vd)_mm512_maskz_cvtps_pd(
      0xff, (__m256)__builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15));
#elif defined(CRUCIBLE_RED_AVX2)
  const __m256 w = (__m256)v;
  lo = (vd)_mm256_cvtps_pd(_mm256_castps256_ps128(w));
  hi = (vd)_mm256_cvtps_pd(_mm256_extractf128_ps(w, 1));
#else
  lo = __builtin_convertvector(__builtin_shufflevector(v, v, 0, 1), vd);
  hi = __builtin_convertvector(__builtin_shufflevector(v, v, 2, 3), vd);
#endif
}

// The first n (0 < n < lanes) elements from p, the other lanes zero, reading nothing past them.
inline vf load_head(const float* p, int64_t n) {
#ifdef CRUCIBLE_RED_AVX512
  return (vf)_mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << n) - 1), p);
#elif defined(CRUCIBLE_RED_AVX2)
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return (vf)_mm256_maskload_ps(p,
                                _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), lane));
#else
  vf v{};
  for (int64_t k = 0; k < n; ++k) v[k] = p[k];
  return v;
#endif
}
inline vd load_head(const double* p, int64_t n) {
#ifdef CRUCIBLE_RED_AVX512
  return (vd)_mm512_maskz_loadu_pd(static_cast<__mmask8>((1u << n) - 1), p);
#elif defined(CRUCIBLE_RED_AVX2)
  const __m256i lane = _mm256_setr_epi64x(0, 1, 2, 3);
  return (vd)_mm256_maskload_pd(p, _mm256_cmpgt_epi64(_mm256_set1_epi64x(n), lane));
#else
  vd v{};
  for (int64_t k = 0; k < n; ++k) v[k] = p[k];
  return v;
#endif
}
