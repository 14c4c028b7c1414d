// The `cpu` backend's batch norm: native_batch_norm, _native_batch_norm_legit (.default,
// .no_stats, _no_training) and native_batch_norm_backward. Channels are split over the thread
// pool; each channel's statistics are one pass over its N rows of H*W contiguous elements
// (moments merged row by row), its output a second pass (from L2 when the channel fits).
// Destination-passing: the meta functions (ops/batch_norm.cpp) check the call and give the
// outputs; the running-stat update is the catalog's (crucible/ops/rules/norm.h).
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
#include "crucible/core/error.h"
#include "crucible/ops/args.h"
#include "crucible/ops/rules/norm.h"

namespace crucible::cpu {
namespace {

using OptT = std::optional<Tensor>;

using nnops::BatchLayout;

// Channels per task of the training passes: a tile of channels whose data (`bytes` per
// element) stays in L2 between the statistics pass and the output pass, visited batch-major
// (the rows of consecutive channels are adjacent in memory); at least one tile per thread.
int64_t tile_channels(const BatchLayout& l, size_t bytes) {
  const int64_t per_channel = std::max<int64_t>(1, l.n * static_cast<int64_t>(bytes));
  const int64_t fit = std::max<int64_t>(1, (int64_t{1} << 20) / per_channel);
  const int64_t threads = num_threads();
  return std::max<int64_t>(1, std::min(fit, (l.c + threads - 1) / threads));
}

// Per-channel values of an optional parameter in double (`dflt` when absent).
std::vector<double> channel_values(const OptT& p, int64_t c, double dflt) {
  std::vector<double> v(static_cast<size_t>(c), dflt);
  if (p)
    for (int64_t f = 0; f < c; ++f) v[f] = p->get(f);
  return v;
}

template <typename T>
std::optional<Values> bn_forward_t(const Tensor& input, const OptT& w, const OptT& b,
                                   const OptT& rm, const OptT& rv, bool training, double momentum,
                                   double eps, const BatchLayout& l, DType work, bool exact,
                                   const Values& outs) {
  const Tensor x = norm_in(input, work);
  Tensor y = output_buffer(outs.at(0), input.shape(), work);
  const std::vector<double> wv = channel_values(w, l.c, 1.0), bv = channel_values(b, l.c, 0.0);
  std::vector<double> mean(static_cast<size_t>(l.c)), invstd(static_cast<size_t>(l.c)),
      var_sum(static_cast<size_t>(l.c));
  if (!training) {
    for (int64_t f = 0; f < l.c; ++f) {
      mean[f] = rm->get(f);
      invstd[f] = 1.0 / std::sqrt(rv->get(f) + eps);
    }
  }
  const T* xp = x.data<T>();
  T* yp = y.data<T>();
  const int64_t plane = l.c * l.inner;
  const StatLoops<T>& k = stat_loops<T>();
  std::atomic<bool> wild{false};
  const bool stream = stream_output(y.numel() * static_cast<int64_t>(sizeof(T)), l.inner);
  // Whether the row's input is wild.
  auto apply = [&](int64_t i, int64_t f) {
    const int64_t at = i * plane + f * l.inner;
    return k.affine(xp + at, yp + at, l.inner, static_cast<T>(mean[f]), static_cast<T>(invstd[f]),
                    static_cast<T>(wv[f]), static_cast<T>(bv[f]), stream);
  };
  if (!training) {  // one pass in memory order
    parallel_for(0, l.batch * l.c, std::max<int64_t>(1, 16384 / std::max<int64_t>(l.inner, 1)),
                 [&](int64_t r0, int64_t r1) {
                   bool bad = false;
                   for (int64_t r = r0; r < r1; ++r) bad |= apply(r / l.c, r % l.c);
                   if (bad && !exact) wild.store(true, std::memory_order_relaxed);
                 });
  } else {
    const int64_t fb = tile_channels(l, sizeof(T));
    parallel_for(0, (l.c + fb - 1) / fb, 1, [&](int64_t t0, int64_t t1) {
      std::vector<Moments> mo(static_cast<size_t>(fb));
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t f0 = t * fb, f1 = std::min(l.c, f0 + fb);
        std::fill(mo.begin(), mo.end(), Moments{});
        if constexpr (sizeof(T) == 8) {
          if (exact)
            for (int64_t f = f0; f < f1; ++f)
              mo[f - f0] = moments_in_order(xp + f * l.inner, l.inner, l.batch, plane);
        }
        if (!exact)
          for (int64_t i = 0; i < l.batch; ++i)
            for (int64_t f = f0; f < f1; ++f)
              mo[f - f0].merge(k.moments(xp + i * plane + f * l.inner, l.inner));
        for (int64_t f = f0; f < f1; ++f) {
          if (mo[f - f0].wild) wild.store(true, std::memory_order_relaxed);
          const double var = mo[f - f0].m2 / static_cast<double>(l.n);
          mean[f] = mo[f - f0].sum / static_cast<double>(l.n);
          var_sum[f] = mo[f - f0].m2;
          invstd[f] = (var == 0 && eps == 0) ? 0.0 : 1.0 / std::sqrt(var + eps);
        }
        for (int64_t i = 0; i < l.batch; ++i)
          for (int64_t f = f0; f < f1; ++f) apply(i, f);
      }
    });
  }
  if (wild) return std::nullopt;
  // The saved statistics straight into the meta function's outputs ([C] when training, else
  // empty), the running ones updated in place.
  if (training)
    nnops::store_batch_stats(outs.at(1).tensor(), outs.at(2).tensor(), rm, rv, mean, invstd,
                             var_sum, l.n, momentum);
  return Values{y};
}

// Into the meta function's outputs (out, save_mean, save_invstd), which raised ATen's argument
// and dispatch errors and gave the statistics' dtype and shape.
void bn_forward(const Tensor& x, const OptT& w, const OptT& b, const OptT& rm, const OptT& rv,
                bool training, double momentum, double eps, const Values& outs) {
  const BatchLayout l = nnops::batch_layout(x);
  bool force = false;
  for (const OptT& p : {w, b, rm, rv}) force = force || (p && extreme(*p));
  const Values r = run_norm(x.dtype(), force, [&]<typename T>(DType work, bool exact) {
    return bn_forward_t<T>(x, w, b, rm, rv, training, momentum, eps, l, work, exact, outs);
  });
  store_output(r[0].tensor(), outs.at(0));
}

void native_batch_norm_kernel(const OpDef&, const Args& a, const Values& outs) {
  bn_forward(a.tensor("input"), a.opt_tensor("weight"), a.opt_tensor("bias"),
             a.opt_tensor("running_mean"), a.opt_tensor("running_var"), a.flag("training"),
             a.real("momentum"), a.real("eps"), outs);
}

void legit_no_stats_kernel(const OpDef&, const Args& a, const Values& outs) {
  bn_forward(a.tensor("input"), a.opt_tensor("weight"), a.opt_tensor("bias"), std::nullopt,
             std::nullopt, a.flag("training"), a.real("momentum"), a.real("eps"), outs);
}

void legit_no_training_kernel(const OpDef&, const Args& a, const Values& outs) {
  bn_forward(a.tensor("input"), a.opt_tensor("weight"), a.opt_tensor("bias"),
             a.opt_tensor("running_mean"), a.opt_tensor("running_var"), false, a.real("momentum"),
             a.real("eps"), outs);
}

template <typename T>
std::optional<Values> bn_backward_t(const Tensor& g_in, const Tensor& x_in,
                                    const std::vector<double>& mean,
                                    const std::vector<double>& invstd,
                                    const std::vector<double>& wt, bool train,
                                    const std::vector<bool>& mask, const BatchLayout& l, DType work,
                                    bool exact, const Values& outs) {
  const Tensor g = norm_in(g_in, work), x = norm_in(x_in, work);
  const T* gp = g.data<T>();
  const T* xp = x.data<T>();
  std::vector<double> sum(static_cast<size_t>(l.c)), dotp(static_cast<size_t>(l.c));
  Tensor gi = mask.at(0) ? output_buffer(outs.at(0), x_in.shape(), work) : Tensor();
  T* gip = mask.at(0) ? gi.data<T>() : nullptr;
  const int64_t plane = l.c * l.inner;
  const double n = static_cast<double>(l.n);
  const StatLoops<T>& k = stat_loops<T>();
  if constexpr (sizeof(T) == 8) {
    if (exact)
      batch_norm_backward_exact(gp, xp, mean.data(), invstd.data(), wt.data(), train, l.batch, l.c,
                                l.inner, gip, sum.data(), dotp.data());
  }
  const int64_t fb = tile_channels(l, 2 * sizeof(T));
  const bool stream = stream_output(x.numel() * static_cast<int64_t>(sizeof(T)), l.inner);
  std::atomic<bool> wild{false};
  if (!exact)
    parallel_for(0, (l.c + fb - 1) / fb, 1, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1 && !wild.load(std::memory_order_relaxed); ++t) {
        const int64_t f0 = t * fb, f1 = std::min(l.c, f0 + fb);
        // sum g and sum g * (x - mean) per channel
        for (int64_t f = f0; f < f1; ++f) sum[f] = dotp[f] = 0;
        for (int64_t i = 0; i < l.batch; ++i)
          for (int64_t f = f0; f < f1; ++f) {
            const int64_t at = i * plane + f * l.inner;
            double dd, ss;
            if (k.dot_sum(gp + at, nullptr, xp + at, l.inner, mean[f], &dd, &ss))
              wild.store(true, std::memory_order_relaxed);
            sum[f] += ss;
            dotp[f] += dd;
          }
        if (!gip) continue;
        for (int64_t i = 0; i < l.batch; ++i)
          for (int64_t f = f0; f < f1; ++f) {
            const int64_t at = i * plane + f * l.inner;
            if (train) {
              // (g - sum/n - (x - mean) * dot * invstd^2 / n) * invstd * w
              const double scale = invstd[f] * wt[f];
              const double kk = dotp[f] * invstd[f] * invstd[f] / n;
              k.backward(gp + at, nullptr, xp + at, gip + at, l.inner, static_cast<T>(scale),
                         static_cast<T>(-scale * kk), static_cast<T>(mean[f]),
                         static_cast<T>(-scale * sum[f] / n), stream);
            } else {
              k.affine(gp + at, gip + at, l.inner, T(0), static_cast<T>(invstd[f]),
                       static_cast<T>(wt[f]), T(0), stream);
            }
          }
      }
    });
  if (wild) return std::nullopt;
  // The parameters' gradients straight into the meta function's outputs.
  if (mask.at(1)) {
    const Tensor& gw = outs.at(1).tensor();
    for (int64_t f = 0; f < l.c; ++f) gw.set(f, dotp[f] * invstd[f]);
  }
  if (mask.at(2)) {
    const Tensor& gb = outs.at(2).tensor();
    for (int64_t f = 0; f < l.c; ++f) gb.set(f, sum[f]);
  }
  return Values{gi};
}

