// Batch normalisation: aten.native_batch_norm.default, aten._native_batch_norm_legit.default /
// .no_stats, aten._native_batch_norm_legit_no_training.default and
// aten.native_batch_norm_backward.default.
//
// Reference semantics (PyTorch 2.x, CPU; Normalization.cpp batch_norm_cpu, cpu/mixed_data_type.h):
//  - input is [N, C, *] (at least 2-d); statistics are per channel over the n = N * prod(*)
//    elements of the channel.
//  - training: save_mean = E[x], save_invstd = 1 / sqrt(var + eps) with the biased variance
//    (0 when var == 0 and eps == 0: InvStd). Defined running stats are updated in place:
//    running_mean = momentum * mean + (1 - momentum) * running_mean,
//    running_var = momentum * var_sum / (n - 1) + (1 - momentum) * running_var (unbiased; n == 1
//    divides by zero, giving NaN/inf as ATen does). A training call on an empty input raises.
//  - evaluation: out = (x - running_mean) / sqrt(running_var + eps) * w + b; save_mean and
//    save_invstd are empty [0] tensors; running stats must be given.
//  - dtypes: f16, bf16, f32, f64 (2.x; PyTorch 1.13 rejected f16 on the CPU). A reduced-precision
//    input whose first defined parameter (weight, bias, running_mean, running_var) has another
//    dtype is "mixed": every defined parameter must then be f32, and save_mean / save_invstd (and
//    grad_weight / grad_bias in the backward) are f32. Otherwise parameters must have the
//    input's dtype; save_* have the input's dtype. The backward also takes what CUDA takes and
//    every real-model trace records: f16/bf16 input and params with f32 saved statistics
//    (nnops::backward_param_dtype; ATen's CPU kernel raises for it).
//  - Parameters of the wrong size are read out of bounds by ATen's native kernel (the size
//    checks live in at::batch_norm); the reference raises with at::batch_norm's message.
//  - Backward: train uses save_mean / save_invstd, eval uses the running stats. With
//    dotp = sum (x - mean) * g per channel, grad_weight = dotp * invstd, grad_bias = sum g,
//    grad_input = (g - sum(g)/n - (x - mean) * dotp * invstd^2 / n) * invstd * w (train) or
//    g * invstd * w (eval). Outputs not asked for by output_mask are undefined (None).
//
// NOTE: the spec's schema of native_batch_norm writes `Tensor? running_mean` without an alias
// annotation, but the op updates the running stats in place in training mode; the entry
// declares them mutated (`Tensor(a!)?`) so that they are compared and allowed to change.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/ops/destination.h"
#include "ops/families.h"
#include "ops/meta_fn.h"
#include "ops/norm_internal.h"
#include "ops/samples.h"
#include "ops/util.h"

