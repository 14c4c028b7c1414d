// The f32 pooling plane kernels (see pool_kernels.h), instantiated once per ISA translation
// unit: pool_avx512.cpp, pool_avx2.cpp and pool_portable.cpp define kVecBytes (the vector
// width) and include this file inside a namespace of their own, after <immintrin.h>, <algorithm>,
// <cmath>, <cstdint>, <cstring> and pool_kernels.h. Written with GCC vector types: the
// auto-vectorizer keeps NaN-aware selects scalar.
//
// Each output row (od, oh) first combines the in-range input rows of its window element by
// element into the scratch row (max with the id of the row that holds it, or sum), whose
// margins hold -inf or 0 so that every tap along W can be read as a whole vector: out-of-range
// taps never win a max (a lane whose max is -inf, where such a tap may have won or the window
// holds only -inf, is recomputed by the generic scalar kernel) and add 0 to a sum. The taps
// of kW adjacent outputs are one vector load (stride 1) or the even lanes of two (stride 2);
// other strides take the scalar loop. The last vector of a row is moved back to end at the
// row's end (it recomputes some outputs rather than writing past the row).

#include "backends/cpu/vec_f32.h"

constexpr float kWideF = 1125899906842624.0f;  // 2^50: larger values go to the generic kernel

// The taps of kW outputs whose first tap is at p: stride 1 or 2.
template <int S>
inline vf tapf(const float* p) {
  if constexpr (S == 1) {
    return ldf(p);
  } else {
    return __builtin_shuffle(ldf(p), ldf(p + kW), iota(2));
  }
}
template <int S>
inline vi tapi(const int32_t* p) {
  if constexpr (S == 1) {
    return ldi(p);
  } else {
    return __builtin_shuffle(ldi(p), ldi(p + kW), iota(2));
  }
}

inline vi wide(vf v) {
  return ~(reinterpret_cast<vf>(reinterpret_cast<vi>(v) & 0x7fffffff) <= kWideF);
}
// The margins of the scratch row: -inf (max) or 0 (sums); the row ids' margins 0.
void prepare(const PoolGeom& g, PoolScratch& s, int fill) {
  if (s.pad_fill == fill) return;
  const int64_t len = pool_row_len(g);
  std::fill(s.f.begin(), s.f.begin() + len, fill == 1 ? -__builtin_inff() : 0.0f);
  std::fill(s.i.begin(), s.i.begin() + len, 0);
  s.pad_fill = fill;
}

// The in-range input rows of output row (od, oh): their ids (d * H + h) in s.row_ids; returns
// how many.
int window_rows(const PoolGeom& g, int64_t od, int64_t oh, PoolScratch& s) {
  int r = 0;
  for (int64_t ka = 0; ka < g.k[0]; ++ka) {
    const int64_t a = od * g.s[0] - g.p[0] + ka * g.d[0];
    if (a < 0 || a >= g.in[0]) continue;
    for (int64_t kb = 0; kb < g.k[1]; ++kb) {
      const int64_t b = oh * g.s[1] - g.p[1] + kb * g.d[1];
      if (b >= 0 && b < g.in[1])
        s.row_ids[static_cast<size_t>(r++)] = static_cast<int32_t>(a * g.in[1] + b);
    }
  }
  return r;
}

// ---- max ---------------------------------------------------------------------------------------

void vert_max(const float* x, int64_t n, const int32_t* ids, int nr, float* out, int32_t* oid) {
  int64_t c = 0;
  for (; c + kW <= n; c += kW) {
    vf b = ldf(x + ids[0] * n + c);
    vi bi = vi{} + ids[0];
    for (int r = 1; r < nr; ++r) {
      const vf v = ldf(x + ids[r] * n + c);
      const vi take = (v > b) | (v != v);
      b = take ? v : b;
      bi = take ? vi{} + ids[r] : bi;
    }
    stf(out + c, b);
    sti(oid + c, bi);
  }
  if (c < n) {
    const int64_t m = n - c;
    vf b = ldf_part(x + ids[0] * n + c, m);
    vi bi = vi{} + ids[0];
    for (int r = 1; r < nr; ++r) {
      const vf v = ldf_part(x + ids[r] * n + c, m);
      const vi take = (v > b) | (v != v);
      b = take ? v : b;
      bi = take ? vi{} + ids[r] : bi;
    }
    stf_part(out + c, b, m);
    sti_part(oid + c, bi, m);
  }
}

