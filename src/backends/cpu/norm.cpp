// The `cpu` backend's layer and group norms: native_layer_norm (+ backward), native_group_norm
// (+ backward). Rows are split over the thread pool and computed with the vectorized loops of
// reduction_kernels.h: one pass over memory for a row's moments (L1-sized blocks merged), one
// for its output; f16/bf16 compute in f32, f64 (and calls with extreme values) in f64.
// They compute into the meta function's outputs (KernelEntry::run_into: the argument, layout
// and dispatch checks, the outputs' shapes and dtypes are its: ops/norm.cpp,
// ops/group_norm.cpp), directly where an output is in the work dtype.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backends/cpu/nn.h"
#include "backends/cpu/nn_util.h"
#include "backends/cpu/norm_rows.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/pointwise_ops.h"
#include "backends/cpu/reduction_kernels.h"
#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"
#include "crucible/ops/rules/norm.h"

namespace crucible::cpu {
namespace {

using OptT = std::optional<Tensor>;

OptT opt(const Args& a, const char* name) { return a.opt_tensor(name); }

template <typename T>
std::optional<Values> layer_norm_t(const Tensor& input, const OptT& w, const OptT& b, int64_t m,
                                   int64_t n, double eps, DType work, bool exact,
                                   const Values& outs) {
  const Tensor x = norm_in(input, work);
  const Tensor wt = w ? norm_in(*w, work) : Tensor(), bt = b ? norm_in(*b, work) : Tensor();
  Tensor y = output_buffer(outs.at(0), input.shape(), work);
  Tensor mean = output_buffer(outs.at(1), {m}, work), rstd = output_buffer(outs.at(2), {m}, work);
  const T* xp = x.data<T>();
  const T* wp = w ? wt.data<T>() : nullptr;
  const T* bp = b ? bt.data<T>() : nullptr;
  T* yp = y.data<T>();
  T* mp = mean.data<T>();
  T* rp = rstd.data<T>();
  const StatLoops<T>& k = stat_loops<T>();
  const bool stream = stream_output(y.numel() * static_cast<int64_t>(sizeof(T)), n);
  std::atomic<bool> wild{false};
  parallel_for(0, m, std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1)),
               [&](int64_t r0, int64_t r1) {
                 for (int64_t r = r0; r < r1 && !wild.load(std::memory_order_relaxed); ++r) {
                   const Moments mo = row_moments(xp + r * n, n, exact);
                   if (mo.wild && !exact) wild.store(true, std::memory_order_relaxed);
                   const double dn = static_cast<double>(n);
                   const T mu = static_cast<T>(mo.sum / dn);
                   const T rs = static_cast<T>(1.0 / std::sqrt(mo.m2 / dn + eps));
                   k.affine_wb(xp + r * n, yp + r * n, n, mu, rs, wp, bp, stream);
                   mp[r] = mu;
                   rp[r] = rs;
                 }
               });
  if (wild) return std::nullopt;
  return Values{y, mean, rstd};
}

// Rows (m) and row length (n) of a layer norm; the meta function checked the shapes.
std::pair<int64_t, int64_t> layer_norm_rows(const Tensor& x, const std::vector<int64_t>& ns) {
  int64_t m = 1, n = 1;
  for (int64_t d = 0; d < x.dim() - static_cast<int64_t>(ns.size()); ++d) m *= x.size(d);
  for (int64_t s : ns) n *= s;
  return {m, n};
}

// Into the meta function's outputs (which raised ATen's argument and dispatch errors and gave
// the statistics' shape and dtype).
void layer_norm_kernel(const OpDef&, const Args& a, const Values& outs) {
  const Tensor& x = a.tensor("input");
  const OptT w = opt(a, "weight"), b = opt(a, "bias");
  const double eps = a.real("eps");
  const auto [m, n] = layer_norm_rows(x, a.ints("normalized_shape"));
  const Values r = run_norm(x.dtype(), any_extreme({w ? &*w : nullptr, b ? &*b : nullptr}),
                            [&]<typename T>(DType work, bool exact) {
                              return layer_norm_t<T>(x, w, b, m, n, eps, work, exact, outs);
                            });
  for (size_t i = 0; i < 3; ++i) store_output(r[i].tensor(), outs.at(i));
}

