// The cpu backend's selection reductions: amax/amin over dims, max/min over everything or one
// dim (values and first indices), argmax/argmin. Values are compared in the compute dtype (f32
// holds f16/bf16 exactly, i64 every integer and bool), so results are exact; a NaN is the
// extreme (its first index), ties keep the first index, as ATen's CPU kernels do.
#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "backends/cpu/kernel_table.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/pointwise_ops.h"
#include "backends/cpu/reduction_kernels.h"
#include "backends/cpu/reduction_rows.h"
#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"
#include "crucible/ops/rules/reduction.h"

namespace crucible::cpu {

namespace {

template <typename C>
bool isnan_(C v) {
  if constexpr (std::is_floating_point_v<C>)
    return v != v;
  else
    return false;
}

constexpr int64_t kSplit = 1 << 16;  // rows longer than this are split over the pool

// Integers: for each (outer, inner) position of [outer, red, inner], the index along red of
// the max (or min) and its value, compared in int64.
void pick_int(const int64_t* x, int64_t outer, int64_t red, int64_t inner, bool want_max,
              int64_t* val, int64_t* idx) {
  parallel_for(0, outer * inner, std::max<int64_t>(1, 32768 / std::max<int64_t>(red, 1)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t p = lo; p < hi; ++p) {
                   const int64_t* base = x + (p / inner) * red * inner + p % inner;
                   int64_t b = base[0], bi = 0;
                   for (int64_t r = 1; r < red; ++r) {
                     const int64_t v = base[r * inner];
                     if (want_max ? v > b : v < b) {
                       b = v;
                       bi = r;
                     }
                   }
                   val[p] = b;
                   idx[p] = bi;
                 }
               });
}

// Floating: the vectorized scans (reduction_kernels.h). Rows are spread over the pool (a long
// row in blocks, combined in order so that the first extreme wins), columns in chunks.
template <typename T>
void pick_float(const RowsView& v, bool want_max, T* val, int64_t* idx) {
  const StatLoops<T>& k = stat_loops<T>();
  const T* x = v.src.data<T>();
  const int64_t red = v.red;
  auto one = [&](const T* row, int64_t n, T* bv, int64_t* bi) {
    if (idx) {
      *bi = k.row_arg(row, n, want_max);
      *bv = row[*bi];
    } else {
      *bv = k.row_extreme(row, n, want_max);
    }
  };
  if (v.inner > 1) {
    const int64_t chunk = column_chunk(v.outer, v.inner);
    const int64_t nc = (v.inner + chunk - 1) / chunk;
    parallel_for(0, v.outer * nc, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t t = lo; t < hi; ++t) {
        const int64_t o = t / nc, j0 = (t % nc) * chunk, at = o * v.inner + j0;
        k.col_pick(x + o * red * v.inner + j0, red, v.inner, std::min(chunk, v.inner - j0),
                   want_max, val + at, idx ? idx + at : nullptr);
      }
    });
  } else if (red <= kSplit || v.outer >= 2 * num_threads()) {
    parallel_for(0, v.outer, std::max<int64_t>(1, 32768 / std::max<int64_t>(red, 1)),
                 [&](int64_t lo, int64_t hi) {
                   for (int64_t o = lo; o < hi; ++o)
                     one(x + o * red, red, val + o, idx ? idx + o : nullptr);
                 });
  } else {
    const int64_t nblk = (red + kSplit - 1) / kSplit;
    std::vector<T> pv(static_cast<size_t>(v.outer * nblk));
    std::vector<int64_t> pi(pv.size());
    parallel_for(0, v.outer * nblk, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t t = lo; t < hi; ++t) {
        const int64_t o = t / nblk, beg = (t % nblk) * kSplit;
        one(x + o * red + beg, std::min(kSplit, red - beg), &pv[static_cast<size_t>(t)],
            &pi[static_cast<size_t>(t)]);
        pi[static_cast<size_t>(t)] += beg;
      }
    });
    for (int64_t o = 0; o < v.outer; ++o) {
      size_t best = static_cast<size_t>(o * nblk);
      for (int64_t b = 1; b < nblk && !isnan_(pv[best]); ++b) {
        const size_t c = static_cast<size_t>(o * nblk + b);
        if (isnan_(pv[c]) || (want_max ? pv[c] > pv[best] : pv[c] < pv[best])) best = c;
      }
      val[o] = pv[best];
      if (idx) idx[o] = pi[best];
    }
  }
}

struct Picked {
  std::vector<double> fval;
  std::vector<int64_t> ival, idx;
};

// The extremes (and, with_idx, their first indices) of every output of v.
Picked pick_view(const RowsView& v, DType ct, bool want_max, bool with_idx = true) {
  Picked p;
  const auto n = static_cast<size_t>(v.outer * v.inner);
  p.idx.resize(n);
  int64_t* idx = with_idx ? p.idx.data() : nullptr;
  if (ct == DType::Float32) {
    std::vector<float> b(n);
    pick_float(v, want_max, b.data(), idx);
    p.fval.assign(b.begin(), b.end());
  } else if (ct == DType::Float64) {
    p.fval.resize(n);
    pick_float(v, want_max, p.fval.data(), idx);
  } else {
    p.ival.resize(n);
    pick_int(v.src.data<int64_t>(), v.outer, v.red, v.inner, want_max, p.ival.data(), p.idx.data());
  }
  return p;
}

