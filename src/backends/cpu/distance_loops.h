// The f32 row distances of distance_kernels.h. Included inside an ISA's namespace after
// <immintrin.h>, <cstdint> and <cmath>, with kVecBytes defined (see vec_f32.h).
#include "backends/cpu/vec_f32.h"

// |v|: the sign bits cleared.
inline vf vabs(vf v) { return reinterpret_cast<vf>(reinterpret_cast<vi>(v) & 0x7fffffff); }

// The term of one difference vector d for norm N (0: d != 0, 1: |d|, 2: d^2, 3: |d|).
template <int N>
inline vf term(vf d) {
  if constexpr (N == 0)
    return reinterpret_cast<vf>(reinterpret_cast<vi>(splat(1.0f)) & (d != vf{}));
  if constexpr (N == 2) return d * d;
  return vabs(d);
}

// Two accumulators of kW lanes; the tail is read with partial loads (zero lanes add nothing and
// never raise the maximum, which starts at 0).
template <int N>
float row_distance(const float* a, const float* b, int64_t m) {
  vf acc0 = vf{}, acc1 = vf{};
  int64_t k = 0;
  for (; k + 2 * kW <= m; k += 2 * kW) {
    const vf t0 = term<N>(ldf(a + k) - ldf(b + k));
    const vf t1 = term<N>(ldf(a + k + kW) - ldf(b + k + kW));
    if constexpr (N == 3) {
      acc0 = t0 > acc0 ? t0 : acc0;
      acc1 = t1 > acc1 ? t1 : acc1;
    } else {
      acc0 += t0;
      acc1 += t1;
    }
  }
  for (; k < m; k += kW) {
    const int64_t w = std::min<int64_t>(kW, m - k);
    const vf t = term<N>(ldf_n(a + k, w) - ldf_n(b + k, w));
    if constexpr (N == 3)
      acc0 = t > acc0 ? t : acc0;
    else
      acc0 += t;
  }
  if constexpr (N == 3) {
    acc0 = acc1 > acc0 ? acc1 : acc0;
    float best = 0;
    for (int l = 0; l < kW; ++l) best = acc0[l] > best ? acc0[l] : best;
    return best;
  } else {
    const float s = hsum_tree(acc0 + acc1);
    return N == 2 ? std::sqrt(s) : s;
  }
}

inline DistanceKernels make_kernels() {
  return {{row_distance<0>, row_distance<1>, row_distance<2>, row_distance<3>}};
}