// One pass over the rows: each row's dot products (dy*w against x - mean), then its dx and its
// terms of dgamma / dbeta (f64 accumulators per chunk of rows, combined in chunk order).
template <typename T>
std::optional<Values> layer_norm_backward_t(const Tensor& dy_in, const Tensor& x_in,
                                            const Tensor& mean_in, const Tensor& rstd_in,
                                            const OptT& w, const std::vector<bool>& mask, int64_t m,
                                            int64_t n, DType work, bool exact, const Values& outs) {
  const Tensor dy = norm_in(dy_in, work), x = norm_in(x_in, work);
  const Tensor mean = norm_in(mean_in, work), rstd = norm_in(rstd_in, work);
  const Tensor wt = w ? norm_in(*w, work) : Tensor();
  const T* dyp = dy.data<T>();
  const T* xp = x.data<T>();
  const T* mp = mean.data<T>();
  const T* rp = rstd.data<T>();
  const T* wp = w ? wt.data<T>() : nullptr;
  const StatLoops<T>& k = stat_loops<T>();
  const bool want_dx = mask.at(0), want_params = mask.at(1) || mask.at(2);
  Tensor dx = want_dx ? output_buffer(outs.at(0), x_in.shape(), work) : Tensor();
  T* dxp = want_dx ? dx.data<T>() : nullptr;
  if constexpr (sizeof(T) == 8) {
    if (exact) {
      Tensor dw = Tensor::uninitialized({n}, work), db = Tensor::uninitialized({n}, work);
      nnops::layer_norm_backward_f64(dyp, xp, mp, rp, wp, m, n, dxp, dw.data<T>(), db.data<T>());
      Values out(3);
      if (want_dx) out[0] = dx;
      if (mask.at(1)) out[1] = dw;
      if (mask.at(2)) out[2] = db;
      return std::optional<Values>(std::move(out));
    }
  }
  const double s = n > 0 ? 1.0 / static_cast<double>(n) : 0.0;
  const bool stream = stream_output(x.numel() * static_cast<int64_t>(sizeof(T)), n);
  const int64_t chunks = std::max<int64_t>(1, std::min<int64_t>(num_threads(), m));
  std::vector<std::vector<double>> pg(static_cast<size_t>(chunks)), pb(static_cast<size_t>(chunks));
  std::atomic<bool> wild{false};
  parallel_for(0, chunks, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      if (want_params) {
        pg[c].assign(static_cast<size_t>(n), 0.0);
        pb[c].assign(static_cast<size_t>(n), 0.0);
      }
      bool bad = false;
      for (int64_t r = m * c / chunks; r < m * (c + 1) / chunks && !bad; ++r) {
        const T* dyr = dyp + r * n;
        const T* xr = xp + r * n;
        const double mu = mp[r], rs = rp[r];
        if (want_dx) {
          double dot, sum;
          bad |= k.dot_sum(dyr, wp, xr, n, mu, &dot, &sum);
          const double bb = -dot * rs * rs * rs * s;
          bad |= k.backward(dyr, wp, xr, dxp + r * n, n, static_cast<T>(rs), static_cast<T>(bb),
                            static_cast<T>(mu), static_cast<T>(-sum * rs * s), stream);
        }
        if (want_params) bad |= k.grad_params(dyr, xr, n, mu, rs, pg[c].data(), pb[c].data());
      }
      if (bad) wild.store(true, std::memory_order_relaxed);
    }
  });
  if (wild) return std::nullopt;
  Values out(3);
  if (want_dx) out[0] = dx;
  for (int which : {1, 2}) {
    if (!mask.at(which)) continue;
    Tensor t = Tensor::uninitialized({n}, work);
    T* tp = t.data<T>();
    const auto& parts = which == 1 ? pg : pb;
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (const auto& p : parts) acc += p.empty() ? 0.0 : p[j];
      tp[j] = static_cast<T>(acc);
    }
    out[which] = t;
  }
  return std::optional<Values>(std::move(out));
}

