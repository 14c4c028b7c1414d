// The cpu backend's moments and products: var / std (.correction, var.dim), var_mean /
// std_mean, prod (.default, .dim_int). Variances are one pass over memory: each L1-sized block
// of a row is summed, its squared deviations from the block mean summed (f64 lanes), and the
// blocks merged with Chan's formula (reduction_kernels.h); a single long row is split over the
// pool and merged the same way; columns (kept dims innermost) are two passes, sums then
// deviations, vectorized across the columns. Products multiply f64 lanes. Inputs with a
// non-finite value or one above 2^50 (where a reordered f64 sum or product could overflow or
// cancel differently) are computed in the reference's sequential order instead.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <optional>
#include <vector>

#include "backends/cpu/kernel_table.h"
#include "backends/cpu/nn_util.h"
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

constexpr int64_t kSplit = 1 << 16;  // rows longer than this are split over the pool

// The moments of every output of v, in the reference's sequential order.
template <typename T>
void moments_sequential(const RowsView& v, std::vector<Moments>& out) {
  const T* x = v.src.data<T>();
  for (int64_t o = 0; o < v.outer; ++o)
    for (int64_t j = 0; j < v.inner; ++j) {
      const T* p = x + o * v.red * v.inner + j;
      double s = 0;
      for (int64_t r = 0; r < v.red; ++r) s += static_cast<double>(p[r * v.inner]);
      const double mean = s / static_cast<double>(v.red);
      double m2 = 0;
      for (int64_t r = 0; r < v.red; ++r) {
        const double d = static_cast<double>(p[r * v.inner]) - mean;
        m2 += d * d;
      }
      out[static_cast<size_t>(o * v.inner + j)] = {static_cast<double>(v.red), s, m2};
    }
}

// Moments along rows (one pass, reduction_kernels.h); false when a row holds a wild value.
template <typename T>
bool moments_rows(const T* x, int64_t outer, int64_t red, std::vector<Moments>& out) {
  const StatLoops<T>& k = stat_loops<T>();
  if (red <= kSplit || outer >= 2 * num_threads()) {
    parallel_for(0, outer, std::max<int64_t>(1, 32768 / std::max<int64_t>(red, 1)),
                 [&](int64_t lo, int64_t hi) {
                   for (int64_t o = lo; o < hi; ++o)
                     out[static_cast<size_t>(o)] = k.moments(x + o * red, red);
                 });
  } else {
    const int64_t nblk = (red + kSplit - 1) / kSplit;
    std::vector<Moments> part(static_cast<size_t>(outer * nblk));
    parallel_for(0, outer * nblk, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t t = lo; t < hi; ++t) {
        const int64_t o = t / nblk, beg = (t % nblk) * kSplit;
        part[static_cast<size_t>(t)] = k.moments(x + o * red + beg, std::min(kSplit, red - beg));
      }
    });
    for (int64_t o = 0; o < outer; ++o) {
      Moments m;
      for (int64_t b = 0; b < nblk; ++b) m.merge(part[static_cast<size_t>(o * nblk + b)]);
      out[static_cast<size_t>(o)] = m;
    }
  }
  for (const Moments& m : out)
    if (m.wild) return false;
  return true;
}

template <typename T>
void moments_cols(const T* x, int64_t outer, int64_t red, int64_t inner,
                  std::vector<Moments>& out) {
  const StatLoops<T>& k = stat_loops<T>();
  parallel_for(0, outer, 1, [&](int64_t lo, int64_t hi) {
    std::vector<double> sum(static_cast<size_t>(inner)), mean(sum.size()), s1(sum.size()),
        s2(sum.size());
    for (int64_t o = lo; o < hi; ++o) {
      const T* base = x + o * red * inner;
      std::fill(sum.begin(), sum.end(), 0.0);
      std::fill(s1.begin(), s1.end(), 0.0);
      std::fill(s2.begin(), s2.end(), 0.0);
      k.col_sum(base, red, inner, inner, sum.data(), nullptr);
      const double n = static_cast<double>(red);
      for (int64_t j = 0; j < inner; ++j) mean[j] = sum[j] / n;
      k.col_moments(base, red, inner, inner, mean.data(), s1.data(), s2.data());
      for (int64_t j = 0; j < inner; ++j) {
        const double m2 = s2[j] - s1[j] * s1[j] / n;  // the corrected two-pass formula
        out[static_cast<size_t>(o * inner + j)] = {n, sum[j], m2 < 0 ? 0.0 : m2};
      }
    }
  });
}

