// The cpu backend's sums: sum and mean over any dims. Floating sums accumulate in f64 lanes
// (reduction_kernels.h) and round once to the output. Rows (the reduced dims innermost) of up
// to one block are summed many to a call (StatLoops::row_sums, a few hundred at a time), longer
// ones in blocks spread over the pool (a single long row uses every thread); columns (kept
// dims innermost) are summed row after row into f64 accumulators, whole rows at a time (one
// stream of reads), split over the pool by outer index (the reference's order) or, with too
// few of those, by ranges of rows; a reduced-kept-reduced layout (sum over N, H, W of NCHW)
// sums each contiguous run, then the runs of each output. Where the order differs from the
// reference's sequential one, a rigorous bound on the difference (OrderBound) is checked
// against the comparison tolerance, and the rare output that could fail (large terms
// cancelling) is summed again in the reference's order, so results never depend on the thread
// count where it matters. Other layouts are permuted once (reduction_rows.h). Integer sums are
// exact in int64 and wrap in the output width; with dtype= the input is converted to that
// dtype first, as ATen does.
#include <algorithm>
#include <cmath>
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

void register_softmax_kernels(KernelTable& t);  // softmax.cpp
void register_minmax_kernels(KernelTable& t);   // reduction_minmax.cpp
void register_moment_kernels(KernelTable& t);   // reduction_moments.cpp
void register_anyall_kernels(KernelTable& t);   // reduction_anyall.cpp

namespace {

constexpr int64_t kBlock = 1 << 14;  // elements per partial sum of a row
constexpr int64_t kColSplit = 256;   // fewest columns per task when columns are split

// Whether a sum computed in another order than the reference's sequential one is certain to
// pass the comparison. A sum is made of consecutive parts (blocks of a row, runs, row ranges of
// a column), each known by its sum, its sum of |x| and its length, added in order. In units of
// u = 2^-53, the reference's error is at most sum_k |S_k| over its prefix sums, which within
// part b is at most len_b * (|P_{b-1}| + abs_b); ours at most (len_b * lanes + 8) * abs_b
// within a part (lanes: the fraction of a part one accumulator adds up: 1/8 for the
// vectorized row loops, 1 for sequential ones) plus |P_b| for adding it. When the sum of both
// stays below half the tolerance (without its relative part's sqrt(n) widening), any order
// passes; otherwise the caller sums that output again in the reference's order.
class OrderBound {
 public:
  OrderBound(DType out, double lanes) : lanes_(lanes) {
    const bool f64 = out == DType::Float64;
    atol_ = f64 ? 1e-7 : 1e-5;
    rtol_ = f64 ? 1e-7 : 1.3e-6;
  }
  void add(double sum, double abs, double len) {
    bound_ += len * (std::abs(prefix_) + abs) + (len * lanes_ + 8) * abs;
    prefix_ += sum;
    bound_ += 2 * std::abs(prefix_);
    n_ += len;
  }
  double sum() const { return prefix_; }
  bool order_free() const {
    return bound_ * 0x1p-53 <= 0.5 * (rtol_ * std::abs(prefix_) + atol_ * std::sqrt(n_));
  }
  // The same check for many sums of one part of `len` elements each, its terms worked out once:
  // order_free() after add(sum, abs, len) on a fresh bound is cs * |sum| + ca * abs <= c0.
  struct OnePart {
    double ca, cs, c0;
    bool order_free(double sum, double abs) const { return ca * abs + cs * std::abs(sum) <= c0; }
  };
  OnePart one_part(double len) const {
    return {.ca = (len * (1 + lanes_) + 8) * 0x1p-53,
            .cs = 2 * 0x1p-53 - 0.5 * rtol_,
            .c0 = 0.5 * atol_ * std::sqrt(len)};
  }

 private:
  double lanes_, atol_, rtol_;
  double prefix_ = 0, bound_ = 0, n_ = 0;
};

struct Partial {
  double sum = 0, abs = 0;
};

template <typename C>
double sum_sequential(const C* x, int64_t n, int64_t stride = 1) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(x[i * stride]);
  return s;
}