// Into the meta function's outputs (the ones output_mask asks for; it raised ATen's errors).
void layer_norm_backward_kernel(const OpDef&, const Args& a, const Values& outs) {
  const Tensor& dy = a.tensor("grad_out");
  const Tensor& x = a.tensor("input");
  const Tensor& mean = a.tensor("mean");
  const Tensor& rstd = a.tensor("rstd");
  const OptT w = opt(a, "weight");
  const std::vector<bool> mask = a.value("output_mask").bool_list();
  const auto [m, n] = layer_norm_rows(x, a.ints("normalized_shape"));
  const Values r = run_norm(x.dtype(), any_extreme({&mean, &rstd, w ? &*w : nullptr}),
                            [&]<typename T>(DType work, bool exact) {
                              return layer_norm_backward_t<T>(dy, x, mean, rstd, w, mask, m, n,
                                                              work, exact, outs);
                            });
  for (size_t i = 0; i < 3; ++i)
    if (r[i].is_tensor()) store_output(r[i].tensor(), outs.at(i));
}

// ---- group norm ----

struct GroupArgs {
  int64_t n, c, hxw, group;
};

// N, C, HxW and group as the call gives them (the meta function checked them).
GroupArgs group_args(const Args& a) {
  return {a.integer("N"), a.integer("C"), a.integer("HxW"), a.integer("group")};
}

template <typename T>
std::optional<Values> group_norm_t(const Tensor& input, const OptT& w, const OptT& b,
                                   const GroupArgs& g, double eps, DType work, bool exact,
                                   const Values& outs) {
  const Tensor x = norm_in(input, work);
  const Tensor wt = w ? norm_in(*w, work) : Tensor(), bt = b ? norm_in(*b, work) : Tensor();
  Tensor y = output_buffer(outs.at(0), input.shape(), work);
  Tensor mean = output_buffer(outs.at(1), {g.n, g.group}, work),
         rstd = output_buffer(outs.at(2), {g.n, g.group}, work);
  const int64_t d = g.c / g.group, k = d * g.hxw;
  const T* xp = x.data<T>();
  const T* wp = w ? wt.data<T>() : nullptr;
  const T* bp = b ? bt.data<T>() : nullptr;
  T* yp = y.data<T>();
  T* mp = mean.data<T>();
  T* rp = rstd.data<T>();
  const StatLoops<T>& loops = stat_loops<T>();
  const bool stream = stream_output(y.numel() * static_cast<int64_t>(sizeof(T)), g.hxw);
  std::atomic<bool> wild{false};
  parallel_for(0, g.n * g.group, 1, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1 && !wild.load(std::memory_order_relaxed); ++r) {
      const T* xr = xp + r * k;
      const Moments mo = row_moments(xr, k, exact);
      if (mo.wild && !exact) wild.store(true, std::memory_order_relaxed);
      const double mu = k > 0 ? mo.sum / static_cast<double>(k) : 0.0;
      const double var = k > 0 ? mo.m2 / static_cast<double>(k) : 0.0;
      const double rs = 1.0 / std::sqrt(std::max(var, 0.0) + eps);
      const T tmu = static_cast<T>(mu), trs = static_cast<T>(rs);
      for (int64_t cl = 0; cl < d; ++cl) {
        const int64_t ch = (r % g.group) * d + cl;
        loops.affine(xr + cl * g.hxw, yp + r * k + cl * g.hxw, g.hxw, tmu, trs, wp ? wp[ch] : T(1),
                     bp ? bp[ch] : T(0), stream);
      }
      mp[r] = tmu;
      rp[r] = trs;
    }
  });
  if (wild) return std::nullopt;
  return Values{y, mean, rstd};
}

// Into the meta function's outputs (which raised ATen's argument, layout and dispatch errors).
void group_norm_kernel(const OpDef&, const Args& a, const Values& outs) {
  const Tensor& x = a.tensor("input");
  const OptT w = opt(a, "weight"), b = opt(a, "bias");
  const GroupArgs g = group_args(a);
  const double eps = a.real("eps");
  const Values r = run_norm(x.dtype(), any_extreme({w ? &*w : nullptr, b ? &*b : nullptr}),
                            [&]<typename T>(DType work, bool exact) {
                              return group_norm_t<T>(x, w, b, g, eps, work, exact, outs);
                            });
  for (size_t i = 0; i < 3; ++i) store_output(r[i].tensor(), outs.at(i));
}

