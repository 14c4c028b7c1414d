// Op family: loss -- mse_loss and mse_loss_backward.
//
// ATen's rules, checked against torch:
//  - mse_loss: (self - target)^2 over the broadcast shape (both cast to their promoted dtype),
//    materialised in that dtype (so an f16 element that overflows is inf before the mean), then
//    reduced: 0 none, 1 mean (0-d; NaN for an empty input), 2 sum (0-d; 0 for an empty input).
//    Floating only ("mse_cpu" not implemented for 'Long'); PyTorch 1.13 lacks bf16, 2.x has it.
//    Other reduction values raise (1.13: an internal assert).
//  - mse_loss_backward: norm * (self - target) * grad_output with norm = 2 / self.numel() for
//    mean and 2 otherwise, computed in self's dtype step by step as ATen's kernel does (norm
//    converted to the dtype first: integer dtypes truncate it, so a mean over 3+ elements gives
//    zeros); the three tensors must share one dtype ("Found dtype Double but expected Float");
//    every dtype but bool; the result has the broadcast shape of the three.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/ops/destination.h"
#include "ops/arithmetic_internal.h"
#include "ops/families.h"
#include "ops/meta_fn.h"
#include "ops/samples.h"
#include "ops/util.h"

namespace crucible {

namespace {

using namespace samples;  // NOLINT(google-build-using-namespace): the sample vocabulary

int64_t reduction_of(const Args& args) {
  return args.size() > args.index("reduction") && args.given("reduction")
             ? args.integer("reduction")
             : 1;
}

// The checked result of mse_loss: the loss's (unreduced) shape and dtype, and the reduction.
struct MseSpec {
  Shape shape;
  DType dtype;
  int64_t reduction;
};

MseSpec mse_spec(const Args& args) {
  const Tensor& a = args.tensor("self");
  const Tensor& b = args.tensor("target");
  const DType rt = arith::promoted({args.value("self"), args.value("target")});
  arith::require_modelled(rt, "mse_loss");
  if (!is_floating(rt)) not_implemented_for("mse_cpu", rt);
  const int64_t reduction = reduction_of(args);
  CRUCIBLE_CHECK(reduction >= 0 && reduction <= 2,
                 "reduction == Reduction::Mean || reduction == Reduction::Sum INTERNAL ASSERT "
                 "FAILED: invalid reduction " +
                     std::to_string(reduction));
  const Tensor ins[] = {a, b};
  return {arith::broadcast_all(ins), rt, reduction};
}

// mse_loss into its output (meta: mse_spec): the squared differences, then their sum or mean
// in the order of the elements.
void mse_impl(const Args& args, const Values& outs) {
  const auto [shape, rt, reduction] = mse_spec(args);
  const Tensor ins[] = {args.tensor("self"), args.tensor("target")};
  const Tensor& out = outs.at(0).tensor();
  const Tensor loss = reduction == 0 ? out : Tensor::empty(shape, rt);
  arith::map_float(
      ins, loss, [](const double* v) { return (v[0] - v[1]) * (v[0] - v[1]); }, rt);
  if (reduction == 0) return;
  double sum = 0;
  for (double v : opsutil::read_doubles(loss)) sum += v;
  const auto n = static_cast<double>(loss.numel());
  out.set(0, reduction == 1 ? sum / n : sum);
}

// mse_loss_backward's checks; the result's shape (the three broadcast), of self's dtype.
Shape mse_backward_shape(const Args& args) {
  const Tensor& grad = args.tensor("grad_output");
  const Tensor& self = args.tensor("self");
  const Tensor& target = args.tensor("target");
  const DType t = self.dtype();
  for (const Tensor* x : {&target, &grad})
    CRUCIBLE_CHECK(x->dtype() == t, "Found dtype " + scalar_type_name(x->dtype()) +
                                        " but expected " + scalar_type_name(t));
  arith::require_modelled(t, "mse_loss_backward");
  if (t == DType::Bool) not_implemented_for("mse_backward_cpu_out", DType::Bool);
  const Tensor ins[] = {self, target, grad};
  return arith::broadcast_all(ins);
}

// mse_loss_backward into its output (meta: mse_backward_shape).
void mse_backward_impl(const Args& args, const Values& outs) {
  const Tensor& grad = args.tensor("grad_output");
  const Tensor& self = args.tensor("self");
  const Tensor& target = args.tensor("target");
  const int64_t reduction = reduction_of(args);
  const DType t = self.dtype();
  const double norm =
      reduction == 1 ? 2.0 / static_cast<double>(self.numel()) : 2.0;  // inf for an empty self
  const Tensor ins[] = {self, target, grad};
  const Tensor& out = outs.at(0).tensor();
  if (is_floating(t)) {
    const double nt = arith::round_to(norm, t);
    arith::map_float(ins, out, [nt, t](const double* v) {
      const double d = arith::round_to(v[0] - v[1], t);
      return arith::round_to(nt * d, t) * v[2];
    });
  } else {
    const int64_t nt = std::isfinite(norm) ? static_cast<int64_t>(norm) : 0;
    arith::map_int(ins, t, out, [nt](const int64_t* v) {
      const auto d = static_cast<uint64_t>(v[0]) - static_cast<uint64_t>(v[1]);
      return static_cast<int64_t>(static_cast<uint64_t>(nt) * d * static_cast<uint64_t>(v[2]));
    });
  }
}

// ---- samples ----

std::vector<Sample> mse_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    for (DType t : arith::perf_dtypes()) {
      out.push_back(make("mean [4096, 4096] " + dtype_code_str(t),
                         {T({4096, 4096}, t), T({4096, 4096}, t), I(1)}));
      out.push_back(make("none [4194304] " + dtype_code_str(t),
                         {T({int64_t{1} << 22}, t), T({int64_t{1} << 22}, t), I(0)}));
    }
    return out;
  }
  for (DType t : floating_dtypes()) {
    const std::string d = " " + dtype_code_str(t);
    out.push_back(make("mean (default)" + d, {T({6, 7}, t), T({6, 7}, t)}));
    out.push_back(make("none" + d, {T({6, 7}, t), T({6, 7}, t), I(0)}));
    out.push_back(make("sum" + d, {T({6, 7}, t), T({6, 7}, t), I(2)}));
    out.push_back(make("special values, none" + d, {T_fill({64}, t, "special"), T({64}, t), I(0)}));
    out.push_back(make("special values, mean" + d, {T_fill({64}, t, "special"), T({64}, t), I(1)}));
  }
  const DType f = DType::Float32;
  out.push_back(
      make("reduction keyword mean", {T({6, 7}, f), T({6, 7}, f)}, {{"reduction", I(1)}}));
  out.push_back(make("longer mean", {T({3, 5, 40}, f), T({3, 5, 40}, f), I(1)}));
  out.push_back(make("0-d, none", {T({}, f), T({}, f), I(0)}));
  out.push_back(make("0-d, mean", {T({}, f), T({}, f), I(1)}));
  out.push_back(make("empty, mean (nan)", {T({0, 3}, f), T({0, 3}, f), I(1)}));
  out.push_back(make("empty, sum (0)", {T({0}, f), T({0}, f), I(2)}));
  out.push_back(make("broadcast target, none", {T({6, 7}, f), T({7}, f), I(0)}));
  out.push_back(make("broadcast self, mean", {T({7}, f), T({6, 7}, f), I(1)}));
  out.push_back(make("transposed", {T_transposed(6, 7, f), T({6, 7}, f), I(2)}));
  out.push_back(make("expanded", {T({5, 8}, f, {0, 1}), T({5, 8}, f), I(0)}));
  out.push_back(make("f32 with f64 -> f64", {T({6, 7}, f), T({6, 7}, DType::Float64), I(1)}));
  out.push_back(make("i64 with f32 -> f32", {T({6, 7}, DType::Int64), T({6, 7}, f), I(0)}));
  out.push_back(make("f16 with 0-d f32 -> f16", {T({6, 7}, DType::Float16), T({}, f), I(2)}));
  out.push_back(
      make("error: i64 inputs", {T({6, 7}, DType::Int64), T({6, 7}, DType::Int64), I(1)}));
  out.push_back(make("error: shapes that do not broadcast", {T({3}, f), T({4}, f), I(0)}));
  return out;
}