// Rows of one block (a pooled 7x7 window, an image's pixels): StatLoops::row_sums over a few
// hundred rows a call, then each row's order check, its terms worked out once (a call and a
// check per row cost as much as a short row's additions).
template <typename T>
void sum_short_rows(const T* x, int64_t outer, int64_t red, DType out_dt, double* out) {
  const StatLoops<T>& k = stat_loops<T>();
  const OrderBound::OnePart check =
      OrderBound(out_dt, 1.0 / k.lanes).one_part(static_cast<double>(red));
  parallel_for(0, outer, std::max<int64_t>(1, 32768 / red), [&](int64_t lo, int64_t hi) {
    // The bounds of a few hundred rows at a time, on the stack: a chunk's worth in a fresh
    // vector cost a page fault per 512 rows (most of a single-threaded call on some hosts).
    constexpr int64_t kRows = 512;
    double abs[kRows];
    for (int64_t r0 = lo; r0 < hi; r0 += kRows) {
      const int64_t r1 = std::min(hi, r0 + kRows);
      k.row_sums(x + r0 * red, r1 - r0, red, out + r0, abs);
      for (int64_t o = r0; o < r1; ++o)
        if (!check.order_free(out[o], abs[o - r0])) out[o] = sum_sequential(x + o * red, red);
    }
  });
}

// Rows [outer, red] -> out[outer], in blocks of kBlock (spread over the pool with the rows).
template <typename T>
void sum_rows(const T* x, int64_t outer, int64_t red, DType out_dt, double* out) {
  if (red <= 16) {
    // A kept dim of size 1, pairs, small windows: summed in the reference's order, with no
    // vector loop or order check to set up per row.
    parallel_for(0, outer, std::max<int64_t>(1, 32768 / std::max<int64_t>(red, 1)),
                 [&](int64_t lo, int64_t hi) {
                   for (int64_t o = lo; o < hi; ++o) out[o] = sum_sequential(x + o * red, red);
                 });
    return;
  }
  if (red <= kBlock) {
    sum_short_rows(x, outer, red, out_dt, out);
    return;
  }
  const StatLoops<T>& k = stat_loops<T>();
  const int64_t nblk = std::max<int64_t>(1, (red + kBlock - 1) / kBlock);
  auto finish = [&](int64_t o, const Partial* part) {
    OrderBound b(out_dt, 1.0 / k.lanes);
    for (int64_t i = 0; i < nblk; ++i)
      b.add(part[i].sum, part[i].abs, static_cast<double>(std::min(kBlock, red - i * kBlock)));
    out[o] = b.order_free() ? b.sum() : sum_sequential(x + o * red, red);
  };
  std::vector<Partial> part(static_cast<size_t>(outer * nblk));
  parallel_for(0, outer * nblk, 2, [&](int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; ++t) {
      const int64_t o = t / nblk, beg = (t % nblk) * kBlock;
      Partial& p = part[static_cast<size_t>(t)];
      p.sum = k.sum_abs(x + o * red + beg, std::min(kBlock, red - beg), &p.abs);
    }
  });
  for (int64_t o = 0; o < outer; ++o) finish(o, part.data() + o * nblk);
}

// [outer, red, inner] with inner > 1 -> out[outer * inner]. Rows are read whole (the column
// accumulators stay in cache, the reads are one stream). With an outer index per task the
// order is the reference's; with fewer outer indices than threads the rows are split over the
// pool and each column's parts added with the order check.
template <typename T>
void sum_cols(const T* x, int64_t outer, int64_t red, int64_t inner, DType out_dt, double* out) {
  const StatLoops<T>& k = stat_loops<T>();
  const int threads = num_threads();
  const int64_t parts = std::min<int64_t>(threads, red / 16);
  if (outer < threads && parts > 1 && inner >= kColSplit * threads) {
    // Wide rows (a linear layer's bias gradient: [tokens, features] summed over tokens): the
    // columns are split over the pool, each range summed over every row in the reference's
    // order, so no order check is needed and each thread reads its own part of every row.
    for (int64_t o = 0; o < outer; ++o) {
      const T* base = x + o * red * inner;
      double* acc = out + o * inner;
      parallel_for(0, inner, kColSplit, [&](int64_t lo, int64_t hi) {
        std::fill(acc + lo, acc + hi, 0.0);
        k.col_sum(base + lo, red, inner, hi - lo, acc + lo, nullptr);
      });
    }
    return;
  }
  if (outer >= threads || parts <= 1) {
    parallel_for(0, outer, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t o = lo; o < hi; ++o) {
        double* acc = out + o * inner;
        std::fill(acc, acc + inner, 0.0);
        k.col_sum(x + o * red * inner, red, inner, inner, acc, nullptr);
      }
    });
    return;
  }
  const auto n = static_cast<size_t>(inner);
  std::vector<double> psum(static_cast<size_t>(parts) * n), pabs(psum.size());
  for (int64_t o = 0; o < outer; ++o) {
    const T* base = x + o * red * inner;
    parallel_for(0, parts, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t p = lo; p < hi; ++p) {
        const int64_t r0 = red * p / parts, r1 = red * (p + 1) / parts;
        double* s = psum.data() + p * inner;
        double* a = pabs.data() + p * inner;
        std::fill(s, s + inner, 0.0);
        std::fill(a, a + inner, 0.0);
        k.col_sum(base + r0 * inner, r1 - r0, inner, inner, s, a);
      }
    });
    parallel_for(0, inner, 4096, [&](int64_t lo, int64_t hi) {
      for (int64_t j = lo; j < hi; ++j) {
        OrderBound b(out_dt, 1.0);
        for (int64_t p = 0; p < parts; ++p)
          b.add(psum[static_cast<size_t>(p * inner + j)], pabs[static_cast<size_t>(p * inner + j)],
                static_cast<double>(red * (p + 1) / parts - red * p / parts));
        out[o * inner + j] = b.order_free() ? b.sum() : sum_sequential(base + j, red, inner);
      }
    });
  }
}