// ds[n, c] = sum_hw dy * (x - mean) and db[n, c] = sum_hw dy per channel (centred on the
// group's mean: the same algebra as the reference's uncentred sums, without their cancellation),
// then dx per channel as a * dy + b * (x - mean) + c.
template <typename T>
std::optional<Values> group_norm_backward_t(const Tensor& dy_in, const Tensor& x_in,
                                            const Tensor& mean_in, const Tensor& rstd_in,
                                            const OptT& w, const GroupArgs& g,
                                            const std::vector<bool>& mask, DType work, bool exact,
                                            const Values& outs) {
  const Tensor dy = norm_in(dy_in, work), x = norm_in(x_in, work);
  const Tensor mean = norm_in(mean_in, work), rstd = norm_in(rstd_in, work);
  const Tensor wt = w ? norm_in(*w, work) : Tensor();
  const T* dyp = dy.data<T>();
  const T* xp = x.data<T>();
  const T* mp = mean.data<T>();
  const T* rp = rstd.data<T>();
  const T* wp = w ? wt.data<T>() : nullptr;
  const int64_t d = g.c / g.group, k = d * g.hxw;
  if constexpr (sizeof(T) == 8) {
    if (exact) {
      Tensor dx = mask.at(0) ? output_buffer(outs.at(0), x_in.shape(), work) : Tensor();
      Tensor dg = Tensor::uninitialized({g.c}, work), dbt = Tensor::uninitialized({g.c}, work);
      group_norm_backward_exact(dyp, xp, mp, rp, wp, g.n, g.c, g.hxw, g.group,
                                mask.at(0) ? dx.data<T>() : nullptr, dg.data<T>(), dbt.data<T>());
      Values out(3);
      if (mask.at(0)) out[0] = dx;
      if (mask.at(1)) out[1] = dg;
      if (mask.at(2)) out[2] = dbt;
      return std::optional<Values>(std::move(out));
    }
  }
  const StatLoops<T>& loops = stat_loops<T>();
  std::vector<double> ds(static_cast<size_t>(g.n * g.c)), db(static_cast<size_t>(g.n * g.c));
  std::atomic<bool> wild{false};
  parallel_for(0, g.n * g.c, std::max<int64_t>(1, 8192 / std::max<int64_t>(g.hxw, 1)),
               [&](int64_t r0, int64_t r1) {
                 bool bad = false;
                 for (int64_t r = r0; r < r1; ++r) {
                   const double mu = mp[(r / g.c) * g.group + (r % g.c) / d];
                   bad |= loops.dot_sum(dyp + r * g.hxw, nullptr, xp + r * g.hxw, g.hxw, mu, &ds[r],
                                        &db[r]);
                 }
                 if (bad) wild.store(true, std::memory_order_relaxed);
               });
  if (wild) return std::nullopt;
  auto gamma = [&](int64_t ch) { return wp ? static_cast<double>(wp[ch]) : 1.0; };
  Values out(3);
  if (mask.at(0)) {
    Tensor dx = output_buffer(outs.at(0), x_in.shape(), work);
    T* dxp = dx.data<T>();
    const double s = k > 0 ? 1.0 / static_cast<double>(k) : 0.0;
    const bool stream = stream_output(dx.numel() * static_cast<int64_t>(sizeof(T)), g.hxw);
    // Short planes (7x7, 14x14): one call per group over its d planes, with gamma spread over
    // each plane's elements once for the whole batch (wide), instead of one short call per
    // channel.
    const bool per_group = g.hxw < 256;
    std::vector<T> wide;
    if (per_group && wp) {
      wide.resize(static_cast<size_t>(g.c * g.hxw));
      for (int64_t ch = 0; ch < g.c; ++ch) std::fill_n(wide.begin() + ch * g.hxw, g.hxw, wp[ch]);
    }
    parallel_for(0, g.n * g.group, 1, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t n = r / g.group, grp = r % g.group;
        const double mu = mp[r], rs = rp[r];
        double ds_g = 0, db_g = 0;
        for (int64_t ch = grp * d; ch < (grp + 1) * d; ++ch) {
          ds_g += ds[n * g.c + ch] * gamma(ch);
          db_g += db[n * g.c + ch] * gamma(ch);
        }
        const T c2 = static_cast<T>(-ds_g * rs * rs * rs * s);
        const T c3 = static_cast<T>(-db_g * rs * s);
        if (per_group) {
          loops.backward(dyp + r * k, wp ? wide.data() + grp * k : nullptr, xp + r * k, dxp + r * k,
                         k, static_cast<T>(rs), c2, static_cast<T>(mu), c3, stream);
          continue;
        }
        for (int64_t cl = 0; cl < d; ++cl) {
          const int64_t ch = grp * d + cl;
          const int64_t base = r * k + cl * g.hxw;
          loops.backward(dyp + base, nullptr, xp + base, dxp + base, g.hxw,
                         static_cast<T>(rs * gamma(ch)), c2, static_cast<T>(mu), c3, stream);
        }
      }
    });
    out[0] = dx;
  }
  if (mask.at(1)) {
    Tensor dg = Tensor::uninitialized({g.c}, work);
    T* p = dg.data<T>();
    for (int64_t ch = 0; ch < g.c; ++ch) {
      double acc = 0;
      for (int64_t n = 0; n < g.n; ++n)
        acc += ds[n * g.c + ch] * static_cast<double>(rp[n * g.group + ch / d]);
      p[ch] = static_cast<T>(acc);
    }
    out[1] = dg;
  }
  if (mask.at(2)) {
    Tensor dbt = Tensor::uninitialized({g.c}, work);
    T* p = dbt.data<T>();
    for (int64_t ch = 0; ch < g.c; ++ch) {
      double acc = 0;
      for (int64_t n = 0; n < g.n; ++n) acc += db[n * g.c + ch];
      p[ch] = static_cast<T>(acc);
    }
    out[2] = dbt;
  }
  return std::optional<Values>(std::move(out));
}