// Outputs [0, OW) of one row from the combined row (row, ids: column 0).
template <int S>
void horiz_max(const PoolGeom& g, const float* row, const int32_t* ids, float* y, int64_t* idx,
               const float* x, int64_t od, int64_t oh) {
  const int64_t ow_n = g.out[2], w = g.in[2];
  const vi cols = iota(S);
  for (int64_t ow0 = 0; ow0 < ow_n; ow0 += kW) {
    const int64_t at = ow_n >= kW ? std::min(ow0, ow_n - kW) : ow0;
    const int64_t c0 = at * S - g.p[2];
    vf b = tapf<S>(row + c0);
    vi bi = tapi<S>(ids + c0);
    vi bc = cols + static_cast<int32_t>(c0);
    for (int64_t kw = 1; kw < g.k[2]; ++kw) {
      const int64_t c = c0 + kw * g.d[2];
      const vf v = tapf<S>(row + c);
      const vi take = (v > b) | (v != v);
      b = take ? v : b;
      bi = take ? tapi<S>(ids + c) : bi;
      bc = take ? cols + static_cast<int32_t>(c) : bc;
    }
    const vi flat = bi * static_cast<int32_t>(w) + bc;
    const int64_t nv = std::min<int64_t>(kW, ow_n - at);
    if (nv == kW) {
      stf(y + at, b);
      stl(idx + at, __builtin_convertvector(flat, vl));
    } else {
      stf_part(y + at, b, nv);
      int64_t wide_idx[kW];
      stl(wide_idx, __builtin_convertvector(flat, vl));
      std::memcpy(idx + at, wide_idx, static_cast<size_t>(nv) * sizeof(int64_t));
    }
    if (any(b == -__builtin_inff()))
      for (int64_t l = 0; l < nv; ++l)
        if (b[l] == -__builtin_inff()) {
          const int64_t o[3] = {od, oh, at + l};
          pool_max_one(g, x, o, &y[at + l], &idx[at + l]);
        }
  }
}

void horiz_max_any(const PoolGeom& g, const float* row, const int32_t* ids, float* y, int64_t* idx,
                   const float* x, int64_t od, int64_t oh) {
  for (int64_t ow = 0; ow < g.out[2]; ++ow) {
    const int64_t c0 = ow * g.s[2] - g.p[2];
    float b = row[c0];
    int64_t bc = c0;
    for (int64_t kw = 1; kw < g.k[2]; ++kw) {
      const int64_t c = c0 + kw * g.d[2];
      if (row[c] > b || row[c] != row[c]) {
        b = row[c];
        bc = c;
      }
    }
    y[ow] = b;
    idx[ow] = static_cast<int64_t>(ids[bc]) * g.in[2] + bc;
    if (b == -__builtin_inff()) {
      const int64_t o[3] = {od, oh, ow};
      pool_max_one(g, x, o, &y[ow], &idx[ow]);
    }
  }
}

