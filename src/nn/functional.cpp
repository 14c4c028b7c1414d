// Functionals as catalog op calls (see functional.h).
#include "crucible/nn/functional.h"

#include <cmath>
#include <limits>

#include "crucible/core/error.h"

namespace crucible::nn::F {

namespace {

cases::Literal sym(const std::string& s) { return cases::Literal::symbol(s); }

graph::Initializer data_init(const std::vector<double>& values) {
  graph::Initializer init;
  init.kind = graph::Initializer::Kind::Data;
  for (double v : values) init.args.push_back(cases::Literal::floating(v));
  return init;
}

}  // namespace

Var mm(Tracer& t, const Var& a, const Var& b) { return t.call1("aten.mm.default", {a, b}); }

Var linear(Tracer& t, const Var& x, const Var& w, const Var& b) {
  const Var wt = t.call1("aten.t.default", {w}, {}, "t");
  Var x2 = x;
  if (x.dim() != 2) x2 = view(t, x, {x.numel() / x.size(-1), x.size(-1)});
  Var y = b.defined() ? t.call1("aten.addmm.default", {b, x2, wt}, {}, "linear")
                      : t.call1("aten.mm.default", {x2, wt}, {}, "linear");
  if (x.dim() == 2) return y;
  Shape out = x.shape();
  out.back() = w.size(0);
  return view(t, y, out);
}

Var relu(Tracer& t, const Var& x) { return t.call1("aten.relu.default", {x}); }
Var gelu(Tracer& t, const Var& x, const std::string& approximate) {
  return t.call1("aten.gelu.default", {x}, {{"approximate", Arg(approximate)}});
}
Var silu(Tracer& t, const Var& x) { return t.call1("aten.silu.default", {x}); }
Var tanh(Tracer& t, const Var& x) { return t.call1("aten.tanh.default", {x}); }
Var relu6(Tracer& t, const Var& x) {
  return t.call1("aten.hardtanh.default", {x, 0.0, 6.0}, {}, "relu6");
}

Var activation(Tracer& t, const Var& x, const std::string& name) {
  if (name == "relu") return relu(t, x);
  if (name == "gelu") return gelu(t, x);
  if (name == "gelu_tanh" || name == "gelu_new") return gelu(t, x, "tanh");
  if (name == "silu") return silu(t, x);
  if (name == "tanh") return tanh(t, x);
  if (name == "relu6") return relu6(t, x);
  usage_error("unknown activation '" + name + "' (relu, gelu, gelu_tanh, silu, tanh, relu6)");
}

Var add(Tracer& t, const Var& a, const Var& b) { return t.call1("aten.add.Tensor", {a, b}); }
Var sub(Tracer& t, const Var& a, const Var& b) { return t.call1("aten.sub.Tensor", {a, b}); }
Var mul(Tracer& t, const Var& a, const Var& b) { return t.call1("aten.mul.Tensor", {a, b}); }
Var mul(Tracer& t, const Var& a, double s) { return t.call1("aten.mul.Scalar", {a, s}); }
Var add(Tracer& t, const Var& a, double s) { return t.call1("aten.add.Scalar", {a, s}); }
Var neg(Tracer& t, const Var& x) { return t.call1("aten.neg.default", {x}); }

Var contiguous(Tracer& t, const Var& x) {
  if (x.spec.contiguous() && !t.layout_varies(x)) return x;
  return t.call1("aten.clone.default", {x},
                 {{"memory_format", Arg(sym("torch.contiguous_format"))}}, "contiguous");
}

Var view(Tracer& t, const Var& x, const Shape& shape) {
  if (shape == x.shape()) return x;
  return t.call1("aten.view.default", {contiguous(t, x), shape});
}

Var permute(Tracer& t, const Var& x, const std::vector<int64_t>& dims) {
  return t.call1("aten.permute.default", {x, dims});
}
Var transpose(Tracer& t, const Var& x, int64_t d0, int64_t d1) {
  return t.call1("aten.transpose.int", {x, d0, d1});
}
Var expand(Tracer& t, const Var& x, const Shape& shape) {
  return t.call1("aten.expand.default", {x, shape});
}
Var slice(Tracer& t, const Var& x, int64_t dim, int64_t start, int64_t end) {
  return t.call1("aten.slice.Tensor", {x, dim, start, end});
}
Var select(Tracer& t, const Var& x, int64_t dim, int64_t index) {
  return t.call1("aten.select.int", {x, dim, index});
}
Var cat(Tracer& t, const std::vector<Var>& xs, int64_t dim) {
  return t.call1("aten.cat.default", {xs, dim});
}

Var sum(Tracer& t, const Var& x) { return t.call1("aten.sum.default", {x}); }
Var sum(Tracer& t, const Var& x, const std::vector<int64_t>& dims, bool keepdim) {
  return t.call1("aten.sum.dim_IntList", {x, dims, keepdim});
}
Var mean(Tracer& t, const Var& x, const std::vector<int64_t>& dims, bool keepdim) {
  return t.call1("aten.mean.dim", {x, dims, keepdim});
}

Var softmax(Tracer& t, const Var& x, int64_t dim) {
  return t.call1("aten._softmax.default", {x, dim, false});
}

Var layer_norm(Tracer& t, const Var& x, const std::vector<int64_t>& normalized_shape, const Var& w,
               const Var& b, double eps) {
  return t.call("aten.native_layer_norm.default", {x, normalized_shape, w, b, eps}, {},
                "layer_norm")[0];
}

Var rms_norm(Tracer& t, const Var& x, const Var& w, double eps) {
  const Var sq = t.call1("aten.pow.Tensor_Scalar", {x, 2});
  const Var ms = mean(t, sq, {-1}, true);
  const Var r = t.call1("aten.rsqrt.default", {add(t, ms, eps)});
  const Var normed = mul(t, x, r);
  return w.defined() ? mul(t, normed, w) : normed;
}

Var group_norm(Tracer& t, const Var& x, int64_t groups, const Var& w, const Var& b, double eps) {
  const int64_t n = x.size(0), c = x.size(1);
  const int64_t hw = c ? x.numel() / (n * c) : 0;
  return t.call("aten.native_group_norm.default", {x, w, b, n, c, hw, groups, eps}, {},
                "group_norm")[0];
}

Var batch_norm(Tracer& t, const Var& x, const Var& w, const Var& b, const Var& running_mean,
               const Var& running_var, bool training, double momentum, double eps) {
  if (training)
    return t.call("aten.native_batch_norm.default",
                  {x, w, b, running_mean, running_var, true, momentum, eps}, {}, "batch_norm")[0];
  return t.call("aten._native_batch_norm_legit_no_training.default",
                {x, w, b, running_mean, running_var, momentum, eps}, {}, "batch_norm")[0];
}

Var conv2d(Tracer& t, const Var& x, const Var& w, const Var& b, int64_t stride, int64_t padding,
           int64_t groups) {
  return t.call1(
      "aten.convolution.default",
      {x, w, b, std::vector<int64_t>{stride, stride}, std::vector<int64_t>{padding, padding},
       std::vector<int64_t>{1, 1}, false, std::vector<int64_t>{0, 0}, groups},
      {}, "conv");
}

Var max_pool2d(Tracer& t, const Var& x, int64_t kernel, int64_t stride, int64_t padding) {
  return t.call("aten.max_pool2d_with_indices.default",
                {x, std::vector<int64_t>{kernel, kernel}, std::vector<int64_t>{stride, stride},
                 std::vector<int64_t>{padding, padding}},
                {}, "max_pool")[0];
}

Var avg_pool2d(Tracer& t, const Var& x, int64_t kernel, int64_t stride) {
  return t.call1("aten.avg_pool2d.default",
                 {x, std::vector<int64_t>{kernel, kernel}, std::vector<int64_t>{stride, stride}},
                 {}, "avg_pool");
}

Var adaptive_avg_pool2d(Tracer& t, const Var& x, int64_t out_h, int64_t out_w) {
  return t.call1("aten._adaptive_avg_pool2d.default", {x, std::vector<int64_t>{out_h, out_w}}, {},
                 "adaptive_avg_pool");
}

Var embedding(Tracer& t, const Var& weight, const Var& indices, int64_t padding_idx) {
  if (padding_idx < 0) return t.call1("aten.embedding.default", {weight, indices});
  return t.call1("aten.embedding.default", {weight, indices, padding_idx});
}

Var dropout(Tracer& t, const Var& x, double p, bool training) {
  if (!training || p <= 0) return x;
  return t.call("aten.native_dropout.default", {x, p, true}, {}, "dropout")[0];
}

namespace {

// [B, S, h, D] -> [B * h, S, D] with each of the h heads repeated `rep` times.
Var heads_first(Tracer& t, const Var& x, int64_t rep) {
  const int64_t b = x.size(0), s = x.size(1), h = x.size(2), d = x.size(3);
  Var p = contiguous(t, permute(t, x, {0, 2, 1, 3}));  // [B, h, S, D]
  if (rep > 1) {
    p = view(t, p, {b, h, 1, s, d});
    p = contiguous(t, expand(t, p, {b, h, rep, s, d}));
  }
  return view(t, p, {b * h * rep, s, d});
}

}  // namespace

Var attention(Tracer& t, const Var& q, const Var& k, const Var& v, bool causal) {
  if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4)
    usage_error("attention: q, k and v are [batch, seq, heads, head_dim]");
  const int64_t b = q.size(0), s = q.size(1), h = q.size(2), d = q.size(3);
  const int64_t hkv = k.size(2);
  if (hkv <= 0 || h % hkv != 0)
    usage_error("attention: " + std::to_string(h) + " query heads are not a multiple of " +
                std::to_string(hkv) + " key/value heads");
  const Var q3 = heads_first(t, q, 1);
  const Var k3 = heads_first(t, k, h / hkv);
  const Var v3 = heads_first(t, v, h / hkv);
  Var scores = t.call1("aten.bmm.default", {q3, transpose(t, k3, 1, 2)}, {}, "scores");
  scores = mul(t, scores, 1.0 / std::sqrt(static_cast<double>(d)));
  if (causal) {
    const std::string name = "causal_mask_" + std::to_string(s);
    std::optional<Var> mask = t.find_decl(name);
    if (!mask) {
      std::vector<double> values;
      for (int64_t i = 0; i < s; ++i)
        for (int64_t j = 0; j < s; ++j)
          values.push_back(j <= i ? 0.0 : -std::numeric_limits<double>::infinity());
      mask = t.declare(graph::DeclKind::Const, name, {s, s}, q.dtype(), data_init(values));
    }
    scores = add(t, scores, *mask);
  }
  const Var probs = softmax(t, scores, -1);
  const Var o = t.call1("aten.bmm.default", {probs, v3}, {}, "attn");
  const Var o4 = permute(t, view(t, o, {b, h, s, d}), {0, 2, 1, 3});
  return view(t, o4, {b, s, h * d});
}