void store_values(const Picked& p, const Tensor& out) {
  char* dst = static_cast<char*>(out.data_ptr());
  const auto isz = static_cast<int64_t>(out.itemsize());
  for (int64_t i = 0; i < out.numel(); ++i) {
    if (p.fval.empty())
      store_from_int(dst + i * isz, out.dtype(), p.ival[static_cast<size_t>(i)]);
    else
      store_from_double(dst + i * isz, out.dtype(), p.fval[static_cast<size_t>(i)]);
  }
}

void store_indices(const Picked& p, const Tensor& out) {
  int64_t* d = out.data<int64_t>();
  for (int64_t i = 0; i < out.numel(); ++i) d[i] = p.idx[static_cast<size_t>(i)];
}

std::vector<bool> one_dim(const Tensor& x, int64_t dim) {
  std::vector<bool> r(static_cast<size_t>(x.dim()), false);
  if (x.dim() > 0) r[static_cast<size_t>(dim)] = true;
  return r;
}

// The outputs below are the meta function's (contiguous; it raised ATen's errors for empty
// inputs and dims).

// amax / amin(self, dim=[], keepdim=False)
void amaxmin(const Args& a, const Tensor& out, bool want_max) {
  if (out.numel() == 0) return;
  const Tensor& x = a.tensor("self");
  const stats::ReducePlan plan =
      stats::plan_reduction(x, stats::dims_of(a.value("dim")), a.flag("keepdim"));
  const DType ct = reduce_compute_dtype(x.dtype());
  store_values(pick_view(reduce_rows(x, plan.reduced, ct), ct, want_max, false), out);
}

// max.default / min.default
void minmax_all(const Args& a, const Tensor& out, bool want_max) {
  const Tensor& x = a.tensor("self");
  const DType ct = reduce_compute_dtype(x.dtype());
  store_values(pick_view(reduce_rows(x, std::vector<bool>(x.dim(), true), ct), ct, want_max, false),
               out);
}

// max.dim / min.dim(self, dim, keepdim=False) -> (values, indices)
void minmax_dim(const Args& a, const Values& out, bool want_max) {
  const Tensor &values = out.at(0).tensor(), &indices = out.at(1).tensor();
  if (values.numel() == 0) return;
  const Tensor& x = a.tensor("self");
  const int64_t dim = wrap_dim(a.integer("dim"), x.dim());
  const DType ct = reduce_compute_dtype(x.dtype());
  const Picked p = pick_view(reduce_rows(x, one_dim(x, dim), ct), ct, want_max);
  store_values(p, values);
  store_indices(p, indices);
}

// argmax / argmin(self, dim=None, keepdim=False)
void arg(const Args& a, const Tensor& out, bool want_max) {
  if (out.numel() == 0) return;
  const Tensor& x = a.tensor("self");
  const std::optional<int64_t> dim =
      stats::arg_plan(x, a.opt_integer("dim"), a.flag("keepdim"), want_max).first;
  const std::vector<bool> reduced =
      dim ? one_dim(x, *dim) : std::vector<bool>(static_cast<size_t>(x.dim()), true);
  const DType ct = reduce_compute_dtype(x.dtype());
  store_indices(pick_view(reduce_rows(x, reduced, ct), ct, want_max), out);
}

void amax(const OpDef&, const Args& a, const Values& o) { amaxmin(a, o.at(0).tensor(), true); }
void amin(const OpDef&, const Args& a, const Values& o) { amaxmin(a, o.at(0).tensor(), false); }
void max_all(const OpDef&, const Args& a, const Values& o) {
  minmax_all(a, o.at(0).tensor(), true);
}
void min_all(const OpDef&, const Args& a, const Values& o) {
  minmax_all(a, o.at(0).tensor(), false);
}
void max_dim(const OpDef&, const Args& a, const Values& o) { minmax_dim(a, o, true); }
void min_dim(const OpDef&, const Args& a, const Values& o) { minmax_dim(a, o, false); }
void argmax(const OpDef&, const Args& a, const Values& o) { arg(a, o.at(0).tensor(), true); }
void argmin(const OpDef&, const Args& a, const Values& o) { arg(a, o.at(0).tensor(), false); }

}  // namespace

void register_minmax_kernels(KernelTable& t) {
  const auto all = pw_all_dtypes();
  t.add("aten.amax.default", {.dtypes = all, .run_into = &amax});
  t.add("aten.amin.default", {.dtypes = all, .run_into = &amin});
  t.add("aten.max.default", {.dtypes = all, .run_into = &max_all});
  t.add("aten.min.default", {.dtypes = all, .run_into = &min_all});
  t.add("aten.max.dim", {.dtypes = all, .run_into = &max_dim});
  t.add("aten.min.dim", {.dtypes = all, .run_into = &min_dim});
  t.add("aten.argmax.default", {.dtypes = all, .run_into = &argmax});
  t.add("aten.argmin.default", {.dtypes = all, .run_into = &argmin});
}

}  // namespace crucible::cpu