namespace crucible {

namespace nnops {

BatchLayout batch_layout(const Tensor& x) {
  if (x.dim() < 2) {
    op_error("Dimension out of range (expected to be in range of [" +
             std::to_string(-std::max<int64_t>(x.dim(), 1)) + ", " +
             std::to_string(std::max<int64_t>(x.dim(), 1) - 1) + "], but got 1)");
  }
  BatchLayout l;
  l.batch = x.size(0);
  l.c = x.size(1);
  for (int64_t d = 2; d < x.dim(); ++d) l.inner *= x.size(d);
  l.n = l.batch * l.inner;
  return l;
}

void check_channel_param(const char* name, const std::optional<Tensor>& p, int64_t c) {
  if (p && p->numel() != c) {
    op_error(std::string(name) + " should contain " + std::to_string(c) + " elements not " +
             std::to_string(p->numel()));
  }
}

DType check_batch_norm(const Tensor& x, const std::optional<Tensor>& w,
                       const std::optional<Tensor>& b, const std::optional<Tensor>& rm,
                       const std::optional<Tensor>& rv, bool training) {
  check_floating_dispatch(x.dtype(), "batch_norm");
  const BatchLayout l = batch_layout(x);
  const DType pdt = param_dtype(x, {w, b, rm, rv});
  check_channel_param("weight", w, l.c);
  check_channel_param("bias", b, l.c);
  check_channel_param("running_mean", rm, l.c);
  check_channel_param("running_var", rv, l.c);
  if (!training && !rm) op_error("running_mean must be defined in evaluation mode");
  if (!training && !rv) op_error("running_var must be defined in evaluation mode");
  if (training && x.numel() == 0) {
    op_error("input tensor must have at least one element, but got input_sizes = " +
             shape_str(x.shape()));
  }
  return pdt;
}

DType check_batch_norm_backward(const Args& a) {
  const Tensor& g = a.tensor("grad_out");
  const Tensor& x = a.tensor("input");
  const std::optional<Tensor> w = a.opt_tensor("weight"), rm = a.opt_tensor("running_mean"),
                              rv = a.opt_tensor("running_var");
  const std::optional<Tensor> sm = a.opt_tensor("save_mean"), si = a.opt_tensor("save_invstd");
  const bool train = a.flag("train");
  check_floating_dispatch(x.dtype(), "batch_norm_backward_cpu");
  const BatchLayout l = batch_layout(x);
  const DType pdt = backward_param_dtype(x, w, rm, rv, sm, si);
  if (g.shape() != x.shape()) {
    op_error("grad_out must have the input's shape " + shape_str(x.shape()) + ", got " +
             shape_str(g.shape()));
  }
  if (g.dtype() != x.dtype()) {
    op_error("expected scalar type " + scalar_type_name(x.dtype()) + " but found " +
             scalar_type_name(g.dtype()));
  }
  check_channel_param("weight", w, l.c);
  if (train) {
    if (!sm || !si) op_error("save_mean and save_invstd must be defined in training mode");
    check_channel_param("save_mean", sm, l.c);
    check_channel_param("save_invstd", si, l.c);
  } else {
    if (!rm) op_error("running_mean must be defined in evaluation mode");
    if (!rv) op_error("running_var must be defined in evaluation mode");
    check_channel_param("running_mean", rm, l.c);
    check_channel_param("running_var", rv, l.c);
  }
  return pdt;
}

BatchBackwardStats batch_norm_backward_stats(const Args& a, int64_t c) {
  const std::optional<Tensor> w = a.opt_tensor("weight"), rm = a.opt_tensor("running_mean"),
                              rv = a.opt_tensor("running_var");
  const std::optional<Tensor> sm = a.opt_tensor("save_mean"), si = a.opt_tensor("save_invstd");
  const bool train = a.flag("train");
  const double eps = a.real("eps");
  BatchBackwardStats s;
  s.mean.resize(static_cast<size_t>(c));
  s.invstd.resize(static_cast<size_t>(c));
  s.weight.assign(static_cast<size_t>(c), 1.0);
  for (int64_t f = 0; f < c; ++f) {
    s.mean[f] = train ? sm->get(f) : rm->get(f);
    s.invstd[f] = train ? si->get(f) : 1.0 / std::sqrt(rv->get(f) + eps);
    if (w) s.weight[f] = w->get(f);
  }
  return s;
}

void store_batch_stats(const Tensor& save_mean, const Tensor& save_invstd,
                       const std::optional<Tensor>& rm, const std::optional<Tensor>& rv,
                       const std::vector<double>& mean, const std::vector<double>& invstd,
                       const std::vector<double>& var_sum, int64_t n, double momentum) {
  for (size_t f = 0; f < mean.size(); ++f) {
    const auto i = static_cast<int64_t>(f);
    save_mean.set(i, mean[f]);
    save_invstd.set(i, invstd[f]);
    if (rm) rm->set(i, momentum * mean[f] + (1 - momentum) * rm->get(i));
    if (rv) {
      const double unbiased = var_sum[f] / static_cast<double>(n - 1);
      rv->set(i, momentum * unbiased + (1 - momentum) * rv->get(i));
    }
  }
}

}  // namespace nnops

namespace {

using namespace samples;  // NOLINT(google-build-using-namespace)

using OptT = std::optional<Tensor>;

// The checks of the batch norm forward and its outputs (out, save_mean, save_invstd) as meta
// tensors.
Values bn_forward_meta(const Tensor& x, const OptT& w, const OptT& b, const OptT& rm,
                       const OptT& rv, bool training) {
  const DType pdt = nnops::check_batch_norm(x, w, b, rm, rv, training);
  const Shape stat_shape{training ? nnops::batch_layout(x).c : 0};
  return {meta::fresh(x.shape(), x.dtype()), meta::fresh(stat_shape, pdt),
          meta::fresh(stat_shape, pdt)};
}

// The batch norm forward into its outputs (out, save_mean, save_invstd); a training call's
// running stats (when given) are updated in place. The input is read once into f64 in logical
// order and walked as [N][C][inner] blocks, so each channel's terms are added in the order of
// the elements.
void bn_forward_into(const Tensor& x, const OptT& w, const OptT& b, const OptT& rm, const OptT& rv,
                     bool training, double momentum, double eps, const Values& outs) {
  const nnops::BatchLayout l = nnops::batch_layout(x);
  const auto c = static_cast<size_t>(l.c);
  std::vector<double> mean(c, 0.0), invstd(c, 0.0), var_sum(c, 0.0);
  opsutil::Doubles v = opsutil::read_doubles(x);
  // f(block): the channel of [N][C] block `block` (each of l.inner elements).
  const int64_t blocks = l.batch * l.c;
  auto channel = [&](int64_t block) { return static_cast<size_t>(block % l.c); };
  if (training) {
    for (int64_t k = 0; k < blocks; ++k) {
      const double* p = v.data() + k * l.inner;
      double& m = mean[channel(k)];
      for (int64_t j = 0; j < l.inner; ++j) m += p[j];
    }
    for (size_t f = 0; f < c; ++f) mean[f] /= static_cast<double>(l.n);
    for (int64_t k = 0; k < blocks; ++k) {
      const double* p = v.data() + k * l.inner;
      const double m = mean[channel(k)];
      double& q = var_sum[channel(k)];
      for (int64_t j = 0; j < l.inner; ++j) {
        const double d = p[j] - m;
        q += d * d;
      }
    }
    for (size_t f = 0; f < c; ++f) {
      const double var = var_sum[f] / static_cast<double>(l.n);
      invstd[f] = (var == 0 && eps == 0) ? 0.0 : 1.0 / std::sqrt(var + eps);
    }
  } else {
    for (size_t f = 0; f < c; ++f) {
      mean[f] = rm->get(static_cast<int64_t>(f));
      invstd[f] = 1.0 / std::sqrt(rv->get(static_cast<int64_t>(f)) + eps);
    }
  }
  for (int64_t k = 0; k < blocks; ++k) {
    double* p = v.data() + k * l.inner;
    const size_t f = channel(k);
    const double wf = w ? w->get(static_cast<int64_t>(f)) : 0.0;
    const double bf = b ? b->get(static_cast<int64_t>(f)) : 0.0;
    for (int64_t j = 0; j < l.inner; ++j) {
      double y = (p[j] - mean[f]) * invstd[f];
      if (w) y *= wf;
      if (b) y += bf;
      p[j] = y;
    }
  }
  opsutil::write_doubles(outs.at(0).tensor(), v.data());
  if (training)
    nnops::store_batch_stats(outs.at(1).tensor(), outs.at(2).tensor(), rm, rv, mean, invstd,
                             var_sum, l.n, momentum);
}

void native_batch_norm_impl(const Args& a, const Values& out) {
  bn_forward_into(a.tensor("input"), a.opt_tensor("weight"), a.opt_tensor("bias"),
                  a.opt_tensor("running_mean"), a.opt_tensor("running_var"), a.flag("training"),
                  a.real("momentum"), a.real("eps"), out);
}

Values native_batch_norm_meta(const Args& a) {
  return bn_forward_meta(a.tensor("input"), a.opt_tensor("weight"), a.opt_tensor("bias"),
                         a.opt_tensor("running_mean"), a.opt_tensor("running_var"),
                         a.flag("training"));
}

// The running stats of a training call are updated in place: not outputs, so nothing to add.
Values legit_no_stats_meta(const Args& a) {
  return bn_forward_meta(a.tensor("input"), a.opt_tensor("weight"), a.opt_tensor("bias"),
                         std::nullopt, std::nullopt, a.flag("training"));
}

Values legit_no_training_meta(const Args& a) {
  return bn_forward_meta(a.tensor("input"), a.opt_tensor("weight"), a.opt_tensor("bias"),
                         a.opt_tensor("running_mean"), a.opt_tensor("running_var"), false);
}

void legit_no_stats_impl(const Args& a, const Values& out) {
  bn_forward_into(a.tensor("input"), a.opt_tensor("weight"), a.opt_tensor("bias"), std::nullopt,
                  std::nullopt, a.flag("training"), a.real("momentum"), a.real("eps"), out);
}

void legit_no_training_impl(const Args& a, const Values& out) {
  bn_forward_into(a.tensor("input"), a.opt_tensor("weight"), a.opt_tensor("bias"),
                  a.opt_tensor("running_mean"), a.opt_tensor("running_var"), false,
                  a.real("momentum"), a.real("eps"), out);
}

// The checks of native_batch_norm_backward and its outputs (None where output_mask is false) as
// meta tensors.
Values bn_backward_meta(const Args& a) {
  const Tensor& x = a.tensor("input");
  const std::vector<bool> mask = a.value("output_mask").bool_list();
  const DType pdt = nnops::check_batch_norm_backward(a);
  const int64_t c = nnops::batch_layout(x).c;
  Values out(3);
  if (mask.at(0)) out[0] = meta::fresh(x.shape(), x.dtype());
  if (mask.at(1)) out[1] = meta::fresh({c}, pdt);
  if (mask.at(2)) out[2] = meta::fresh({c}, pdt);
  return out;
}

// The backward into the outputs output_mask asks for, the inputs read once into f64 (as the
// forward).
void bn_backward_impl(const Args& a, const Values& outs) {
  const Tensor& x = a.tensor("input");
  const bool train = a.flag("train");
  const nnops::BatchLayout l = nnops::batch_layout(x);
  const auto [mean, invstd, wt] = nnops::batch_norm_backward_stats(a, l.c);
  opsutil::Doubles g = opsutil::read_doubles(a.tensor("grad_out"));
  const opsutil::Doubles xv = opsutil::read_doubles(x);
  const int64_t blocks = l.batch * l.c;
  auto channel = [&](int64_t block) { return static_cast<size_t>(block % l.c); };
  std::vector<double> sum(static_cast<size_t>(l.c), 0.0), dotp(sum.size(), 0.0);
  for (int64_t k = 0; k < blocks; ++k) {
    const size_t f = channel(k);
    const double* gp = g.data() + k * l.inner;
    const double* xp = xv.data() + k * l.inner;
    double s = sum[f], d = dotp[f];
    for (int64_t j = 0; j < l.inner; ++j) {
      s += gp[j];
      d += (xp[j] - mean[f]) * gp[j];
    }
    sum[f] = s;
    dotp[f] = d;
  }
  if (outs.at(0).is_tensor()) {
    const double n = static_cast<double>(l.n);
    for (int64_t k = 0; k < blocks; ++k) {
      const size_t f = channel(k);
      double* gp = g.data() + k * l.inner;
      const double* xp = xv.data() + k * l.inner;
      const double kf = dotp[f] * invstd[f] * invstd[f] / n;
      for (int64_t j = 0; j < l.inner; ++j)
        gp[j] = train ? (gp[j] - sum[f] / n - (xp[j] - mean[f]) * kf) * invstd[f] * wt[f]
                      : gp[j] * invstd[f] * wt[f];
    }
    opsutil::write_doubles(outs[0].tensor(), g.data());
  }
  if (outs.at(1).is_tensor())
    for (int64_t f = 0; f < l.c; ++f) outs[1].tensor().set(f, dotp[f] * invstd[f]);
  if (outs.at(2).is_tensor())
    for (int64_t f = 0; f < l.c; ++f) outs[2].tensor().set(f, sum[f]);
}

// Per-channel sums over n = numel / C elements: sqrt(n) roundoffs (independent errors) in the
// candidate's accumulators carry into every output.
ComparePolicy channel_reduction_compare(int input_arg) {
  ComparePolicy c;
  // Inherently positional: a comparison policy sees the plain values, so the input is given by
  // its index in the schema.
  c.tol_scale = [input_arg](const Values& a) {
    if (static_cast<int>(a.size()) <= input_arg || !a[input_arg].is_tensor()) return 1.0;
    const Tensor& x = a[input_arg].tensor();
    if (x.dim() < 2 || x.size(1) == 0) return 1.0;
    return std::sqrt(static_cast<double>(std::max<int64_t>(x.numel() / x.size(1), 1)));
  };
  return c;
}

// Two passes for the statistics and one to normalise: about 8 operations per element; bytes:
// every tensor argument read, every output written (running stats read and written).
CostFn bn_cost(double flops_per_elem) {
  return [flops_per_elem](const Args& a, const Values& out) {
    Cost c;
    if (a.size() <= a.index("input") || !a.value("input").is_tensor()) return c;
    c.flops = flops_per_elem * static_cast<double>(a.tensor("input").numel());
    c.bytes = nnops::bytes_of_all(a) + nnops::bytes_of_all(out);
    return c;
  };
}

const DType kF32 = DType::Float32;

// Forward samples. `form`: 0 = native_batch_norm (running stats optional, training flag),
// 1 = _native_batch_norm_legit (running stats required, training flag), 2 = no_stats,
// 3 = _no_training (running stats required, no training flag).
std::vector<Sample> forward_samples(const SampleContext& ctx, int form) {
  std::vector<Sample> out;
  const Literal mom = F(0.1), eps = F(1e-5);
  const bool has_stats = form != 2, has_train = form != 3, stats_optional = form == 0;
  // Builds the call for input x, params w/b (Literal or None), stats dtype sd, training flag.
  auto call = [&](const std::string& label, const Literal& x, const Literal& w, const Literal& b,
                  const Literal& rm, const Literal& rv, bool training, Literal m = F(0.1),
                  Literal e = F(1e-5)) {
    std::vector<Literal> args{x, w, b};
    if (has_stats) {
      args.push_back(rm);
      args.push_back(rv);
    }
    if (has_train) args.push_back(B(training));
    args.push_back(m);
    args.push_back(e);
    out.push_back(make(label, args));
  };
  auto stats = [](int64_t c, DType t) { return T_fill({c}, t, "positive"); };
  const std::vector<bool> modes =
      has_train ? std::vector<bool>{true, false} : std::vector<bool>{false};
  if (ctx.performance) {
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16}) {
      for (bool tr : modes) {
        if (form == 2 && !tr) continue;
        const std::string m = tr ? " train " : " eval ";
        call("ResNet [32, 256, 56, 56]" + m + dtype_code_str(t), T({32, 256, 56, 56}, t),
             T({256}, t), T({256}, t), T({256}, t), stats(256, t), tr);
      }
    }
    call("mixed bf16 input, f32 params [32, 64, 112, 112]", T({32, 64, 112, 112}, DType::BFloat16),
         T({64}, kF32), T({64}, kF32), T({64}, kF32), stats(64, kF32), has_train);
    return out;
  }
  for (bool tr : modes) {
    if (form == 2 && !tr) continue;
    const std::string m = tr ? "train " : "eval ";
    for (DType t : samples::floating_dtypes()) {
      const std::string d = " " + dtype_code_str(t);
      call(m + "[4, 3, 5]" + d, T({4, 3, 5}, t), T({3}, t), T({3}, t), T({3}, t), stats(3, t), tr);
      call(m + "4-d [2, 3, 4, 5]" + d, T({2, 3, 4, 5}, t), T({3}, t), T({3}, t), T({3}, t),
           stats(3, t), tr);
      call(m + "special values" + d, T_fill({4, 3, 6}, t, "special"), T({3}, t), T({3}, t),
           T({3}, t), stats(3, t), tr);
    }
    for (DType t : {DType::Float16, DType::BFloat16}) {
      call(m + "mixed " + dtype_code_str(t) + " input, f32 params", T({4, 3, 5}, t), T({3}, kF32),
           T({3}, kF32), T({3}, kF32), stats(3, kF32), tr);
    }
    call(m + "2-d input [8, 5]", T({8, 5}, kF32), T({5}, kF32), T({5}, kF32), T({5}, kF32),
         stats(5, kF32), tr);
    call(m + "no weight or bias", T({4, 3, 5}, kF32), None(), None(), T({3}, kF32), stats(3, kF32),
         tr);
    call(m + "weight only", T({4, 3, 5}, kF32), T({3}, kF32), None(), T({3}, kF32), stats(3, kF32),
         tr);
    call(m + "5-d input", T({2, 3, 2, 3, 2}, DType::Float64), T({3}, DType::Float64),
         T({3}, DType::Float64), T({3}, DType::Float64), stats(3, DType::Float64), tr);
    call(m + "transposed input (channels last)", T({2, 3, 4, 5}, kF32, {60, 1, 15, 3}),
         T({3}, kF32), T({3}, kF32), T({3}, kF32), stats(3, kF32), tr);
    call(m + "expanded input (stride 0 batch)", T({4, 3, 5}, kF32, {0, 5, 1}), T({3}, kF32),
         T({3}, kF32), T({3}, kF32), stats(3, kF32), tr);
    call(m + "sliced weight", T({4, 3, 5}, kF32), T({3}, kF32, {2}), T({3}, kF32), T({3}, kF32),
         stats(3, kF32), tr);
    call(m + "momentum 0.5, eps 1e-3", T({4, 3, 5}, kF32), T({3}, kF32), T({3}, kF32), T({3}, kF32),
         stats(3, kF32), tr, F(0.5), F(1e-3));
    call(m + "eps 0", T({4, 3, 5}, DType::Float64), None(), None(), T({3}, DType::Float64),
         stats(3, DType::Float64), tr, mom, F(0.0));
    call(m + "one element per channel", T({1, 4}, kF32), None(), None(), T({4}, kF32),
         stats(4, kF32), tr);
    call("error: " + m + "integral input", T({4, 3}, DType::Int64), None(), None(),
         T({3}, DType::Int64), T({3}, DType::Int64), tr);
    call("error: " + m + "1-d input", T({6}, kF32), None(), None(), T({1}, kF32), stats(1, kF32),
         tr);
    call("error: " + m + "weight size", T({4, 3}, kF32), T({4}, kF32), None(), T({3}, kF32),
         stats(3, kF32), tr);
    call("error: " + m + "f32 input, f64 weight", T({4, 3}, kF32), T({3}, DType::Float64), None(),
         T({3}, kF32), stats(3, kF32), tr);
    call("error: " + m + "mixed bf16, f64 bias", T({4, 3}, DType::BFloat16), T({3}, kF32),
         T({3}, DType::Float64), T({3}, kF32), stats(3, kF32), tr);
    call("error: " + m + "mixed f64 input, f32 weight", T({4, 3}, DType::Float64), T({3}, kF32),
         None(), T({3}, DType::Float64), stats(3, DType::Float64), tr);
    if (has_stats) {
      call("error: " + m + "running_mean size", T({4, 3}, kF32), None(), None(), T({2}, kF32),
           stats(3, kF32), tr);
    }
  }
  if (has_train) {
    call("error: train on empty input", T({0, 3}, kF32), None(), None(), T({3}, kF32),
         stats(3, kF32), true);
    if (form != 2) {
      call("eval on empty input", T({0, 3}, kF32), T({3}, kF32), T({3}, kF32), T({3}, kF32),
           stats(3, kF32), false);
    }
  }
  if (stats_optional) {
    call("train without running stats", T({4, 3, 5}, kF32), T({3}, kF32), T({3}, kF32), None(),
         None(), true);
    call("train with running_mean only", T({4, 3, 5}, kF32), None(), None(), T({3}, kF32), None(),
         true);
    call("error: eval without running stats", T({4, 3, 5}, kF32), None(), None(), None(), None(),
         false);
  }
  if (form == 2) {
    call("error: eval mode without running stats", T({4, 3, 5}, kF32), None(), None(), None(),
         None(), false);
    call("train [16, 8] f32", T({16, 8}, kF32), None(), None(), None(), None(), true);
  }
  if (form == 3)
    call("eval on empty input", T({0, 3}, kF32), None(), None(), T({3}, kF32), stats(3, kF32),
         false);
  return out;
}