Var rotary(Tracer& t, const Var& x, double theta) {
  const int64_t s = x.size(1), d = x.size(3);
  if (d % 2 != 0) usage_error("rotary: the head dimension " + std::to_string(d) + " is odd");
  const std::string cos_name = "rope_cos_" + std::to_string(s) + "_" + std::to_string(d);
  const std::string sin_name = "rope_sin_" + std::to_string(s) + "_" + std::to_string(d);
  std::optional<Var> cos = t.find_decl(cos_name), sin = t.find_decl(sin_name);
  if (!cos || !sin) {
    std::vector<double> cs, sn;
    for (int64_t p = 0; p < s; ++p) {
      for (int64_t j = 0; j < d; ++j) {
        const int64_t i = j % (d / 2);
        const double inv_freq = 1.0 / std::pow(theta, static_cast<double>(2 * i) / d);
        cs.push_back(std::cos(p * inv_freq));
        sn.push_back(std::sin(p * inv_freq));
      }
    }
    cos = t.declare(graph::DeclKind::Const, cos_name, {s, 1, d}, x.dtype(), data_init(cs));
    sin = t.declare(graph::DeclKind::Const, sin_name, {s, 1, d}, x.dtype(), data_init(sn));
  }
  const Var x1 = slice(t, x, 3, 0, d / 2);
  const Var x2 = slice(t, x, 3, d / 2, d);
  const Var rotated = cat(t, {neg(t, x2), x1}, 3);
  return add(t, mul(t, x, *cos), mul(t, rotated, *sin));
}

}  // namespace crucible::nn::F
