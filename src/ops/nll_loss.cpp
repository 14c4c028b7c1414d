// Negative log-likelihood loss: aten.nll_loss_forward.default, aten.nll_loss_backward.default,
// aten.nll_loss2d_forward.default, aten.nll_loss2d_backward.default.
//
// Reference semantics (PyTorch 2.x, CPU; LossNLL.cpp, LossNLL2d.cpp):
//  - nll_loss: self is [N, C] or [C] ("input tensor should be 1D or 2D"), target [N] or 0-d
//    ("0D or 1D target tensor expected, multi-target not supported"), sizes must agree ("size
//    mismatch (got input: [3, 4], target: [2])"), weight is None or [C] ("weight tensor should
//    be defined either for all C classes or no classes but got weight tensor of shape: [3]").
//  - nll_loss2d: self [N, C, H, W] ("only batches of spatial inputs supported (4D tensors)"),
//    target [N, H, W] ("only batches of spatial targets supported (3D tensors)").
//  - target is i64 (or u8); a target equal to ignore_index is skipped (even when out of range,
//    like the default -100); any other target outside [0, C) raises "Target 5 is out of
//    bounds.". The class dim is dim 1 (dim 0 for a 1-d self).
//  - reduction 0 (none): per-element -w[t] * x[t] (0 where ignored), total_weight = 0;
//    1 (mean): sum / total_weight, total_weight = sum of w[t] over kept elements (0/0 = NaN
//    when all are ignored or the batch is empty); 2 (sum): the sum. total_weight is 0-d.
//  - backward: grad_input = 0 except grad_input[target] = -w[t] * g, with g = grad_output
//    (none: per element, which must have the target's shape; else one element,
//    "Expected a single element grad_output tensor"), divided by total_weight for mean
//    (which must hold one element).
//  - dtypes: f32, f64, bf16 and (since 2.1; 1.13 rejects it) f16; weight must match self.
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/ops/destination.h"
#include "crucible/ops/rules/nll_loss.h"
#include "ops/families.h"
#include "ops/judges.h"
#include "ops/meta_fn.h"
#include "ops/samples.h"
#include "ops/statistics_internal.h"
#include "ops/util.h"

