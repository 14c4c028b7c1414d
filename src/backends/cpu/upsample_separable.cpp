// The `cpu` backend's f32 upsampling (nearest backward, bilinear and bicubic both ways) as two
// one-axis passes per plane. Forward: every input row is interpolated along W into a plane
// buffer, then each output row combines its H taps' buffer rows (whole-row vector operations).
// Backward: each gradient row is reduced along W by gathering, for every input column, the
// outputs that read it (a transposed tap list, so no two writes meet), then added into the
// input rows of its H taps. Planes are spread over the pool. A plane holding an extreme value
// makes the whole call return false (the caller computes it in f64, in the reference's order).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <vector>

#include "backends/cpu/index_util.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/upsample_internal.h"

namespace crucible::cpu::upsample {
namespace {

// Taps as f32 weights.
struct TapsF {
  int64_t n = 1, count = 0;
  std::vector<int64_t> src;
  std::vector<float> w;
};

TapsF to_f32(const AxisTaps& t, int64_t count) {
  TapsF f;
  f.n = t.n;
  f.count = count;
  f.src = t.src;
  f.w.assign(t.w.begin(), t.w.end());
  return f;
}

// The transpose of a tap list: for every input index i, the outputs o that read it with their
// weights, as ranges [start[i], start[i + 1]) of (dst, w), outputs in increasing order.
struct Adjoint {
  std::vector<int64_t> start, dst;
  std::vector<float> w;
};

Adjoint adjoint(const TapsF& t, int64_t in) {
  Adjoint a;
  a.start.assign(static_cast<size_t>(in) + 1, 0);
  for (int64_t k = 0; k < t.count * t.n; ++k) ++a.start[t.src[k] + 1];
  for (int64_t i = 0; i < in; ++i) a.start[i + 1] += a.start[i];
  std::vector<int64_t> fill(a.start.begin(), a.start.end() - 1);
  a.dst.resize(static_cast<size_t>(t.count * t.n));
  a.w.resize(a.dst.size());
  for (int64_t o = 0; o < t.count; ++o)
    for (int64_t k = 0; k < t.n; ++k) {
      const int64_t i = t.src[o * t.n + k];
      a.dst[fill[i]] = o;
      a.w[fill[i]] = t.w[o * t.n + k];
      ++fill[i];
    }
  return a;
}

// y[0, n) += a * x[0, n)
__attribute__((optimize("O3"))) void axpy(float* __restrict y, const float* __restrict x, float a,
                                          int64_t n) {
  for (int64_t j = 0; j < n; ++j) y[j] += a * x[j];
}

// One output row from its H taps' rows: y = sum_k w[k] * rows[k] (written once).
__attribute__((optimize("O3"))) void blend(float* __restrict y, const float* const* rows,
                                           const float* w, int64_t taps, int64_t n) {
  if (taps == 1) {
    const float* a = rows[0];
    const float wa = w[0];
    for (int64_t j = 0; j < n; ++j) y[j] = wa * a[j];
  } else if (taps == 2) {
    const float *a = rows[0], *b = rows[1];
    const float wa = w[0], wb = w[1];
    for (int64_t j = 0; j < n; ++j) y[j] = wa * a[j] + wb * b[j];
  } else {
    const float *a = rows[0], *b = rows[1], *c = rows[2], *d = rows[3];
    const float wa = w[0], wb = w[1], wc = w[2], wd = w[3];
    for (int64_t j = 0; j < n; ++j) y[j] = wa * a[j] + wb * b[j] + wc * c[j] + wd * d[j];
  }
}

// One row along W: out[o] = sum_k w[o, k] * in[src[o, k]].
__attribute__((optimize("O3"))) void row_taps(float* __restrict out, const float* __restrict in,
                                              const TapsF& t) {
  const int64_t* s = t.src.data();
  const float* w = t.w.data();
  if (t.n == 1) {
    for (int64_t o = 0; o < t.count; ++o) out[o] = w[o] * in[s[o]];
  } else if (t.n == 2) {
    for (int64_t o = 0; o < t.count; ++o)
      out[o] = w[2 * o] * in[s[2 * o]] + w[2 * o + 1] * in[s[2 * o + 1]];
  } else {
    for (int64_t o = 0; o < t.count; ++o) {
      float acc = 0;
      for (int64_t k = 0; k < t.n; ++k) acc += w[o * t.n + k] * in[s[o * t.n + k]];
      out[o] = acc;
    }
  }
}

// One gradient row reduced along W: out[i] = sum over the outputs o reading i of w * g[o].
__attribute__((optimize("O3"))) void row_adjoint(float* __restrict out, const float* __restrict g,
                                                 const Adjoint& a, int64_t in) {
  for (int64_t i = 0; i < in; ++i) {
    float acc = 0;
    for (int64_t k = a.start[i]; k < a.start[i + 1]; ++k) acc += a.w[k] * g[a.dst[k]];
    out[i] = acc;
  }
}

}  // namespace

bool separable_forward_f32(const Plan& p, const float* x, float* out) {
  const TapsF th = to_f32(p.th, p.oh), tw = to_f32(p.tw, p.ow);
  std::atomic<bool> extreme{false};
  const int64_t plane_in = p.ih * p.iw, plane_out = p.oh * p.ow;
  parallel_for(0, p.nc, std::max<int64_t>(1, 65536 / std::max<int64_t>(plane_out, 1)),
               [&](int64_t c0, int64_t c1) {
                 std::vector<float> rows(static_cast<size_t>(p.ih * p.ow));
                 for (int64_t c = c0; c < c1 && !extreme; ++c) {
                   const float* xp = x + c * plane_in;
                   if (any_extreme_f32(xp, plane_in)) {
                     extreme = true;
                     return;
                   }
                   for (int64_t r = 0; r < p.ih; ++r) row_taps(&rows[r * p.ow], xp + r * p.iw, tw);
                   float* op = out + c * plane_out;
                   for (int64_t y = 0; y < p.oh; ++y) {
                     const float* r[4];
                     for (int64_t k = 0; k < th.n; ++k) r[k] = &rows[th.src[y * th.n + k] * p.ow];
                     blend(op + y * p.ow, r, &th.w[y * th.n], th.n, p.ow);
                   }
                 }
               });
  return !extreme;
}

bool separable_backward_f32(const Plan& p, const float* g, float* out) {
  const TapsF th = to_f32(p.th, p.oh), tw = to_f32(p.tw, p.ow);
  const Adjoint aw = adjoint(tw, p.iw);
  std::atomic<bool> extreme{false};
  const int64_t plane_in = p.ih * p.iw, plane_out = p.oh * p.ow;
  parallel_for(0, p.nc, std::max<int64_t>(1, 65536 / std::max<int64_t>(plane_out, 1)),
               [&](int64_t c0, int64_t c1) {
                 std::vector<float> t(static_cast<size_t>(p.iw));
                 for (int64_t c = c0; c < c1 && !extreme; ++c) {
                   const float* gp = g + c * plane_out;
                   if (any_extreme_f32(gp, plane_out)) {
                     extreme = true;
                     return;
                   }
                   float* op = out + c * plane_in;
                   std::fill(op, op + plane_in, 0.0f);
                   for (int64_t y = 0; y < p.oh; ++y) {
                     row_adjoint(t.data(), gp + y * p.ow, aw, p.iw);
                     for (int64_t k = 0; k < th.n; ++k)
                       axpy(op + th.src[y * th.n + k] * p.iw, t.data(), th.w[y * th.n + k], p.iw);
                   }
                 }
               });
  return !extreme;
}

}  // namespace crucible::cpu::upsample