// Into the meta function's outputs (the ones output_mask asks for; it raised ATen's errors).
void bn_backward_kernel(const OpDef&, const Args& a, const Values& outs) {
  const Tensor& g = a.tensor("grad_out");
  const Tensor& x = a.tensor("input");
  const OptT w = a.opt_tensor("weight"), rm = a.opt_tensor("running_mean"),
             rv = a.opt_tensor("running_var");
  const OptT sm = a.opt_tensor("save_mean"), si = a.opt_tensor("save_invstd");
  const bool train = a.flag("train");
  const std::vector<bool> mask = a.value("output_mask").bool_list();
  const BatchLayout l = nnops::batch_layout(x);
  const nnops::BatchBackwardStats st = nnops::batch_norm_backward_stats(a, l.c);
  bool force = false;
  for (const OptT& p : {w, rm, rv, sm, si}) force = force || (p && extreme(*p));
  const Values r = run_norm(x.dtype(), force, [&]<typename T>(DType work, bool exact) {
    return bn_backward_t<T>(g, x, st.mean, st.invstd, st.weight, train, mask, l, work, exact, outs);
  });
  if (mask.at(0)) store_output(r[0].tensor(), outs.at(0));
}

}  // namespace

// Every real dtype: the integral ones raise ATen's "not implemented for" error from the meta
// function, as the reference does.
void register_batch_norm_kernels(KernelTable& t) {
  const std::vector<DType> bn_dtypes = pw_all_dtypes();
  t.add("aten.native_batch_norm.default",
        {.dtypes = bn_dtypes, .run_into = &native_batch_norm_kernel});
  t.add("aten._native_batch_norm_legit.default",
        {.dtypes = bn_dtypes, .run_into = &native_batch_norm_kernel});
  t.add("aten._native_batch_norm_legit.no_stats",
        {.dtypes = bn_dtypes, .run_into = &legit_no_stats_kernel});
  t.add("aten._native_batch_norm_legit_no_training.default",
        {.dtypes = bn_dtypes, .run_into = &legit_no_training_kernel});
  t.add("aten.native_batch_norm_backward.default",
        {.dtypes = bn_dtypes, .run_into = &bn_backward_kernel});
}

}  // namespace crucible::cpu