void max_fwd(const PoolGeom& g, const float* x, float* y, int64_t* idx, PoolScratch& s) {
  prepare(g, s, 1);
  const int64_t pad = pool_row_pad(g);
  float* row = s.f.data() + pad;
  int32_t* ids = s.i.data() + pad;
  for (int64_t od = 0; od < g.out[0]; ++od)
    for (int64_t oh = 0; oh < g.out[1]; ++oh) {
      const int64_t at = (od * g.out[1] + oh) * g.out[2];
      const int nr = window_rows(g, od, oh, s);
      if (nr == 0) {  // no in-range row: the generic kernel's -inf and index -1
        for (int64_t ow = 0; ow < g.out[2]; ++ow) {
          const int64_t o[3] = {od, oh, ow};
          pool_max_one(g, x, o, &y[at + ow], &idx[at + ow]);
        }
        continue;
      }
      vert_max(x, g.in[2], s.row_ids.data(), nr, row, ids);
      if (g.s[2] == 1)
        horiz_max<1>(g, row, ids, y + at, idx + at, x, od, oh);
      else if (g.s[2] == 2)
        horiz_max<2>(g, row, ids, y + at, idx + at, x, od, oh);
      else
        horiz_max_any(g, row, ids, y + at, idx + at, x, od, oh);
    }
}

// ---- average -----------------------------------------------------------------------------------

// The row sum of the window's rows; false when a value is wide (see pool_kernels.h).
bool vert_sum(const float* x, int64_t n, const int32_t* ids, int nr, float* out) {
  vi bad = vi{};
  int64_t c = 0;
  for (; c + kW <= n; c += kW) {
    vf a = ldf(x + ids[0] * n + c);
    bad |= wide(a);
    for (int r = 1; r < nr; ++r) {
      const vf v = ldf(x + ids[r] * n + c);
      bad |= wide(v);
      a += v;
    }
    stf(out + c, a);
  }
  if (c < n) {
    const int64_t m = n - c;
    vf a = ldf_part(x + ids[0] * n + c, m);
    bad |= wide(a);
    for (int r = 1; r < nr; ++r) {
      const vf v = ldf_part(x + ids[r] * n + c, m);
      bad |= wide(v);
      a += v;
    }
    stf_part(out + c, a, m);
  }
  return !any(bad);
}

// Per dim: the window's size counting the padding (count_include_pad), or its in-range size.
int64_t extent(const PoolGeom& g, int dim, int64_t o) {
  const int64_t a = o * g.s[dim] - g.p[dim];
  const int64_t b = std::min(a + g.k[dim], g.in[dim] + g.p[dim]);
  if (g.count_include_pad) return b - a;
  return std::max<int64_t>(std::min(b, g.in[dim]) - std::max<int64_t>(a, 0), 0);
}

// div[ow] for one output row: the divisor of each output (0 for an empty window, whose
// output is 0 and whose grad goes nowhere).
void row_divisors(const PoolGeom& g, int64_t od, int64_t oh, float* div) {
  const int64_t rows = extent(g, 0, od) * extent(g, 1, oh);
  for (int64_t ow = 0; ow < g.out[2]; ++ow) {
    const int64_t cols = extent(g, 2, ow);
    const int64_t a = ow * g.s[2] - g.p[2];
    const bool empty = std::min(a + g.k[2], g.in[2]) <= std::max<int64_t>(a, 0);
    div[ow] = empty ? 0.0f : static_cast<float>(g.divisor != 0 ? g.divisor : rows * cols);
  }
  for (int l = 0; l < kW; ++l) div[g.out[2] + l] = 1.0f;
}

template <int S>
void horiz_avg(const PoolGeom& g, const float* row, const float* div, float* y) {
  const int64_t ow_n = g.out[2];
  for (int64_t ow0 = 0; ow0 < ow_n; ow0 += kW) {
    const int64_t at = ow_n >= kW ? std::min(ow0, ow_n - kW) : ow0;
    const int64_t c0 = at * S - g.p[2];
    vf a = tapf<S>(row + c0);
    for (int64_t kw = 1; kw < g.k[2]; ++kw) a += tapf<S>(row + c0 + kw * g.d[2]);
    const vf dv = ldf(div + at);
    const vf r = dv == 0.0f ? vf{} : a / dv;
    const int64_t nv = std::min<int64_t>(kW, ow_n - at);
    if (nv == kW)
      stf(y + at, r);
    else
      stf_part(y + at, r, nv);
  }
}