// [a, c, b] contiguous, a and b reduced -> out[c]: each run of b summed, then the runs in
// the order of a.
template <typename T>
void sum_outer_inner(const T* x, int64_t a, int64_t c, int64_t b, DType out_dt, double* out) {
  const StatLoops<T>& k = stat_loops<T>();
  std::vector<Partial> part(static_cast<size_t>(a * c));
  parallel_for(0, a * c, std::max<int64_t>(1, 32768 / std::max<int64_t>(b, 1)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t t = lo; t < hi; ++t) {
                   Partial& p = part[static_cast<size_t>(t)];
                   p.sum = k.sum_abs(x + t * b, b, &p.abs);
                 }
               });
  parallel_for(0, c, std::max<int64_t>(1, 4096 / std::max<int64_t>(a * b, 1)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t j = lo; j < hi; ++j) {
                   OrderBound bound(out_dt, 1.0 / k.lanes);
                   for (int64_t i = 0; i < a; ++i) {
                     const Partial& p = part[static_cast<size_t>(i * c + j)];
                     bound.add(p.sum, p.abs, static_cast<double>(b));
                   }
                   if (bound.order_free()) {
                     out[j] = bound.sum();
                   } else {
                     double s = 0;
                     for (int64_t i = 0; i < a; ++i) s += sum_sequential(x + (i * c + j) * b, b);
                     out[j] = s;
                   }
                 }
               });
}

void sum_int(const int64_t* x, int64_t outer, int64_t red, int64_t inner, uint64_t* out) {
  parallel_for(0, outer * inner, std::max<int64_t>(1, 32768 / std::max<int64_t>(red, 1)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t p = lo; p < hi; ++p) {
                   const int64_t o = p / inner, j = p % inner;
                   uint64_t s = 0;
                   for (int64_t r = 0; r < red; ++r)
                     s += static_cast<uint64_t>(x[(o * red + r) * inner + j]);
                   out[p] = s;
                 }
               });
}

// Sums of a floating input (compute dtype T) into acc[n_out].
template <typename T>
void sum_floating(const Tensor& in, const std::vector<bool>& reduced, DType out_dt, double* acc) {
  if (in.is_contiguous() && in.dtype() == (sizeof(T) == 4 ? DType::Float32 : DType::Float64)) {
    const std::vector<DimGroup> g = dim_groups(in, reduced);
    if (g.size() == 3 && g[0].reduced && !g[1].reduced) {
      sum_outer_inner(in.data<T>(), g[0].size, g[1].size, g[2].size, out_dt, acc);
      return;
    }
  }
  const RowsView v = reduce_rows(in, reduced, sizeof(T) == 4 ? DType::Float32 : DType::Float64);
  if (v.inner == 1)
    sum_rows(v.src.data<T>(), v.outer, v.red, out_dt, acc);
  else
    sum_cols(v.src.data<T>(), v.outer, v.red, v.inner, out_dt, acc);
}