// var / std / var_mean / std_mean over `dim` (None or [] = every dim).
// Into the meta function's outputs (var, then mean for var_mean/std_mean); it refused the
// non-floating inputs.
void var_family(const Args& a, double correction, bool keepdim, bool root, const Values& outs) {
  const Tensor& x = a.tensor("self");
  const bool with_mean = outs.size() > 1;
  const stats::ReducePlan plan = stats::plan_reduction(x, stats::dims_of(a.value("dim")), keepdim);
  const Tensor& var = outs.at(0).tensor();
  const Tensor mean = with_mean ? outs.at(1).tensor() : Tensor();
  const int64_t n = var.numel();
  std::vector<Moments> m(static_cast<size_t>(n));
  if (x.numel() > 0) {
    const DType ct = reduce_compute_dtype(x.dtype());
    const RowsView v = reduce_rows(x, plan.reduced, ct);
    const bool f32 = ct == DType::Float32;
    // Rows report wild values themselves; columns (not a common layout) check first.
    bool fast = false;
    if (v.inner == 1)
      fast = f32 ? moments_rows(v.src.data<float>(), v.outer, v.red, m)
                 : moments_rows(v.src.data<double>(), v.outer, v.red, m);
    else if (!extreme(x)) {
      f32 ? moments_cols(v.src.data<float>(), v.outer, v.red, v.inner, m)
          : moments_cols(v.src.data<double>(), v.outer, v.red, v.inner, m);
      fast = true;
    }
    if (!fast) f32 ? moments_sequential<float>(v, m) : moments_sequential<double>(v, m);
  } else {
    for (Moments& e : m) e.n = static_cast<double>(plan.count);  // 0: NaN results
  }
  const double count = static_cast<double>(plan.count);
  const double divisor = std::max(0.0, count - correction);
  char* vp = static_cast<char*>(var.data_ptr());
  char* mp = with_mean ? static_cast<char*>(mean.data_ptr()) : nullptr;
  const auto isz = static_cast<int64_t>(var.itemsize());
  for (int64_t i = 0; i < n; ++i) {
    const Moments& e = m[static_cast<size_t>(i)];
    const double v = e.m2 / divisor;
    store_from_double(vp + i * isz, x.dtype(), root ? std::sqrt(v) : v);
    if (mp) store_from_double(mp + i * isz, x.dtype(), e.sum / count);
  }
}

double correction_of(const Value& v) { return v.is_none() ? 1.0 : v.to_double(); }

void var_correction(const OpDef&, const Args& a, const Values& o) {
  var_family(a, correction_of(a.value("correction")), a.flag("keepdim"), false, o);
}
void std_correction(const OpDef&, const Args& a, const Values& o) {
  var_family(a, correction_of(a.value("correction")), a.flag("keepdim"), true, o);
}
void var_dim(const OpDef&, const Args& a, const Values& o) {
  var_family(a, a.flag("unbiased") ? 1.0 : 0.0, a.flag("keepdim"), false, o);
}

// Complex and fp8 inputs are refused (the reference raises for fp8; complex is not computed).
bool real_supports(const OpDef&, const Values& a, std::string* why) {
  for (const Value& v : a) {
    if (v.kind() != ValueKind::DType && !v.is_tensor()) continue;
    const DType t = v.is_tensor() ? v.tensor().dtype() : v.to_dtype();
    if (is_complex(t)) {
      if (why) *why = "backend 'cpu' reduces real dtypes only";
      return false;
    }
  }
  return true;
}

// ---- prod ----

// Products of [outer, red, inner] (compute dtype T), in f64 lanes along rows; sequential in
// the reference's order for columns and for extreme inputs.
// Products along rows in f64 lanes; false when a row holds a wild value (then nothing is
// promised about out).
template <typename T>
bool prod_rows(const RowsView& v, double* out) {
  const T* x = v.src.data<T>();
  const StatLoops<T>& k = stat_loops<T>();
  std::atomic<bool> wild{false};
  if (v.red <= kSplit || v.outer >= 2 * num_threads()) {
    parallel_for(0, v.outer, std::max<int64_t>(1, 32768 / std::max<int64_t>(v.red, 1)),
                 [&](int64_t lo, int64_t hi) {
                   bool bad = false;
                   for (int64_t o = lo; o < hi; ++o) out[o] = k.prod(x + o * v.red, v.red, &bad);
                   if (bad) wild.store(true, std::memory_order_relaxed);
                 });
    return !wild;
  }
  const int64_t nblk = (v.red + kSplit - 1) / kSplit;
  std::vector<double> part(static_cast<size_t>(v.outer * nblk));
  parallel_for(0, v.outer * nblk, 1, [&](int64_t lo, int64_t hi) {
    bool bad = false;
    for (int64_t t = lo; t < hi; ++t) {
      const int64_t o = t / nblk, beg = (t % nblk) * kSplit;
      part[static_cast<size_t>(t)] =
          k.prod(x + o * v.red + beg, std::min(kSplit, v.red - beg), &bad);
    }
    if (bad) wild.store(true, std::memory_order_relaxed);
  });
  for (int64_t o = 0; o < v.outer; ++o) {
    double p = 1;
    for (int64_t b = 0; b < nblk; ++b) p *= part[static_cast<size_t>(o * nblk + b)];
    out[o] = p;
  }
  return !wild;
}