void horiz_avg_any(const PoolGeom& g, const float* row, const float* div, float* y) {
  for (int64_t ow = 0; ow < g.out[2]; ++ow) {
    const int64_t c0 = ow * g.s[2] - g.p[2];
    float a = 0;
    for (int64_t kw = 0; kw < g.k[2]; ++kw) a += row[c0 + kw * g.d[2]];
    y[ow] = div[ow] == 0.0f ? 0.0f : a / div[ow];
  }
}

bool avg_fwd(const PoolGeom& g, const float* x, float* y, PoolScratch& s) {
  prepare(g, s, 2);
  const int64_t pad = pool_row_pad(g);
  float* row = s.f.data() + pad;
  float* div = s.f.data() + pool_row_len(g);
  for (int64_t od = 0; od < g.out[0]; ++od)
    for (int64_t oh = 0; oh < g.out[1]; ++oh) {
      float* yr = y + (od * g.out[1] + oh) * g.out[2];
      const int nr = window_rows(g, od, oh, s);
      if (nr == 0) {
        std::fill(yr, yr + g.out[2], 0.0f);
        continue;
      }
      if (!vert_sum(x, g.in[2], s.row_ids.data(), nr, row)) return false;
      row_divisors(g, od, oh, div);
      if (g.s[2] == 1)
        horiz_avg<1>(g, row, div, yr);
      else if (g.s[2] == 2)
        horiz_avg<2>(g, row, div, yr);
      else
        horiz_avg_any(g, row, div, yr);
    }
  return true;
}

// grad_input = 0; per output row: the grads over their divisors (t) are spread along W into the
// scratch row (every tap of every output), which is added to each in-range input row.
bool avg_bwd(const PoolGeom& g, const float* go, float* gi, PoolScratch& s) {
  const int64_t w = g.in[2], ow_n = g.out[2], pad = pool_row_pad(g), len = pool_row_len(g);
  float* row = s.f.data() + pad;
  float* t = s.f.data() + len;
  std::memset(gi, 0, static_cast<size_t>(g.in_plane()) * sizeof(float));
  for (int64_t od = 0; od < g.out[0]; ++od)
    for (int64_t oh = 0; oh < g.out[1]; ++oh) {
      const int nr = window_rows(g, od, oh, s);
      if (nr == 0) continue;
      const float* gr = go + (od * g.out[1] + oh) * ow_n;
      row_divisors(g, od, oh, t);
      bool ok = true;
      for (int64_t ow = 0; ow < ow_n; ++ow) {
        ok = ok && std::fabs(gr[ow]) <= kWideF;
        t[ow] = t[ow] == 0.0f ? 0.0f : gr[ow] / t[ow];
      }
      if (!ok) return false;
      for (int l = 0; l < kW; ++l) t[ow_n + l] = 0.0f;
      std::fill(s.f.begin(), s.f.begin() + len, 0.0f);
      if (g.s[2] == 1) {
        for (int64_t kw = 0; kw < g.k[2]; ++kw) {
          float* r = row + kw * g.d[2] - g.p[2];
          for (int64_t ow = 0; ow < ow_n; ow += kW) stf(r + ow, ldf(r + ow) + ldf(t + ow));
        }
      } else {
        for (int64_t ow = 0; ow < ow_n; ++ow) {
          float* r = row + ow * g.s[2] - g.p[2];
          for (int64_t kw = 0; kw < g.k[2]; ++kw) r[kw * g.d[2]] += t[ow];
        }
      }
      for (int i = 0; i < nr; ++i) {
        float* gir = gi + s.row_ids[static_cast<size_t>(i)] * w;
        int64_t c = 0;
        for (; c + kW <= w; c += kW) stf(gir + c, ldf(gir + c) + ldf(row + c));
        if (c < w) stf_part(gir + c, ldf_part(gir + c, w - c) + ldf(row + c), w - c);
      }
    }
  s.pad_fill = 0;  // the margins now hold garbage
  return true;
}

inline PoolKernels make_kernels() { return PoolKernels{&max_fwd, &avg_fwd, &avg_bwd}; }