// Into the meta function's outputs (the ones output_mask asks for; it raised ATen's errors).
void group_norm_backward_kernel(const OpDef&, const Args& a, const Values& outs) {
  const Tensor& dy = a.tensor("grad_out");
  const Tensor& x = a.tensor("input");
  const Tensor& mean = a.tensor("mean");
  const Tensor& rstd = a.tensor("rstd");
  const OptT w = opt(a, "weight");
  const std::vector<bool> mask = a.value("output_mask").bool_list();
  const GroupArgs g = group_args(a);
  const Values r =
      run_norm(x.dtype(), any_extreme({&mean, &rstd, w ? &*w : nullptr}),
               [&]<typename T>(DType work, bool exact) {
                 return group_norm_backward_t<T>(dy, x, mean, rstd, w, g, mask, work, exact, outs);
               });
  for (size_t i = 0; i < 3; ++i)
    if (r[i].is_tensor()) store_output(r[i].tensor(), outs.at(i));
}

}  // namespace

void register_batch_norm_kernels(KernelTable& t);  // norm_batch.cpp

// Every real dtype: the integral ones raise ATen's "not implemented for" error from the meta
// function, as the reference does.
void register_norm_kernels(KernelTable& t) {
  const std::vector<DType> norm_dtypes = pw_all_dtypes();
  t.add("aten.native_layer_norm.default", {.dtypes = norm_dtypes, .run_into = &layer_norm_kernel});
  t.add("aten.native_layer_norm_backward.default",
        {.dtypes = norm_dtypes, .run_into = &layer_norm_backward_kernel});
  t.add("aten.native_group_norm.default", {.dtypes = norm_dtypes, .run_into = &group_norm_kernel});
  t.add("aten.native_group_norm_backward.default",
        {.dtypes = norm_dtypes, .run_into = &group_norm_backward_kernel});
  register_batch_norm_kernels(t);
}

}  // namespace crucible::cpu
