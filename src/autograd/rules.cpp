// The derivative rules, one per op, as PyTorch's derivatives.yaml writes them.
#include <cmath>
#include <limits>

#include "autograd/rule.h"
#include "crucible/core/error.h"
#include "crucible/nn/functional.h"

namespace crucible::autograd::detail {

namespace {

namespace F = nn::F;
using nn::Arg;
using nn::Var;

// Products: mm and addmm.
Grads mm_grads(RuleContext& c, const Var& a, const Var& b) {
  Grads out;
  if (c.needs(a))
    out.emplace_back(a.name, F::mm(c.t, c.grad, c.t.call1("aten.t.default", {b}, {}, "t")));
  if (c.needs(b))
    out.emplace_back(b.name, F::mm(c.t, c.t.call1("aten.t.default", {a}, {}, "t"), c.grad));
  return out;
}

void require_unit(RuleContext& c, const std::string& name) {
  if (c.number(name, 1.0) != 1.0)
    usage_error("autograd: " + c.node.op + " with " + name + " other than 1 has no rule here");
}

Grads unary(RuleContext& c, const Var& gx) {
  const Var x = c.tensor("self");
  if (!c.needs(x)) return {};
  return {{x.name, gx}};
}

std::vector<int64_t> reduced_dims(RuleContext& c, const Var& x) {
  std::vector<int64_t> dims = c.ints("dim", {});
  if (dims.empty())
    for (int64_t i = 0; i < x.dim(); ++i) dims.push_back(i);
  for (int64_t& d : dims)
    if (d < 0) d += x.dim();
  return dims;
}

// The gradient of a reduction over `dims` broadcast back to x's shape.
Var unreduce(RuleContext& c, const Var& x, const std::vector<int64_t>& dims, bool keepdim) {
  Var g = c.grad;
  if (!keepdim) {
    Shape kept = x.shape();
    for (int64_t d : dims) kept[d] = 1;
    g = F::view(c.t, g, kept);
  }
  return F::expand(c.t, g, x.shape());
}

Grads batch_norm_grads(RuleContext& c, bool training) {
  const Var x = c.tensor("input"), w = c.tensor("weight"), b = c.tensor("bias");
  const Var rm = c.tensor("running_mean"), rv = c.tensor("running_var");
  if (!training && (!rm.defined() || !rv.defined()))
    usage_error("autograd: " + c.node.op + " in eval mode needs running statistics");
  if (!training && (c.needs(rm) || c.needs(rv)))
    usage_error("autograd: " + c.node.op +
                " in eval mode has no rule for gradients of the running statistics");
  const std::vector<Var> g =
      c.t.call("aten.native_batch_norm_backward.default",
               {c.grad, x, w, rm, rv, c.outputs[1], c.outputs[2], training, c.arg("eps", Arg(1e-5)),
                std::vector<bool>{c.needs(x), c.needs(w), c.needs(b)}},
               {}, "batch_norm_grad");
  Grads out;
  if (c.needs(x)) out.emplace_back(x.name, g[0]);
  if (c.needs(w)) out.emplace_back(w.name, g[1]);
  if (c.needs(b)) out.emplace_back(b.name, g[2]);
  return out;
}

std::map<std::string, Rule> make_rules() {
  std::map<std::string, Rule> r;
  r["aten.mm.default"] = [](RuleContext& c) {
    return mm_grads(c, c.tensor("self"), c.tensor("mat2"));
  };
  r["aten.addmm.default"] = [](RuleContext& c) {
    require_unit(c, "beta");
    require_unit(c, "alpha");
    Grads out = mm_grads(c, c.tensor("mat1"), c.tensor("mat2"));
    const Var bias = c.tensor("self");
    if (c.needs(bias)) out.emplace_back(bias.name, sum_to(c.t, c.grad, bias.shape()));
    return out;
  };
  r["aten.bmm.default"] = [](RuleContext& c) {
    const Var a = c.tensor("self"), b = c.tensor("mat2");
    Grads out;
    if (c.needs(a))
      out.emplace_back(a.name, c.t.call1("aten.bmm.default", {c.grad, F::transpose(c.t, b, 1, 2)}));
    if (c.needs(b))
      out.emplace_back(b.name, c.t.call1("aten.bmm.default", {F::transpose(c.t, a, 1, 2), c.grad}));
    return out;
  };
  r["aten.t.default"] = [](RuleContext& c) {
    return unary(c, c.t.call1("aten.t.default", {c.grad}, {}, "t"));
  };
  r["aten.view.default"] = [](RuleContext& c) {
    return unary(c, F::view(c.t, c.grad, c.tensor("self").shape()));
  };
  r["aten.permute.default"] = [](RuleContext& c) {
    const std::vector<int64_t> dims = c.ints("dims", {});
    std::vector<int64_t> inverse(dims.size());
    for (size_t i = 0; i < dims.size(); ++i) {
      const int64_t d = dims[i] < 0 ? dims[i] + static_cast<int64_t>(dims.size()) : dims[i];
      inverse[d] = static_cast<int64_t>(i);
    }
    return unary(c, F::permute(c.t, c.grad, inverse));
  };
  r["aten.transpose.int"] = [](RuleContext& c) {
    return unary(c, F::transpose(c.t, c.grad, c.integer("dim0", 0), c.integer("dim1", 1)));
  };
  r["aten.expand.default"] = [](RuleContext& c) {
    return unary(c, sum_to(c.t, c.grad, c.tensor("self").shape()));
  };
  r["aten.clone.default"] = [](RuleContext& c) { return unary(c, c.grad); };
  r["aten.slice.Tensor"] = [](RuleContext& c) {
    const Var x = c.tensor("self");
    const int64_t big = std::numeric_limits<int64_t>::max();
    return unary(c, c.t.call1("aten.slice_backward.default",
                              {c.grad, x.shape(), c.integer("dim", 0), c.integer("start", 0),
                               c.integer("end", big), c.integer("step", 1)}));
  };
  r["aten.select.int"] = [](RuleContext& c) {
    const Var x = c.tensor("self");
    return unary(c, c.t.call1("aten.select_backward.default",
                              {c.grad, x.shape(), c.integer("dim", 0), c.integer("index", 0)}));
  };
  r["aten.cat.default"] = [](RuleContext& c) {
    const cases::Literal* list = c.literal("tensors");
    int64_t dim = c.integer("dim", 0);
    if (dim < 0) dim += c.grad.dim();
    Grads out;
    int64_t offset = 0;
    for (const cases::Literal& item : list->items) {
      const std::string name = item.text.substr(1);
      const Var x{name, c.t.graph().value(name).spec};
      const int64_t n = x.size(dim);
      if (c.needs(x)) out.emplace_back(name, F::slice(c.t, c.grad, dim, offset, offset + n));
      offset += n;
    }
    return out;
  };
  r["aten.add.Tensor"] = [](RuleContext& c) {
    require_unit(c, "alpha");
    const Var a = c.tensor("self"), b = c.tensor("other");
    Grads out;
    if (c.needs(a)) out.emplace_back(a.name, sum_to(c.t, c.grad, a.shape()));
    if (c.needs(b)) out.emplace_back(b.name, sum_to(c.t, c.grad, b.shape()));
    return out;
  };
  r["aten.sub.Tensor"] = [](RuleContext& c) {
    require_unit(c, "alpha");
    const Var a = c.tensor("self"), b = c.tensor("other");
    Grads out;
    if (c.needs(a)) out.emplace_back(a.name, sum_to(c.t, c.grad, a.shape()));
    if (c.needs(b)) out.emplace_back(b.name, sum_to(c.t, F::neg(c.t, c.grad), b.shape()));
    return out;
  };
  r["aten.mul.Tensor"] = [](RuleContext& c) {
    const Var a = c.tensor("self"), b = c.tensor("other");
    Grads out;
    if (c.needs(a)) out.emplace_back(a.name, sum_to(c.t, F::mul(c.t, c.grad, b), a.shape()));
    if (c.needs(b)) out.emplace_back(b.name, sum_to(c.t, F::mul(c.t, c.grad, a), b.shape()));
    return out;
  };
  r["aten.mul.Scalar"] = [](RuleContext& c) {
    return unary(c, c.t.call1("aten.mul.Scalar", {c.grad, c.arg("other", 1.0)}));
  };
  r["aten.add.Scalar"] = [](RuleContext& c) { return unary(c, c.grad); };
  r["aten.neg.default"] = [](RuleContext& c) { return unary(c, F::neg(c.t, c.grad)); };
  r["aten.relu.default"] = [](RuleContext& c) {
    return unary(c, c.t.call1("aten.threshold_backward.default", {c.grad, c.outputs[0], 0}));
  };
  r["aten.gelu.default"] = [](RuleContext& c) {
    return unary(c, c.t.call1("aten.gelu_backward.default", {c.grad, c.tensor("self")},
                              {{"approximate", c.arg("approximate", Arg("none"))}}));
  };
  r["aten.silu.default"] = [](RuleContext& c) {
    return unary(c, c.t.call1("aten.silu_backward.default", {c.grad, c.tensor("self")}));
  };
  r["aten.tanh.default"] = [](RuleContext& c) {
    return unary(c, c.t.call1("aten.tanh_backward.default", {c.grad, c.outputs[0]}));
  };
  r["aten.hardtanh.default"] = [](RuleContext& c) {
    return unary(c, c.t.call1("aten.hardtanh_backward.default",
                              {c.grad, c.tensor("self"), c.arg("min_val", Arg(-1.0)),
                               c.arg("max_val", Arg(1.0))}));
  };
  r["aten.rsqrt.default"] = [](RuleContext& c) {
    // -0.5 * grad * result^3
    const Var cube = c.t.call1("aten.pow.Tensor_Scalar", {c.outputs[0], 3});
    return unary(c, F::mul(c.t, F::mul(c.t, c.grad, cube), -0.5));
  };
  r["aten.pow.Tensor_Scalar"] = [](RuleContext& c) {
    // grad * exponent * self^(exponent - 1)
    const double e = c.number("exponent", 1.0);
    const Var x = c.tensor("self");
    Var d;
    if (e == 2.0) {
      d = F::mul(c.t, x, 2.0);
    } else {
      const Var p = e == std::floor(e)
                        ? c.t.call1("aten.pow.Tensor_Scalar", {x, static_cast<int64_t>(e) - 1})
                        : c.t.call1("aten.pow.Tensor_Scalar", {x, e - 1});
      d = F::mul(c.t, p, e);
    }
    return unary(c, F::mul(c.t, c.grad, d));
  };
  r["aten.mean.dim"] = [](RuleContext& c) {
    const Var x = c.tensor("self");
    const std::vector<int64_t> dims = reduced_dims(c, x);
    int64_t n = 1;
    for (int64_t d : dims) n *= x.size(d);
    const Var g = unreduce(c, x, dims, c.integer("keepdim", 0) != 0);
    return unary(c, c.t.call1("aten.div.Scalar", {g, n}));
  };
  r["aten.sum.dim_IntList"] = [](RuleContext& c) {
    const Var x = c.tensor("self");
    return unary(c, unreduce(c, x, reduced_dims(c, x), c.integer("keepdim", 0) != 0));
  };
  r["aten.sum.default"] = [](RuleContext& c) {
    return unary(c, F::expand(c.t, c.grad, c.tensor("self").shape()));
  };
  r["aten._softmax.default"] = [](RuleContext& c) {
    const Var x = c.tensor("self");
    return unary(c, c.t.call1("aten._softmax_backward_data.default",
                              {c.grad, c.outputs[0], c.integer("dim", -1), x.dtype()}));
  };
  r["aten.native_layer_norm.default"] = [](RuleContext& c) {
    const Var x = c.tensor("input"), w = c.tensor("weight"), b = c.tensor("bias");
    const std::vector<Var> g =
        c.t.call("aten.native_layer_norm_backward.default",
                 {c.grad, x, c.arg("normalized_shape", Arg(std::vector<int64_t>{})), c.outputs[1],
                  c.outputs[2], w, b, std::vector<bool>{c.needs(x), c.needs(w), c.needs(b)}},
                 {}, "layer_norm_grad");
    Grads out;
    if (c.needs(x)) out.emplace_back(x.name, g[0]);
    if (c.needs(w)) out.emplace_back(w.name, g[1]);
    if (c.needs(b)) out.emplace_back(b.name, g[2]);
    return out;
  };
  r["aten.native_group_norm.default"] = [](RuleContext& c) {
    const Var x = c.tensor("input"), w = c.tensor("weight"), b = c.tensor("bias");
    const std::vector<Var> g =
        c.t.call("aten.native_group_norm_backward.default",
                 {c.grad, x, c.outputs[1], c.outputs[2], w, c.arg("N", Arg(0)), c.arg("C", Arg(0)),
                  c.arg("HxW", Arg(0)), c.arg("group", Arg(1)),
                  std::vector<bool>{c.needs(x), c.needs(w), c.needs(b)}},
                 {}, "group_norm_grad");
    Grads out;
    if (c.needs(x)) out.emplace_back(x.name, g[0]);
    if (c.needs(w)) out.emplace_back(w.name, g[1]);
    if (c.needs(b)) out.emplace_back(b.name, g[2]);
    return out;
  };
  // Batch norm in training mode normalises with the batch's statistics (outputs 1 and 2:
  // save_mean, save_invstd); in eval mode with the running statistics, which the backward
  // operator then reads instead (train=False), as derivatives.yaml has it for both overloads.
  r["aten.native_batch_norm.default"] = [](RuleContext& c) {
    return batch_norm_grads(c, c.integer("training", 0) != 0);
  };
  r["aten._native_batch_norm_legit_no_training.default"] = [](RuleContext& c) {
    return batch_norm_grads(c, false);
  };
  r["aten.convolution.default"] = [](RuleContext& c) {
    const Var x = c.tensor("input"), w = c.tensor("weight"), b = c.tensor("bias");
    const Arg bias_sizes = b.defined() ? Arg(b.shape()) : Arg::none();
    const std::vector<Var> g = c.t.call(
        "aten.convolution_backward.default",
        {c.grad, x, w, bias_sizes, c.arg("stride", Arg(std::vector<int64_t>{1, 1})),
         c.arg("padding", Arg(std::vector<int64_t>{0, 0})),
         c.arg("dilation", Arg(std::vector<int64_t>{1, 1})), c.arg("transposed", Arg(false)),
         c.arg("output_padding", Arg(std::vector<int64_t>{0, 0})), c.arg("groups", Arg(1)),
         std::vector<bool>{c.needs(x), c.needs(w), c.needs(b)}},
        {}, "conv_grad");
    Grads out;
    if (c.needs(x)) out.emplace_back(x.name, g[0]);
    if (c.needs(w)) out.emplace_back(w.name, g[1]);
    if (c.needs(b)) out.emplace_back(b.name, g[2]);
    return out;
  };
  r["aten.max_pool2d_with_indices.default"] = [](RuleContext& c) {
    const Var x = c.tensor("self");
    const std::vector<int64_t> kernel = c.ints("kernel_size", {1, 1});
    std::vector<int64_t> stride = c.ints("stride", {});
    if (stride.empty()) stride = kernel;
    return unary(
        c, c.t.call1("aten.max_pool2d_with_indices_backward.default",
                     {c.grad, x, kernel, stride, c.ints("padding", {0, 0}),
                      c.ints("dilation", {1, 1}), c.integer("ceil_mode", 0) != 0, c.outputs[1]},
                     {}, "max_pool_grad"));
  };
  r["aten.avg_pool2d.default"] = [](RuleContext& c) {
    const Var x = c.tensor("self");
    const std::vector<int64_t> kernel = c.ints("kernel_size", {1, 1});
    std::vector<int64_t> stride = c.ints("stride", {});
    if (stride.empty()) stride = kernel;
    return unary(c,
                 c.t.call1("aten.avg_pool2d_backward.default",
                           {c.grad, x, kernel, stride, c.ints("padding", {0, 0}),
                            c.integer("ceil_mode", 0) != 0, c.integer("count_include_pad", 1) != 0,
                            c.arg("divisor_override", Arg::none())},
                           {}, "avg_pool_grad"));
  };
  r["aten._adaptive_avg_pool2d.default"] = [](RuleContext& c) {
    return unary(c, c.t.call1("aten._adaptive_avg_pool2d_backward.default",
                              {c.grad, c.tensor("self")}, {}, "adaptive_avg_pool_grad"));
  };
  r["aten.embedding.default"] = [](RuleContext& c) {
    const Var w = c.tensor("weight");
    if (!c.needs(w)) return Grads{};
    return Grads{
        {w.name, c.t.call1("aten.embedding_dense_backward.default",
                           {c.grad, c.tensor("indices"), w.size(0), c.integer("padding_idx", -1),
                            c.integer("scale_grad_by_freq", 0) != 0},
                           {}, "embedding_grad")}};
  };
  r["aten.native_dropout.default"] = [](RuleContext& c) {
    const Var x = c.tensor("input");
    const double p = c.number("p", 0.5);
    const Var masked = F::mul(c.t, c.grad, c.outputs[1]);
    if (!c.needs(x)) return Grads{};
    return Grads{{x.name, F::mul(c.t, masked, p < 1 ? 1.0 / (1.0 - p) : 0.0)}};
  };
  return r;
}

}  // namespace

const std::map<std::string, Rule>& rules() {
  static const std::map<std::string, Rule> r = make_rules();
  return r;
}

}  // namespace crucible::autograd::detail
