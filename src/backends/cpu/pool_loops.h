// The f32 pooling plane kernels (see pool_kernels.h), instantiated once per ISA translation
// unit: pool_avx512.cpp, pool_avx2.cpp and pool_portable.cpp define kVecBytes (the vector
// width) and include this file inside a namespace of their own, after <immintrin.h>, <algorithm>,
// <cmath>, <cstdint>, <cstring> and pool_kernels.h. Written with GCC vector types: the
// auto-vectorizer keeps NaN-aware selects scalar.
//
// Forwards: each output row (od, oh) first combines the in-range input rows of its window
// element by element into the scratch row (max with the id of the row that holds it, or sum),
// whose margins hold -inf or 0 so that every tap along W can be read as a whole vector:
// out-of-range taps never win a max (a lane whose max is -inf, where such a tap may have won or
// the window holds only -inf, is recomputed by the generic scalar kernel) and add 0 to a sum.
// The taps of kW adjacent outputs are one vector load (stride 1) or the even lanes of two
// (stride 2); other strides take the scalar loop. The last vector of a row is moved back to end
// at the row's end (it recomputes some outputs rather than writing past the row). Row tails
// shorter than a vector are masked loads and stores.
//
// Average pooling's backward gathers rather than scatters along W (see avg_bwd). The window
// rows and divisors of every output row come from the plan (PoolScratch, pool_prepare).

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
      const int64_t r = od * g.out[1] + oh, at = r * g.out[2];
      const int32_t* rid = s.row_ids.data() + s.row_start[static_cast<size_t>(r)];
      const int nr = s.row_start[static_cast<size_t>(r) + 1] - s.row_start[static_cast<size_t>(r)];
      if (nr == 0) {  // no in-range row: the generic kernel's -inf and index -1
        for (int64_t ow = 0; ow < g.out[2]; ++ow) {
          const int64_t o[3] = {od, oh, ow};
          pool_max_one(g, x, o, &y[at + ow], &idx[at + ow]);
        }
        continue;
      }
      vert_max(x, g.in[2], rid, nr, row, ids);
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
  for (int64_t r = 0; r < g.out[0] * g.out[1]; ++r) {
    float* yr = y + r * g.out[2];
    const int32_t* rid = s.row_ids.data() + s.row_start[static_cast<size_t>(r)];
    const int nr = s.row_start[static_cast<size_t>(r) + 1] - s.row_start[static_cast<size_t>(r)];
    if (nr == 0) {
      std::fill(yr, yr + g.out[2], 0.0f);
      continue;
    }
    if (!vert_sum(x, g.in[2], rid, nr, row)) return false;
    const float* div = s.div.data() + r * s.div_stride;
    if (g.s[2] == 1)
      horiz_avg<1>(g, row, div, yr);
    else if (g.s[2] == 2)
      horiz_avg<2>(g, row, div, yr);
    else
      horiz_avg_any(g, row, div, yr);
  }
  return true;
}

// grad_input = 0; per output row: the grads over their divisors, t, are placed every s
// elements of a zeroed row tz (tz[ow * s] = t[ow]); an input column c then receives
// h[c] = sum over kw of tz[c + p - kw * d] (a gather: whole-vector loads, where scattering
// t into overlapping vectors would stall on store forwarding), added to each in-range input row
// of the window.
bool avg_bwd(const PoolGeom& g, const float* go, float* gi, PoolScratch& s) {
  const int64_t w = g.in[2], ow_n = g.out[2], st = g.s[2], reach = (g.k[2] - 1) * g.d[2];
  float* tz = s.f.data() + pool_row_len(g) + reach + kW;
  const int64_t tz_hi = std::max(ow_n * st, w + g.p[2]) + kW;
  float* t = tz + tz_hi + kW;  // one output row's t, whole vectors
  std::memset(gi, 0, static_cast<size_t>(g.in_plane()) * sizeof(float));
  for (int64_t r = 0; r < g.out[0] * g.out[1]; ++r) {
    const int32_t* rid = s.row_ids.data() + s.row_start[static_cast<size_t>(r)];
    const int nr = s.row_start[static_cast<size_t>(r) + 1] - s.row_start[static_cast<size_t>(r)];
    if (nr == 0) continue;
    const float* gr = go + r * ow_n;
    const float* div = s.div.data() + r * s.div_stride;
    vi bad = vi{};
    std::fill(tz - reach - kW, tz + tz_hi, 0.0f);
    float* dst = st == 1 ? tz : t;
    for (int64_t ow = 0; ow < ow_n; ow += kW) {
      const int64_t m = std::min<int64_t>(kW, ow_n - ow);
      const vf gv = ldf_n(gr + ow, m), dv = ldf(div + ow);
      bad |= wide(gv);
      const vf tv = dv == 0.0f ? vf{} : gv / dv;
      if (m == kW)
        stf(dst + ow, tv);
      else
        stf_part(dst + ow, tv, m);
    }
    if (any(bad)) return false;
    if (st != 1)
      for (int64_t ow = 0; ow < ow_n; ++ow) tz[ow * st] = t[ow];
    for (int64_t c = 0; c < w; c += kW) {
      const float* src = tz + c + g.p[2];
      vf h = ldf(src);
      for (int64_t kw = 1; kw < g.k[2]; ++kw) h += ldf(src - kw * g.d[2]);
      const int64_t m = std::min<int64_t>(kW, w - c);
      for (int i = 0; i < nr; ++i) {
        float* gir = gi + rid[i] * w + c;
        if (m == kW)
          stf(gir, ldf(gir) + h);
        else
          stf_part(gir, ldf_part(gir, m) + h, m);
      }
    }
  }
  return true;
}

inline PoolKernels make_kernels() { return PoolKernels{&max_fwd, &avg_fwd, &avg_bwd}; }