std::vector<Sample> backward_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  auto st = [](int64_t c, DType t) { return T_fill({c}, t, "positive"); };
  auto call = [&](const std::string& label, const Shape& shape, DType t, DType pt, bool train,
                  std::vector<bool> mask, bool weight = true, Literal x = None(),
                  Literal g = None()) {
    const int64_t c = shape.size() >= 2 ? shape[1] : 1;
    Literal xl = x.kind == cases::LitKind::None ? T(shape, t) : x;
    Literal gl = g.kind == cases::LitKind::None ? T(shape, t) : g;
    const Literal ml = nnops::bool_list(mask);
    out.push_back(make(label, {gl, xl, weight ? T({c}, pt) : None(), T({c}, pt), st(c, pt),
                               T({c}, pt), st(c, pt), B(train), F(1e-5), ml}));
  };
  const std::vector<bool> all{true, true, true};
  if (ctx.performance) {
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16})
      call("ResNet [32, 256, 56, 56] train " + dtype_code_str(t), {32, 256, 56, 56}, t, t, true,
           all);
    call("mixed bf16 [32, 64, 112, 112] train", {32, 64, 112, 112}, DType::BFloat16, kF32, true,
         all);
    return out;
  }
  for (bool train : {true, false}) {
    const std::string m = train ? "train " : "eval ";
    for (DType t : samples::floating_dtypes()) {
      call(m + "[4, 3, 5] " + dtype_code_str(t), {4, 3, 5}, t, t, train, all);
      call(m + "special values " + dtype_code_str(t), {4, 3, 6}, t, t, train, all, true,
           T_fill({4, 3, 6}, t, "special"), T_fill({4, 3, 6}, t, "special"));
    }
    for (DType t : {DType::Float16, DType::BFloat16}) {
      call(m + "mixed " + dtype_code_str(t) + ", f32 params", {4, 3, 5}, t, kF32, train, all);
      // As every real-model trace records it on CUDA: params of the input's dtype, saved
      // statistics f32 (ATen's CPU kernel raises; CUDA computes).
      const int64_t c = 3;
      out.push_back(make(m + dtype_code_str(t) + " params, f32 saved statistics (CUDA)",
                         {T({4, c, 5}, t), T({4, c, 5}, t), T({c}, t), T({c}, t), st(c, t),
                          T({c}, kF32), st(c, kF32), B(train), F(1e-5), nnops::bool_list(all)}));
    }
    call(m + "4-d", {2, 3, 4, 5}, kF32, kF32, train, all);
    call(m + "2-d", {8, 5}, DType::Float64, DType::Float64, train, all);
    call(m + "mask [True, False, False]", {4, 3, 5}, kF32, kF32, train, {true, false, false});
    call(m + "mask [False, True, True]", {4, 3, 5}, kF32, kF32, train, {false, true, true});
    call(m + "mask [False, False, True]", {4, 3, 5}, kF32, kF32, train, {false, false, true});
    call(m + "no weight", {4, 3, 5}, kF32, kF32, train, all, false);
    call(m + "transposed input and grad", {2, 3, 4, 5}, kF32, kF32, train, all, true,
         T({2, 3, 4, 5}, kF32, {60, 1, 15, 3}), T({2, 3, 4, 5}, kF32, {60, 1, 15, 3}));
    call(m + "expanded grad (stride 0)", {4, 3, 5}, kF32, kF32, train, all, true, None(),
         T({4, 3, 5}, kF32, {0, 5, 1}));
    call("error: " + m + "integral input", {4, 3}, DType::Int64, DType::Int64, train, all);
    call("error: " + m + "f32 input, f64 params", {4, 3}, kF32, DType::Float64, train, all);
    call("error: " + m + "grad dtype differs", {4, 3}, kF32, kF32, train, all, true, None(),
         T({4, 3}, DType::Float64));
    call("error: " + m + "grad shape differs", {4, 3}, kF32, kF32, train, all, true, None(),
         T({4, 2}, kF32));
  }
  return out;
}

}  // namespace