std::vector<Sample> mse_backward_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    for (DType t : arith::perf_dtypes()) {
      const Shape s = {4096, 4096};
      out.push_back(make("mean " + dtype_code_str(t), {T({}, t), T(s, t), T(s, t), I(1)}));
      out.push_back(make("none " + dtype_code_str(t), {T(s, t), T(s, t), T(s, t), I(0)}));
    }
    return out;
  }
  std::vector<DType> dtypes = all_numeric_dtypes();
  for (DType t : dtypes) {
    const std::string e = t == DType::Bool ? "error: bool, " : "";
    out.push_back(
        make(e + "mean " + dtype_code_str(t), {T({}, t), T({6, 7}, t), T({6, 7}, t), I(1)}));
    out.push_back(
        make(e + "sum " + dtype_code_str(t), {T({}, t), T({6, 7}, t), T({6, 7}, t), I(2)}));
    out.push_back(
        make(e + "none " + dtype_code_str(t), {T({6, 7}, t), T({6, 7}, t), T({6, 7}, t), I(0)}));
    if (is_floating(t))
      out.push_back(make("special values " + dtype_code_str(t),
                         {T({64}, t), T_fill({64}, t, "special"), T({64}, t), I(0)}));
  }
  const DType f = DType::Float32;
  out.push_back(make("i64 mean over 2 elements (norm 1)",
                     {T({}, DType::Int64), T({2}, DType::Int64), T({2}, DType::Int64), I(1)}));
  out.push_back(make("mean over 3 elements, f16", {T({}, DType::Float16), T({3}, DType::Float16),
                                                   T({3}, DType::Float16), I(1)}));
  out.push_back(make("broadcast target (result larger than self)",
                     {T({}, f), T({7}, f), T({6, 7}, f), I(1)}));
  out.push_back(make("broadcast grad_output", {T({6, 1}, f), T({6, 7}, f), T({6, 7}, f), I(0)}));
  out.push_back(
      make("transposed", {T_transposed(6, 7, f), T_transposed(6, 7, f), T({6, 7}, f), I(0)}));
  out.push_back(make("empty", {T({}, f), T({0, 3}, f), T({0, 3}, f), I(1)}));
  out.push_back(make("0-d", {T({}, f), T({}, f), T({}, f), I(1)}));
  out.push_back(make("error: f64 grad_output with f32",
                     {T({}, DType::Float64), T({6, 7}, f), T({6, 7}, f), I(1)}));
  out.push_back(make("error: f64 target with f32",
                     {T({}, f), T({6, 7}, f), T({6, 7}, DType::Float64), I(1)}));
  out.push_back(
      make("error: shapes that do not broadcast", {T({}, f), T({3}, f), T({4}, f), I(0)}));
  return out;
}

