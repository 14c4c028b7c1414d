// aten._native_batch_norm_legit_functional.default: _native_batch_norm_legit with the running
// statistics returned instead of updated in place (what functionalised training graphs call).
//
// Reference semantics (PyTorch 2.x; the functional variant generated from
// _native_batch_norm_legit): (out, save_mean, save_rstd) are _native_batch_norm_legit's on a
// copy of running_mean / running_var, and running_mean_out / running_var_out are those copies
// afterwards: in training mode momentum * batch statistic + (1 - momentum) * running (the
// unbiased variance for running_var), in evaluation mode the running statistics unchanged. The
// inputs are not mutated. The copies keep the layout of the arguments (clone). Dtypes, checks
// and errors are _native_batch_norm_legit's (ops/batch_norm.cpp).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "crucible/core/error.h"
#include "ops/creation_internal.h"
#include "ops/families.h"
#include "ops/meta_fn.h"
#include "ops/norm_internal.h"
#include "ops/samples.h"

namespace crucible {
namespace {

using namespace samples;  // NOLINT(google-build-using-namespace)

const DType kF32 = DType::Float32;

// The legit op's arguments (`legit` its schema) with the running statistics replaced by `rm` /
// `rv`.
Values with_stats(const Values& a, const Schema& legit, const Value& rm, const Value& rv) {
  Values b = a;
  const Args named(b, legit);
  b.at(named.index("running_mean")) = rm;
  b.at(named.index("running_var")) = rv;
  return b;
}

Value stat_meta(const Tensor& t) {
  return meta::fresh_strided(t.shape(), creation::like_strides(t, MemoryFormat::Preserve),
                             t.dtype());
}

Tensor stat_copy(const Tensor& t) {
  Tensor c = Tensor::empty_strided(t.shape(), creation::like_strides(t, MemoryFormat::Preserve),
                                   t.dtype());
  c.copy_from(t);
  return c;
}

std::vector<Sample> functional_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  auto call = [&](const std::string& label, const Literal& x, const Literal& w, const Literal& b,
                  const Literal& rm, const Literal& rv, bool training, double momentum = 0.1,
                  double eps = 1e-5) {
    out.push_back(make(label, {x, w, b, rm, rv, B(training), F(momentum), F(eps)}));
  };
  auto stats = [](int64_t c, DType t) { return T_fill({c}, t, "positive"); };
  if (ctx.performance) {
    for (DType t : {kF32, DType::BFloat16})
      call("ResNet [32, 256, 56, 56] train " + dtype_code_str(t), T({32, 256, 56, 56}, t),
           T({256}, t), T({256}, t), T({256}, t), stats(256, t), true);
    return out;
  }
  for (bool tr : {true, false}) {
    const std::string m = tr ? "train " : "eval ";
    for (DType t : floating_dtypes()) {
      const std::string d = " " + dtype_code_str(t);
      call(m + "[4, 3, 5]" + d, T({4, 3, 5}, t), T({3}, t), T({3}, t), T({3}, t), stats(3, t), tr);
      call(m + "4-d [2, 3, 4, 5]" + d, T({2, 3, 4, 5}, t), T({3}, t), T({3}, t), T({3}, t),
           stats(3, t), tr);
    }
    for (DType t : {DType::Float16, DType::BFloat16}) {
      call(m + "mixed " + dtype_code_str(t) + " input, f32 params", T({4, 3, 5}, t), T({3}, kF32),
           T({3}, kF32), T({3}, kF32), stats(3, kF32), tr);
    }
    call(m + "no weight or bias", T({4, 3, 5}, kF32), None(), None(), T({3}, kF32), stats(3, kF32),
         tr);
    call(m + "channels-last input", T({2, 3, 4, 5}, kF32, {60, 1, 15, 3}), T({3}, kF32),
         T({3}, kF32), T({3}, kF32), stats(3, kF32), tr);
    call(m + "sliced running_mean (stride 2)", T({4, 3, 5}, kF32), T({3}, kF32), T({3}, kF32),
         T({3}, kF32, {2}), stats(3, kF32), tr);
    call(m + "momentum 0.5, eps 1e-3", T({4, 3, 5}, DType::Float64), T({3}, DType::Float64),
         T({3}, DType::Float64), T({3}, DType::Float64), stats(3, DType::Float64), tr, 0.5, 1e-3);
    call("error: " + m + "integral input", T({4, 3}, DType::Int64), None(), None(),
         T({3}, DType::Int64), T({3}, DType::Int64), tr);
    call("error: " + m + "1-d input", T({6}, kF32), None(), None(), T({1}, kF32), stats(1, kF32),
         tr);
    call("error: " + m + "running_mean size", T({4, 3}, kF32), None(), None(), T({2}, kF32),
         stats(3, kF32), tr);
    call("error: " + m + "f32 input, f64 weight", T({4, 3}, kF32), T({3}, DType::Float64), None(),
         T({3}, kF32), stats(3, kF32), tr);
  }
  call("train, one element per channel (running_var / 0)", T({1, 4}, kF32), None(), None(),
       T({4}, kF32), stats(4, kF32), true);
  call("error: train on empty input", T({0, 3}, kF32), None(), None(), T({3}, kF32), stats(3, kF32),
       true);
  call("eval on empty input", T({0, 3}, kF32), T({3}, kF32), T({3}, kF32), T({3}, kF32),
       stats(3, kF32), false);
  return out;
}

}  // namespace

void register_bn_functional_ops(OpRegistry& r) {
  const OpDef* legit = r.find("aten._native_batch_norm_legit.default");
  if (!legit) internal_error("_native_batch_norm_legit_functional needs _native_batch_norm_legit");
  OpDef op = OpDef::from_schema(
      "aten::_native_batch_norm_legit_functional(Tensor input, Tensor? weight, Tensor? bias, "
      "Tensor running_mean, Tensor running_var, bool training, float momentum, float eps) -> "
      "(Tensor, Tensor, Tensor, Tensor running_mean_out, Tensor running_var_out)",
      "norm");
  op.dtypes = legit->dtypes;
  op.meta = [legit](const Args& a) {
    Values out = legit->run_meta(a);
    out.push_back(stat_meta(a.tensor("running_mean")));
    out.push_back(stat_meta(a.tensor("running_var")));
    return out;
  };
  op.ref = [legit](const Args& a) {
    legit->run_meta(a);  // ATen's errors before anything is copied
    const Tensor rm = stat_copy(a.tensor("running_mean")), rv = stat_copy(a.tensor("running_var"));
    Values out = legit->run_ref(with_stats(a, legit->schema, rm, rv));
    out.push_back(rm);
    out.push_back(rv);
    return out;
  };
  op.samples = functional_samples;
  op.roles["running_var"] = ArgRole::positive();
  op.cost = legit->cost;
  ComparePolicy c;
  // Per-channel sums over numel / C elements. Inherently positional: a comparison policy sees the
  // plain values; the input is the first.
  c.tol_scale = [](const Values& a) {
    if (a.empty() || !a[0].is_tensor()) return 1.0;
    const Tensor& x = a[0].tensor();
    if (x.dim() < 2 || x.size(1) == 0) return 1.0;
    return std::sqrt(static_cast<double>(std::max<int64_t>(x.numel() / x.size(1), 1)));
  };
  op.compare = c;
  r.add(std::move(op));
}

}  // namespace crucible