// Into `out`, the meta function's output (its dtype: dtype=, else int64 for an integral sum,
// else the input's; mean's non-floating dtypes were refused there).
void reduce_sum(const Args& a, bool mean, bool all_dims, const Tensor& out) {
  const Tensor& x = a.tensor("self");
  std::vector<int64_t> dims;
  bool keepdim = false;
  if (!all_dims) {
    dims = stats::dims_of(a.value("dim"));
    keepdim = a.flag("keepdim");
  }
  const DType out_dtype = out.dtype();
  const stats::ReducePlan plan = stats::plan_reduction(x, dims, keepdim);
  // dtype=: the input converted first (f32 summed as f16 values, floats truncated to ints).
  Tensor in = x;
  if (out_dtype != x.dtype() && x.numel() > 0) {
    in = Tensor::uninitialized(x.shape(), out_dtype);
    const Tensor ins[] = {x};
    pw_run(PwOp::Identity, ins, in, compute_for(x.dtype()), PwParams{});
  }
  const DType ct = reduce_compute_dtype(out_dtype);
  const int64_t n = out.numel();
  char* dst = static_cast<char*>(out.data_ptr());
  const auto isz = static_cast<int64_t>(out.itemsize());
  if (ct == DType::Int64) {
    std::vector<uint64_t> acc(static_cast<size_t>(std::max<int64_t>(n, 1)), 0);
    if (x.numel() > 0) {
      const RowsView v = reduce_rows(in, plan.reduced, ct);
      sum_int(v.src.data<int64_t>(), v.outer, v.red, v.inner, acc.data());
    }
    for (int64_t i = 0; i < n; ++i)
      store_from_int(dst + i * isz, out_dtype, static_cast<int64_t>(acc[static_cast<size_t>(i)]));
    return;
  }
  // The f64 sums, in this thread's scratch buffer (kept between calls up to kKeep elements, so
  // a model's sums do not map fresh pages each call: a page fault costs microseconds on
  // virtual machines, a 1 MB buffer a quarter of a 7x7 mean's time).
  constexpr size_t kKeep = size_t{1} << 22;
  thread_local std::vector<double> kept;
  std::vector<double> fresh;
  double* acc = nullptr;
  const auto un = static_cast<size_t>(n);
  if (un <= kKeep) {
    if (kept.size() < un) kept.resize(un);
    acc = kept.data();
  } else {
    fresh.resize(un);
    acc = fresh.data();
  }
  if (x.numel() > 0) {
    if (ct == DType::Float32)
      sum_floating<float>(in, plan.reduced, out_dtype, acc);
    else
      sum_floating<double>(in, plan.reduced, out_dtype, acc);
  } else {
    std::fill(acc, acc + n, 0.0);
  }
  const double count = static_cast<double>(plan.count);
  if (mean)
    for (int64_t i = 0; i < n; ++i) acc[i] /= count;
  // Rounded once into the output: f32 and f64 directly, the rest per element.
  if (out_dtype == DType::Float32) {
    auto* o = reinterpret_cast<float*>(dst);
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<float>(acc[i]);
  } else if (out_dtype == DType::Float64) {
    std::copy(acc, acc + n, reinterpret_cast<double*>(dst));
  } else {
    for (int64_t i = 0; i < n; ++i) store_from_double(dst + i * isz, out_dtype, acc[i]);
  }
}

// dtype= must be a real dtype the engine converts to.
bool sum_supports(const OpDef&, const Values& a, std::string* why) {
  for (const Value& v : a) {
    if (v.kind() != ValueKind::DType && !v.is_tensor()) continue;
    const DType t = v.is_tensor() ? v.tensor().dtype() : v.to_dtype();
    if (is_complex(t) || t == DType::Float8E4M3FN || t == DType::Float8E5M2) {
      if (why) *why = "backend 'cpu' sums real dtypes other than fp8 only";
      return false;
    }
  }
  return true;
}

void sum_dim(const OpDef&, const Args& a, const Values& o) {
  reduce_sum(a, false, false, o.at(0).tensor());
}
void sum_all(const OpDef&, const Args& a, const Values& o) {
  reduce_sum(a, false, true, o.at(0).tensor());
}
void mean_dim(const OpDef&, const Args& a, const Values& o) {
  reduce_sum(a, true, false, o.at(0).tensor());
}
void mean_all(const OpDef&, const Args& a, const Values& o) {
  reduce_sum(a, true, true, o.at(0).tensor());
}

}  // namespace

void register_reduction_kernels(KernelTable& t) {
  // mean takes every real dtype too: an integral input raises unless dtype= is floating.
  const auto all = pw_all_dtypes();
  t.add("aten.sum.dim_IntList", {.supports = &sum_supports, .dtypes = all, .run_into = &sum_dim});
  t.add("aten.sum.default", {.supports = &sum_supports, .dtypes = all, .run_into = &sum_all});
  t.add("aten.mean.dim", {.supports = &sum_supports, .dtypes = all, .run_into = &mean_dim});
  t.add("aten.mean.default", {.supports = &sum_supports, .dtypes = all, .run_into = &mean_all});
  register_minmax_kernels(t);
  register_moment_kernels(t);
  register_anyall_kernels(t);
  register_softmax_kernels(t);
}

}  // namespace crucible::cpu