// sqrt of the number of summed elements for mean/sum (the order of a sum's rounding errors).
double mse_tol_scale(const Args& args) {
  if (reduction_of(args) == 0) return 1.0;
  const Tensor ins[] = {args.tensor("self"), args.tensor("target")};
  const Shape s = arith::broadcast_all(ins);
  return std::max(1.0, std::sqrt(static_cast<double>(numel_of(s))));
}

}  // namespace

void register_loss_ops(OpRegistry& r) {
  OpDef mse = OpDef::from_schema(
      "aten::mse_loss(Tensor self, Tensor target, int reduction=1) -> Tensor", "loss");
  mse.dtypes = floating_dtypes();
  mse.meta = [](const Args& args) {
    const MseSpec s = mse_spec(args);
    return Values{s.reduction == 0 ? meta::fresh(s.shape, s.dtype) : meta::fresh({}, s.dtype)};
  };
  mse.ref = structured_ref(mse.meta, mse_impl);
  mse.samples = mse_samples;
  mse.cost = [](const Args& args, const Values& outputs) {
    const Tensor ins[] = {args.tensor("self"), args.tensor("target")};
    const double n = static_cast<double>(numel_of(arith::broadcast_all(ins)));
    return Cost{3 * n, arith::real_bytes(ins[0]) + arith::real_bytes(ins[1]) +
                           arith::real_bytes(outputs.at(0).tensor())};
  };
  mse.compare.tol_scale = [schema = mse.schema](const Values& args) {
    return mse_tol_scale(Args(args, schema));
  };
  r.add(std::move(mse));

  OpDef bwd = OpDef::from_schema(
      "aten::mse_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction) -> "
      "Tensor",
      "loss");
  std::vector<DType> ts = all_numeric_dtypes();
  ts.erase(ts.begin());  // no bool
  bwd.dtypes = ts;
  bwd.meta = [](const Args& args) {
    return Values{meta::fresh(mse_backward_shape(args), args.tensor("self").dtype())};
  };
  bwd.ref = structured_ref(bwd.meta, mse_backward_impl);
  bwd.samples = mse_backward_samples;
  bwd.cost = arith::elementwise_cost(3);
  r.add(std::move(bwd));
}

}  // namespace crucible