namespace crucible {
namespace {

using namespace samples;

bool supported(DType t) {
  return t == DType::Float16 || t == DType::BFloat16 || t == DType::Float32 || t == DType::Float64;
}

}  // namespace

namespace nll {

LossShape check_inputs(const Tensor& self, const Tensor& target, const Tensor& weight, bool two_d) {
  LossShape g;
  if (!two_d) {
    if (self.dim() < 1 || self.dim() > 2) op_error("input tensor should be 1D or 2D");
    if (target.dim() > 1) op_error("0D or 1D target tensor expected, multi-target not supported");
    const bool no_batch = self.dim() == 1 && target.dim() == 0;
    if (!no_batch && self.size(0) != target.size(0))
      op_error("size mismatch (got input: " + shape_str(self.shape()) +
               ", target: " + shape_str(target.shape()) + ")");
    g.c = self.size(-1);
    g.n = self.dim() == 2 ? self.size(0) : 1;
    if (self.dim() == 2) g.none_shape = {g.n};
  } else {
    if (self.dim() != 4)
      op_error(
          "only batches of spatial inputs supported (4D tensors), but got input of "
          "dimension: " +
          std::to_string(self.dim()));
    if (target.dim() != 3)
      op_error(
          "only batches of spatial targets supported (3D tensors) but got targets of "
          "dimension: " +
          std::to_string(target.dim()));
    if (self.size(0) != target.size(0) || self.size(2) != target.size(1) ||
        self.size(3) != target.size(2))
      op_error("size mismatch (got input: " + shape_str(self.shape()) +
               " , target: " + shape_str(target.shape()));
    g.c = self.size(1);
    g.h = self.size(2);
    g.w = self.size(3);
    g.n = self.size(0) * g.h * g.w;
    g.none_shape = target.shape();
  }
  if (weight.defined() && (weight.dim() != 1 || weight.numel() != g.c))
    op_error("weight tensor should be defined either for all " + std::to_string(g.c) +
             " classes or no classes but got weight tensor of shape: " + shape_str(weight.shape()));
  if (target.dtype() != DType::Int64 && target.dtype() != DType::UInt8)
    op_error("expected scalar type Long but found " + scalar_type_name(target.dtype()));
  if (!supported(self.dtype()))
    not_implemented_for(two_d ? "nll_loss2d_forward_out_frame" : "nll_loss_out_frame",
                        self.dtype());
  if (weight.defined() && weight.dtype() != self.dtype())
    op_error("expected scalar type " + scalar_type_name(self.dtype()) + " but found " +
             scalar_type_name(weight.dtype()));
  return g;
}

void check_backward(const Tensor& grad, const Tensor& self, const Tensor& total_weight,
                    int64_t reduction, const LossShape& g, bool two_d) {
  if (total_weight.numel() != 1)
    op_error("expected total_weight to be a  single element tensor, got: " +
             shape_str(total_weight.shape()) + " (" + std::to_string(total_weight.numel()) +
             " elements)");
  if (per_element(reduction, self, two_d)) {
    if (grad.shape() != g.none_shape)
      op_error(
          two_d ? "grad_output sizes don't match target sizes: " + shape_str(grad.shape())
                : "Expected a tensor of dimension 1 and tensor.size[0] == " + std::to_string(g.n) +
                      " but got: dimension " + std::to_string(grad.dim()) +
                      " and tensor.size[0] = " + std::to_string(grad.dim() > 0 ? grad.size(0) : 0));
  } else if (grad.numel() != 1) {
    op_error("Expected a single element grad_output tensor, but got: " + shape_str(grad.shape()));
  }
}

}  // namespace nll

namespace {

// The reference's view of a call: element e of class cls reads self at input(e, cls).
struct Geometry : nll::LossShape {
  explicit Geometry(const nll::LossShape& s) : nll::LossShape(s) {}
  int64_t input(int64_t e, int64_t cls) const {
    const int64_t spatial = h * w, b = e / spatial, sp = e % spatial;
    return (b * c + cls) * spatial + sp;
  }
};

Geometry check_inputs(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                      bool two_d) {
  return Geometry(nll::check_inputs(self, target, weight ? *weight : Tensor(), two_d));
}

// The class of element e, or -1 when ignored; raises on an out-of-range target.
int64_t class_of(const Tensor& target, int64_t e, int64_t c, int64_t ignore_index) {
  const int64_t t = target.get_int(e);
  if (t == ignore_index) return -1;
  if (t < 0 || t >= c) op_error("Target " + std::to_string(t) + " is out of bounds.");
  return t;
}

// nll_loss(2d)_forward(self, target, weight, reduction, ignore_index)'s argument checks.
Geometry check_forward(const Args& a, bool two_d) {
  const int64_t reduction = a.integer("reduction");
  const Geometry g =
      check_inputs(a.tensor("self"), a.tensor("target"), a.opt_tensor("weight"), two_d);
  if (reduction < 0 || reduction > 2)
    op_error(std::to_string(reduction) + " is not a valid value for reduction");
  return g;
}

Values forward_meta(const Args& a, bool two_d) {
  const Geometry g = check_forward(a, two_d);
  const DType t = a.tensor("self").dtype();
  if (a.integer("reduction") == 0) return {meta::fresh(g.none_shape, t), meta::fresh({}, t)};
  return {meta::fresh({}, t), meta::fresh({}, t)};
}

// The forward into (output, total_weight) (meta: forward_meta).
void forward_impl(const Args& a, const Values& out, bool two_d) {
  const Tensor& self = a.tensor("self");
  const Tensor& target = a.tensor("target");
  const std::optional<Tensor> weight = a.opt_tensor("weight");
  const int64_t reduction = a.integer("reduction");
  const int64_t ignore = a.integer("ignore_index");
  const Geometry g = check_forward(a, two_d);
  std::vector<double> loss(static_cast<size_t>(g.n), 0.0);
  double total = 0, sum = 0;
  for (int64_t e = 0; e < g.n; ++e) {
    const int64_t t = class_of(target, e, g.c, ignore);
    if (t < 0) continue;
    const double w = weight ? weight->get(t) : 1.0;
    loss[static_cast<size_t>(e)] = -self.get(g.input(e, t)) * w;
    sum += loss[static_cast<size_t>(e)];
    total += w;
  }
  if (reduction == 0) {  // total_weight stays 0
    opsutil::write_doubles(out.at(0).tensor(), loss.data());
    return;
  }
  out.at(0).tensor().set(0, reduction == 1 ? sum / total : sum);
  out.at(1).tensor().set(0, total);
}

// nll_loss(2d)_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight)
// argument checks.
Geometry check_backward(const Args& a, bool two_d) {
  const Tensor& self = a.tensor("self");
  const Geometry g = check_inputs(self, a.tensor("target"), a.opt_tensor("weight"), two_d);
  nll::check_backward(a.tensor("grad_output"), self, a.tensor("total_weight"),
                      a.integer("reduction"), g, two_d);
  return g;
}

// The backward into grad_input (zero-filled; meta: check_backward, fresh_like(self)).
void backward_impl(const Args& a, const Values& outs, bool two_d) {
  const Tensor& grad = a.tensor("grad_output");
  const Tensor& self = a.tensor("self");
  const Tensor& target = a.tensor("target");
  const std::optional<Tensor> weight = a.opt_tensor("weight");
  const int64_t reduction = a.integer("reduction");
  const int64_t ignore = a.integer("ignore_index");
  const Tensor& total_weight = a.tensor("total_weight");
  const Geometry g = check_backward(a, two_d);
  const bool per_element = nll::per_element(reduction, self, two_d);
  const Tensor& out = outs.at(0).tensor();
  const double tw = total_weight.get(0);
  for (int64_t e = 0; e < g.n; ++e) {
    const int64_t t = class_of(target, e, g.c, ignore);
    if (t < 0) continue;
    const double go = per_element ? grad.get(e) : grad.get(0);
    const double scale = reduction == 1 ? go / tw : go;
    out.set(g.input(e, t), -scale * (weight ? weight->get(t) : 1.0));
  }
}

// mean and sum fold n terms: sqrt(n) widening of the forward; the backward rounds twice in
// ATen's own arithmetic (g / total_weight, then * w), hence a factor 2.
ComparePolicy forward_compare(const Schema& schema) {
  ComparePolicy c;
  c.tol_scale = [schema](const Values& v) {
    const Args a(v, schema);
    if (a.size() < 2 || !a.value("target").is_tensor()) return 1.0;
    return std::sqrt(static_cast<double>(std::max<int64_t>(a.tensor("target").numel(), 1)));
  };
  return c;
}
ComparePolicy backward_compare() {
  ComparePolicy c;
  c.tol_scale = [](const Values&) { return 2.0; };
  return c;
}

Cost loss_cost(const Args& a, const Values& out) {
  Cost c;
  for (const Value& v : a.values())
    if (v.is_tensor() && v.tensor().defined())
      c.bytes +=
          static_cast<double>(v.tensor().numel()) * static_cast<double>(v.tensor().itemsize());
  for (const Value& v : out)
    if (v.is_tensor() && v.tensor().defined())
      c.bytes +=
          static_cast<double>(v.tensor().numel()) * static_cast<double>(v.tensor().itemsize());
  for (const Value& v : a.values())
    if (v.is_tensor() && v.tensor().dtype() == DType::Int64)
      c.flops += 2.0 * static_cast<double>(v.tensor().numel());
  return c;
}

// Forward cases. `self_shape(n, c)` and `target_shape(n)` give the geometry; forward args are
// (self, target, weight, reduction, ignore_index); backward ones prepend grad_output and append
// total_weight (a positive 0-d tensor).
std::vector<Sample> loss_samples(const SampleContext& ctx, bool two_d, bool backward) {
  std::vector<Sample> out;
  const DType f32 = DType::Float32, i64 = DType::Int64;
  auto self_of = [&](int64_t n, int64_t c, DType t) {
    return two_d ? T({n, c, 3, 2}, t) : T({n, c}, t);
  };
  auto target_of = [&](int64_t n) { return two_d ? T({n, 3, 2}, i64) : T({n}, i64); };
  auto grad_of = [&](int64_t n, int64_t reduction, DType t) {
    if (reduction != 0) return T({}, t);
    return two_d ? T({n, 3, 2}, t) : T({n}, t);
  };
  auto call = [&](std::string label, Literal self, Literal target, Literal weight, int64_t red,
                  int64_t ignore, int64_t n, DType t) {
    std::vector<Literal> args{std::move(self), std::move(target), std::move(weight), I(red),
                              I(ignore)};
    if (backward) {
      args.insert(args.begin(), grad_of(n, red, t));
      args.push_back(T_fill({}, t, "positive"));
    }
    out.push_back(make(std::move(label), std::move(args)));
  };
  if (ctx.performance) {
    for (DType t : {f32, DType::BFloat16}) {
      if (two_d)
        call("segmentation [8, 21, 128, 128] mean " + dtype_code_str(t), T({8, 21, 128, 128}, t),
             T({8, 128, 128}, i64), None(), 1, -100, 8, t);
      else
        call("vocabulary [1024, 32000] mean " + dtype_code_str(t), T({1024, 32000}, t),
             T({1024}, i64), None(), 1, -100, 1024, t);
    }
    return out;
  }
  for (DType t : floating_dtypes()) {
    for (int64_t red : {0, 1, 2}) {
      const std::string r = red == 0 ? "none" : red == 1 ? "mean" : "sum";
      call(r + " " + dtype_code_str(t), self_of(5, 7, t), target_of(5), None(), red, -100, 5, t);
      call(r + " with weight " + dtype_code_str(t), self_of(6, 4, t), target_of(6),
           T_fill({4}, t, "positive"), red, -100, 6, t);
    }
    call("special values " + dtype_code_str(t),
         T_fill(two_d ? Shape{4, 5, 3, 2} : Shape{4, 5}, t, "special"), target_of(4), None(), 2,
         -100, 4, t);
  }
  for (int64_t red : {0, 1, 2}) {
    const std::string r = red == 0 ? "none" : red == 1 ? "mean" : "sum";
    call("ignore_index 1 (in range), " + r, self_of(12, 3, f32), target_of(12),
         T_fill({3}, f32, "positive"), red, 1, 12, f32);
    call("empty batch, " + r, self_of(0, 4, f32), target_of(0), None(), red, -100, 0, f32);
  }
  call("ignore_index 0 with two classes", self_of(10, 2, f32), target_of(10), None(), 1, 0, 10,
       f32);
  call("negative ignore_index -1", self_of(5, 4, f32), target_of(5), None(), 1, -1, 5, f32);
  call("signed weight", self_of(6, 4, f32), target_of(6), T({4}, f32), 1, -100, 6, f32);
  call("one class", self_of(4, 1, f32), target_of(4), None(), 1, -100, 4, f32);
  call("transposed self", two_d ? T({4, 3, 3, 2}, f32, {1, 4, 24, 12}) : T_transposed(4, 3, f32),
       target_of(two_d ? 4 : 4), None(), 1, -100, 4, f32);
  call("sliced target", self_of(4, 5, f32),
       two_d ? T({4, 3, 2}, i64, {12, 4, 2}) : T({4}, i64, {2}), None(), 2, -100, 4, f32);
  call("u8 target", self_of(5, 4, f32), two_d ? T({5, 3, 2}, DType::UInt8) : T({5}, DType::UInt8),
       None(), 1, -100, 5, f32);
  if (!two_d) {
    call("1-d self, 0-d target, none", T({6}, f32), T({}, i64), None(), 0, -100, 1, f32);
    call("1-d self, 0-d target, mean", T({6}, DType::Float64), T({}, i64), None(), 1, -100, 1,
         DType::Float64);
    call("error: 3-d self", T({2, 3, 4}, f32), T({2}, i64), None(), 1, -100, 2, f32);
    call("error: 2-d target", T({3, 4}, f32), T({3, 1}, i64), None(), 0, -100, 3, f32);
  } else {
    call("error: 3-d self", T({3, 2, 2}, f32), T({3, 2, 2}, i64), None(), 1, -100, 3, f32);
    call("error: 2-d target", T({2, 3, 2, 2}, f32), T({2, 2}, i64), None(), 1, -100, 2, f32);
  }
  call("error: batch sizes differ", self_of(4, 3, f32), target_of(3), None(), 1, -100, 4, f32);
  call("error: weight of the wrong size", self_of(4, 3, f32), target_of(4), T({4}, f32), 1, -100, 4,
       f32);
  call("error: target out of range", self_of(6, 3, f32),
       two_d ? T_fill({6, 3, 2}, i64, "oob") : T_fill({6}, i64, "oob"), None(), 1, -100, 6, f32);
  call("error: i32 target", self_of(4, 3, f32),
       two_d ? T({4, 3, 2}, DType::Int32) : T({4}, DType::Int32), None(), 1, -100, 4, f32);
  call("error: integral self", self_of(4, 3, i64), target_of(4), None(), 1, -100, 4, f32);
  call("error: weight dtype differs", self_of(4, 3, f32), target_of(4), T({3}, DType::Float64), 1,
       -100, 4, f32);
  if (backward) {
    // grad_output of the wrong shape, total_weight of the wrong size.
    std::vector<Literal> bad{T({2}, f32), self_of(4, 3, f32), target_of(4), None(), I(1),
                             I(-100),     T({}, f32)};
    out.push_back(make("error: grad_output not a single element for mean", bad));
    std::vector<Literal> bad2{two_d ? T({4, 3, 1}, f32) : T({3}, f32),
                              self_of(4, 3, f32),
                              target_of(4),
                              None(),
                              I(0),
                              I(-100),
                              T({}, f32)};
    out.push_back(make("error: grad_output shape differs for none", bad2));
    std::vector<Literal> bad3{T({}, f32), self_of(4, 3, f32), target_of(4), None(), I(1),
                              I(-100),    T({2}, f32)};
    out.push_back(make("error: total_weight of two elements", bad3));
  }
  return out;
}

}  // namespace

void register_nll_loss_ops(OpRegistry& r) {
  for (bool two_d : {false, true}) {
    const std::string n = two_d ? "nll_loss2d" : "nll_loss";
    {
      OpDef op = OpDef::from_schema(
          "aten::" + n +
              "_forward(Tensor self, Tensor target, Tensor? weight, int reduction, SymInt "
              "ignore_index) -> (Tensor output, Tensor total_weight)",
          "loss");
      op.dtypes = floating_dtypes();
      op.meta = [two_d](const Args& a) { return forward_meta(a, two_d); };
      op.ref = structured_ref(
          op.meta, [two_d](const Args& a, const Values& out) { forward_impl(a, out, two_d); });
      op.value_checks = true;  // "Target 5 is out of bounds."
      op.samples = [two_d](const SampleContext& ctx) { return loss_samples(ctx, two_d, false); };
      op.roles["target"] = ArgRole::index_into("self", two_d ? 1 : -1);
      op.cost = loss_cost;
      op.compare = forward_compare(op.schema);
      if (two_d) {
        // ATen's CUDA kernel adds the blocks' partial sums with atomics, in an order that
        // changes between runs (with overflowing partial sums: inf or NaN): judged by the
        // worst case of any order over the n terms (judges.h).
        op.compare.tol_scale = [schema = op.schema](const Values& v) {
          const Args a(v, schema);
          if (a.size() < 2 || !a.value("target").is_tensor()) return 1.0;
          return static_cast<double>(std::max<int64_t>(a.tensor("target").numel(), 1));
        };
        // With reduction 'none' ATen's CUDA kernel never writes total_weight (the CPU's is 0).
        op.compare.unspecified_where = [schema = op.schema](const Values& v, size_t index) {
          return index == 1 && Args(v, schema).integer("reduction") == 0;
        };
        op.compare = judges::unordered_accumulation_policy(op.compare, op.ref, op.schema);
      }
      r.add(std::move(op));
    }
    {
      OpDef op = OpDef::from_schema(
          "aten::" + n +
              "_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight, int "
              "reduction, SymInt ignore_index, Tensor total_weight) -> Tensor",
          "loss");
      op.dtypes = floating_dtypes();
      op.meta = [two_d](const Args& a) {
        check_backward(a, two_d);
        return Values{meta::fresh_like(a.tensor("self"))};
      };
      op.ref = structured_ref(
          op.meta, [two_d](const Args& a, const Values& out) { backward_impl(a, out, two_d); });
      op.value_checks = true;  // "Target 5 is out of bounds."
      op.samples = [two_d](const SampleContext& ctx) { return loss_samples(ctx, two_d, true); };
      op.roles["target"] = ArgRole::index_into("self", two_d ? 1 : -1);
      op.cost = loss_cost;
      op.compare = backward_compare();
      r.add(std::move(op));
    }
  }
}

}  // namespace crucible