void register_batch_norm_ops(OpRegistry& r) {
  const std::vector<DType> dts = samples::floating_dtypes();
  {
    // Running stats annotated as mutated (see the note at the top).
    OpDef op = OpDef::from_schema(
        "aten::native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!)? "
        "running_mean, Tensor(b!)? running_var, bool training, float momentum, float eps) -> "
        "(Tensor, Tensor, Tensor)",
        "norm");
    op.dtypes = dts;
    op.meta = native_batch_norm_meta;
    op.ref = structured_ref(native_batch_norm_meta, native_batch_norm_impl);
    op.samples = [](const SampleContext& c) { return forward_samples(c, 0); };
    op.roles["running_var"] = ArgRole::positive();
    op.cost = bn_cost(8);
    op.compare = channel_reduction_compare(0);
    r.add(std::move(op));
  }
  {
    OpDef op = OpDef::from_schema(
        "aten::_native_batch_norm_legit(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!) "
        "running_mean, Tensor(b!) running_var, bool training, float momentum, float eps) -> "
        "(Tensor, Tensor, Tensor)",
        "norm");
    op.dtypes = dts;
    op.meta = native_batch_norm_meta;
    op.ref = structured_ref(native_batch_norm_meta, native_batch_norm_impl);
    op.samples = [](const SampleContext& c) { return forward_samples(c, 1); };
    op.roles["running_var"] = ArgRole::positive();
    op.cost = bn_cost(8);
    op.compare = channel_reduction_compare(0);
    r.add(std::move(op));
  }
  {
    OpDef op = OpDef::from_schema(
        "aten::_native_batch_norm_legit.no_stats(Tensor input, Tensor? weight, Tensor? bias, bool "
        "training, float momentum, float eps) -> (Tensor, Tensor, Tensor)",
        "norm");
    op.dtypes = dts;
    op.meta = legit_no_stats_meta;
    op.ref = structured_ref(legit_no_stats_meta, legit_no_stats_impl);
    op.samples = [](const SampleContext& c) { return forward_samples(c, 2); };
    op.cost = bn_cost(8);
    op.compare = channel_reduction_compare(0);
    r.add(std::move(op));
  }
  {
    OpDef op = OpDef::from_schema(
        "aten::_native_batch_norm_legit_no_training(Tensor input, Tensor? weight, Tensor? bias, "
        "Tensor running_mean, Tensor running_var, float momentum, float eps) -> (Tensor, Tensor, "
        "Tensor)",
        "norm");
    op.dtypes = dts;
    op.meta = legit_no_training_meta;
    op.ref = structured_ref(legit_no_training_meta, legit_no_training_impl);
    op.samples = [](const SampleContext& c) { return forward_samples(c, 3); };
    op.roles["running_var"] = ArgRole::positive();
    op.cost = bn_cost(4);
    op.compare = channel_reduction_compare(0);
    r.add(std::move(op));
  }
  {
    OpDef op = OpDef::from_schema(
        "aten::native_batch_norm_backward(Tensor grad_out, Tensor input, Tensor? weight, Tensor? "
        "running_mean, Tensor? running_var, Tensor? save_mean, Tensor? save_invstd, bool train, "
        "float eps, bool[3] output_mask) -> (Tensor, Tensor, Tensor)",
        "norm");
    op.dtypes = dts;
    op.meta = bn_backward_meta;
    op.ref = structured_ref(bn_backward_meta, bn_backward_impl);
    op.samples = backward_samples;
    op.roles["running_var"] = ArgRole::positive();
    op.roles["save_invstd"] = ArgRole::positive();
    op.cost = bn_cost(10);
    op.compare = channel_reduction_compare(1);
    r.add(std::move(op));
  }
}

}  // namespace crucible