// Products in the reference's order (columns, and rows with a wild value).
template <typename T>
void prod_sequential(const RowsView& v, double* out) {
  const T* x = v.src.data<T>();
  parallel_for(0, v.outer, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t o = lo; o < hi; ++o) {
      double* acc = out + o * v.inner;
      std::fill(acc, acc + v.inner, 1.0);
      for (int64_t r = 0; r < v.red; ++r) {
        const T* row = x + (o * v.red + r) * v.inner;
        for (int64_t j = 0; j < v.inner; ++j) acc[j] *= static_cast<double>(row[j]);
      }
    }
  });
}

template <typename T>
void prod_floating(const RowsView& v, double* out) {
  if (v.inner == 1 && prod_rows<T>(v, out)) return;
  prod_sequential<T>(v, out);
}

// Into `out`, the meta function's output (its dtype: dtype=, else int64 for an integral input,
// else the input's).
void prod_impl(const Args& a, const std::vector<int64_t>& dims, bool keepdim, const Tensor& out) {
  const Tensor& x = a.tensor("self");
  if (x.dtype() == DType::Float8E4M3FN || x.dtype() == DType::Float8E5M2)
    not_implemented_for("prod_cpu", x.dtype());
  const DType out_dt = out.dtype();
  const stats::ReducePlan plan = stats::plan_reduction(x, dims, keepdim);
  const int64_t n = out.numel();
  char* dst = static_cast<char*>(out.data_ptr());
  const auto isz = static_cast<int64_t>(out.itemsize());
  if (is_integral(out_dt, true)) {
    // ATen converts a floating input to int64 (truncating) and multiplies with wrap-around:
    // the order does not matter.
    Tensor xi = Tensor::uninitialized(x.shape(), DType::Int64);
    if (is_floating(x.dtype())) {
      const Tensor xc = contiguous_as(x, x.dtype());
      const char* src = static_cast<const char*>(xc.data_ptr());
      int64_t* d = xi.data<int64_t>();
      for (int64_t i = 0; i < x.numel(); ++i) {
        alignas(8) unsigned char buf[8] = {};
        store_from_double(buf, DType::Int64,
                          load_as_double(src + i * static_cast<int64_t>(x.itemsize()), x.dtype()));
        d[i] = load_as_int(buf, DType::Int64);
      }
    } else if (x.numel() > 0) {
      xi = contiguous_as(x, DType::Int64);
    }
    std::vector<uint64_t> acc(static_cast<size_t>(n), 1);
    if (x.numel() > 0) {
      const RowsView v = reduce_rows(xi, plan.reduced, DType::Int64);
      const int64_t* p = v.src.data<int64_t>();
      for (int64_t o = 0; o < v.outer; ++o)
        for (int64_t r = 0; r < v.red; ++r)
          for (int64_t j = 0; j < v.inner; ++j)
            acc[static_cast<size_t>(o * v.inner + j)] *=
                static_cast<uint64_t>(p[(o * v.red + r) * v.inner + j]);
    }
    for (int64_t i = 0; i < n; ++i)
      store_from_int(dst + i * isz, out_dt, static_cast<int64_t>(acc[static_cast<size_t>(i)]));
    return;
  }
  std::vector<double> acc(static_cast<size_t>(n), 1.0);
  if (x.numel() > 0) {
    // dtype=: the values as the output dtype first (f32 multiplied as f16 values).
    const Tensor in = out_dt == x.dtype() ? x : contiguous_as(x, out_dt);
    const DType ct = reduce_compute_dtype(out_dt);
    const RowsView v = reduce_rows(in, plan.reduced, ct);
    if (ct == DType::Float32)
      prod_floating<float>(v, acc.data());
    else
      prod_floating<double>(v, acc.data());
  }
  for (int64_t i = 0; i < n; ++i)
    store_from_double(dst + i * isz, out_dt, acc[static_cast<size_t>(i)]);
}

void prod_all(const OpDef&, const Args& a, const Values& o) {
  prod_impl(a, {}, false, o.at(0).tensor());
}
void prod_dim(const OpDef&, const Args& a, const Values& o) {
  prod_impl(a, {a.integer("dim")}, a.flag("keepdim"), o.at(0).tensor());
}

}  // namespace

void register_moment_kernels(KernelTable& t) {
  // Every real dtype: integral inputs raise as the reference does.
  const auto all = pw_all_dtypes();
  auto add = [&](const char* name, KernelIntoFn fn) {
    t.add(name, {.supports = &real_supports, .dtypes = all, .run_into = fn});
  };
  add("aten.var.correction", &var_correction);
  add("aten.std.correction", &std_correction);
  add("aten.var_mean.correction", &var_correction);
  add("aten.std_mean.correction", &std_correction);
  add("aten.var.dim", &var_dim);
  add("aten.prod.default", &prod_all);
  add("aten.prod.dim_int", &prod_dim);
}

}  // namespace crucible::cpu
