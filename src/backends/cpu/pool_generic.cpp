// The generic pooling plane kernels (see pool_kernels.h): the reference's loops, sums in double
// rounded once, for f64, irregular adaptive windows and the planes the f32 vector kernels give
// back. Also the f32 max-pool backward scatter and the vector kernels' scratch sizing.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/cpu/pool_kernels.h"
#include "crucible/core/error.h"

namespace crucible::cpu {
namespace {

// One output's window, clamped to the input, and (average pooling) its divisor.
struct Span {
  int64_t lo[3], hi[3];
  int64_t divisor = 1;
  bool empty = false;
};

Span avg_span(const PoolGeom& g, const int64_t o[3]) {
  Span w;
  int64_t pool = 1, inside = 1;
  for (int i = 0; i < 3; ++i) {
    if (g.adaptive) {
      w.lo[i] = (o[i] * g.in[i]) / g.out[i];
      w.hi[i] = ((o[i] + 1) * g.in[i] + g.out[i] - 1) / g.out[i];
      pool *= w.hi[i] - w.lo[i];
      inside = pool;
      continue;
    }
    const int64_t a = o[i] * g.s[i] - g.p[i];
    const int64_t b = std::min(a + g.k[i], g.in[i] + g.p[i]);
    pool *= b - a;
    w.lo[i] = std::max<int64_t>(a, 0);
    w.hi[i] = std::min(b, g.in[i]);
    inside *= std::max<int64_t>(w.hi[i] - w.lo[i], 0);
  }
  for (int i = 0; i < 3; ++i) w.empty = w.empty || w.lo[i] >= w.hi[i];
  w.divisor = g.adaptive ? pool : g.divisor != 0 ? g.divisor : g.count_include_pad ? pool : inside;
  return w;
}

template <typename Fn>
void each_output(const PoolGeom& g, Fn fn) {
  int64_t o[3], at = 0;
  for (o[0] = 0; o[0] < g.out[0]; ++o[0])
    for (o[1] = 0; o[1] < g.out[1]; ++o[1])
      for (o[2] = 0; o[2] < g.out[2]; ++o[2]) fn(o, at++);
}

template <typename Fn>
void each_in_span(const PoolGeom& g, const Span& w, Fn fn) {
  for (int64_t a = w.lo[0]; a < w.hi[0]; ++a)
    for (int64_t b = w.lo[1]; b < w.hi[1]; ++b)
      for (int64_t c = w.lo[2]; c < w.hi[2]; ++c) fn((a * g.in[1] + b) * g.in[2] + c);
}

// Max over output o's window: NaN wins, the first in-range position starts.
template <typename E>
void max_one(const PoolGeom& g, const E* x, const int64_t o[3], E* best_out, int64_t* at_out) {
  E best = -std::numeric_limits<E>::infinity();
  int64_t at = -1;
  const auto visit = [&](int64_t pos) {
    if (at < 0) at = pos;
    if (x[pos] > best || std::isnan(x[pos])) {
      best = x[pos];
      at = pos;
    }
  };
  if (g.adaptive) {
    each_in_span(g, avg_span(g, o), visit);
  } else {
    for (int64_t ka = 0; ka < g.k[0]; ++ka) {
      const int64_t a = o[0] * g.s[0] - g.p[0] + ka * g.d[0];
      if (a < 0 || a >= g.in[0]) continue;
      for (int64_t kb = 0; kb < g.k[1]; ++kb) {
        const int64_t b = o[1] * g.s[1] - g.p[1] + kb * g.d[1];
        if (b < 0 || b >= g.in[1]) continue;
        for (int64_t kc = 0; kc < g.k[2]; ++kc) {
          const int64_t c = o[2] * g.s[2] - g.p[2] + kc * g.d[2];
          if (c >= 0 && c < g.in[2]) visit((a * g.in[1] + b) * g.in[2] + c);
        }
      }
    }
  }
  *best_out = best;
  *at_out = at;
}

[[noreturn]] void bad_index(int64_t at) {
  op_error("index " + std::to_string(at) + " is out of bounds");
}

}  // namespace

void pool_max_one(const PoolGeom& g, const float* x, const int64_t o[3], float* y, int64_t* idx) {
  max_one(g, x, o, y, idx);
}

template <typename E>
void pool_max_plane(const PoolGeom& g, const E* x, E* y, int64_t* idx) {
  each_output(g, [&](const int64_t o[3], int64_t at) { max_one(g, x, o, &y[at], &idx[at]); });
}

// Floating: sums in double, rounded once. int64 (average pooling takes it): exact sums and C++'s
// truncating division, as the reference.
template <typename E>
void pool_avg_plane(const PoolGeom& g, const E* x, E* y) {
  using Acc = std::conditional_t<std::is_integral_v<E>, int64_t, double>;
  each_output(g, [&](const int64_t o[3], int64_t at) {
    const Span w = avg_span(g, o);
    if (w.empty) {
      y[at] = E(0);
      return;
    }
    Acc sum = 0;
    each_in_span(g, w, [&](int64_t pos) { sum += static_cast<Acc>(x[pos]); });
    y[at] = static_cast<E>(sum / static_cast<Acc>(w.divisor));
  });
}

template <typename E>
void pool_avg_backward_plane(const PoolGeom& g, const E* go, E* gi, std::vector<double>& dacc) {
  using Acc = std::conditional_t<std::is_integral_v<E>, int64_t, double>;
  std::vector<int64_t> iacc;
  std::vector<Acc>& acc = [&]() -> std::vector<Acc>& {
    if constexpr (std::is_integral_v<E>)
      return iacc;
    else
      return dacc;
  }();
  acc.assign(static_cast<size_t>(g.in_plane()), Acc(0));
  each_output(g, [&](const int64_t o[3], int64_t at) {
    const Span w = avg_span(g, o);
    if (w.empty) return;
    const Acc v = static_cast<Acc>(go[at]) / static_cast<Acc>(w.divisor);
    each_in_span(g, w, [&](int64_t pos) { acc[static_cast<size_t>(pos)] += v; });
  });
  for (int64_t i = 0; i < g.in_plane(); ++i) gi[i] = static_cast<E>(acc[static_cast<size_t>(i)]);
}

bool pool_max_backward_plane_f32(const float* go, const int64_t* idx, int64_t out_plane,
                                 int64_t in_plane, float* gi) {
  std::memset(gi, 0, static_cast<size_t>(in_plane) * sizeof(float));
  bool ok = true;
  for (int64_t o = 0; o < out_plane; ++o) {
    const int64_t at = idx[o];
    if (at < 0 || at >= in_plane) bad_index(at);
    ok = ok && std::fabs(go[o]) <= 1125899906842624.0f;  // 2^50; false for NaN
    gi[at] += go[o];
  }
  return ok;
}

template <typename E>
void pool_max_backward_plane(const E* go, const int64_t* idx, int64_t out_plane, int64_t in_plane,
                             E* gi, std::vector<double>& acc) {
  acc.assign(static_cast<size_t>(in_plane), 0.0);
  for (int64_t o = 0; o < out_plane; ++o) {
    const int64_t at = idx[o];
    if (at < 0 || at >= in_plane) bad_index(at);
    acc[static_cast<size_t>(at)] += static_cast<double>(go[o]);
  }
  for (int64_t i = 0; i < in_plane; ++i) gi[i] = static_cast<E>(acc[static_cast<size_t>(i)]);
}

template void pool_max_plane<float>(const PoolGeom&, const float*, float*, int64_t*);
template void pool_max_plane<double>(const PoolGeom&, const double*, double*, int64_t*);
template void pool_avg_plane<float>(const PoolGeom&, const float*, float*);
template void pool_avg_plane<double>(const PoolGeom&, const double*, double*);
template void pool_avg_backward_plane<float>(const PoolGeom&, const float*, float*,
                                             std::vector<double>&);
template void pool_avg_backward_plane<double>(const PoolGeom&, const double*, double*,
                                              std::vector<double>&);
template void pool_avg_plane<int64_t>(const PoolGeom&, const int64_t*, int64_t*);
template void pool_avg_backward_plane<int64_t>(const PoolGeom&, const int64_t*, int64_t*,
                                               std::vector<double>&);
template void pool_max_backward_plane<float>(const float*, const int64_t*, int64_t, int64_t, float*,
                                             std::vector<double>&);
template void pool_max_backward_plane<double>(const double*, const int64_t*, int64_t, int64_t,
                                              double*, std::vector<double>&);

// SSE2 (every x86-64): the copy is bound by memory, not by the vector width.
void pool_stream_copy(void* dst, const void* src, int64_t bytes) {
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  const int64_t head =
      std::min<int64_t>(bytes, static_cast<int64_t>((-reinterpret_cast<uintptr_t>(d)) & 15));
  std::memcpy(d, s, static_cast<size_t>(head));
  int64_t i = head;
  for (; i + 16 <= bytes; i += 16)
    _mm_stream_ps(reinterpret_cast<float*>(d + i),
                  _mm_loadu_ps(reinterpret_cast<const float*>(s + i)));
  std::memcpy(d + i, s + i, static_cast<size_t>(bytes - i));
}

void pool_stream_fence() { _mm_sfence(); }

bool pool_vector_ok(const PoolGeom& g) { return !g.adaptive && g.in_plane() < (int64_t{1} << 31); }

namespace {

// Per dim: the window's size counting the padding (count_include_pad), or its in-range size.
int64_t extent(const PoolGeom& g, int dim, int64_t o) {
  const int64_t a = o * g.s[dim] - g.p[dim];
  const int64_t b = std::min(a + g.k[dim], g.in[dim] + g.p[dim]);
  if (g.count_include_pad) return b - a;
  return std::max<int64_t>(std::min(b, g.in[dim]) - std::max<int64_t>(a, 0), 0);
}

}  // namespace

void pool_prepare(const PoolGeom& g, PoolScratch& s) {
  const int64_t len = pool_row_len(g), ow_n = g.out[2], rows = g.out[0] * g.out[1];
  // The backward's zero-stuffed grad row and its t row (pool_loops.h, avg_bwd) after the row.
  const int64_t tz = (g.k[2] - 1) * g.d[2] + std::max(ow_n * g.s[2], g.in[2] + g.p[2]) + ow_n;
  s.f.resize(static_cast<size_t>(len + tz + 6 * kPoolMaxLanes));
  s.i.resize(static_cast<size_t>(len));
  s.pad_fill = 0;
  s.row_ids.clear();
  s.row_start.assign(1, 0);
  s.div_stride = ow_n + kPoolMaxLanes;
  s.div.assign(static_cast<size_t>(rows * s.div_stride), 1.0f);
  std::vector<float> cols(static_cast<size_t>(ow_n));
  for (int64_t ow = 0; ow < ow_n; ++ow) {
    const int64_t a = ow * g.s[2] - g.p[2];
    const bool empty = std::min(a + g.k[2], g.in[2]) <= std::max<int64_t>(a, 0);
    cols[static_cast<size_t>(ow)] = empty ? 0.0f : static_cast<float>(extent(g, 2, ow));
  }
  for (int64_t od = 0; od < g.out[0]; ++od)
    for (int64_t oh = 0; oh < g.out[1]; ++oh) {
      for (int64_t ka = 0; ka < g.k[0]; ++ka) {
        const int64_t a = od * g.s[0] - g.p[0] + ka * g.d[0];
        if (a < 0 || a >= g.in[0]) continue;
        for (int64_t kb = 0; kb < g.k[1]; ++kb) {
          const int64_t b = oh * g.s[1] - g.p[1] + kb * g.d[1];
          if (b >= 0 && b < g.in[1]) s.row_ids.push_back(static_cast<int32_t>(a * g.in[1] + b));
        }
      }
      s.row_start.push_back(static_cast<int32_t>(s.row_ids.size()));
      const float rf = static_cast<float>(extent(g, 0, od) * extent(g, 1, oh));
      float* div = s.div.data() + (od * g.out[1] + oh) * s.div_stride;
      for (int64_t ow = 0; ow < ow_n; ++ow) {
        const float c = cols[static_cast<size_t>(ow)];
        div[ow] = c == 0.0f ? 0.0f : g.divisor != 0 ? static_cast<float>(g.divisor) : rf * c;
      }
    }
}

}  // namespace crucible::cpu
