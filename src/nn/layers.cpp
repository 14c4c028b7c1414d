// Layers (see layers.h).
#include "crucible/nn/layers.h"

#include <cmath>

#include "crucible/core/error.h"

namespace crucible::nn {

Linear::Linear(int64_t in, int64_t out, bool bias, double init_std)
    : in_features(in), out_features(out) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(in));
  register_parameter("weight", {out, in},
                     init_std > 0 ? normal_init(0, init_std) : uniform_init(-bound, bound));
  if (bias)
    register_parameter("bias", {out}, init_std > 0 ? zeros_init() : uniform_init(-bound, bound));
}

Var Linear::forward(Tracer& t, const Var& x) const {
  return F::linear(t, x, param(t, "weight"), param_or_none(t, "bias"));
}

Conv2d::Conv2d(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t padding,
               int64_t groups, bool bias)
    : stride(stride), padding(padding), groups(groups) {
  if (groups <= 0 || in % groups != 0 || out % groups != 0)
    usage_error("Conv2d: " + std::to_string(in) + " -> " + std::to_string(out) +
                " channels are not divisible by " + std::to_string(groups) + " groups");
  const double bound = 1.0 / std::sqrt(static_cast<double>(in / groups * kernel * kernel));
  register_parameter("weight", {out, in / groups, kernel, kernel}, uniform_init(-bound, bound));
  if (bias) register_parameter("bias", {out}, uniform_init(-bound, bound));
}

Var Conv2d::forward(Tracer& t, const Var& x) const {
  return F::conv2d(t, x, param(t, "weight"), param_or_none(t, "bias"), stride, padding, groups);
}

BatchNorm2d::BatchNorm2d(int64_t channels, double eps, double momentum)
    : eps(eps), momentum(momentum) {
  register_parameter("weight", {channels}, ones_init());
  register_parameter("bias", {channels}, zeros_init());
  register_buffer("running_mean", {channels}, zeros_init());
  register_buffer("running_var", {channels}, ones_init());
  graph::Initializer zero;
  zero.kind = graph::Initializer::Kind::Zeros;
  register_buffer("num_batches_tracked", {}, zero, DType::Int64);
}

Var BatchNorm2d::forward(Tracer& t, const Var& x) const {
  return F::batch_norm(t, x, param(t, "weight"), param(t, "bias"), param(t, "running_mean"),
                       param(t, "running_var"), training(), momentum, eps);
}

LayerNorm::LayerNorm(int64_t dim, double eps) : dim(dim), eps(eps) {
  register_parameter("weight", {dim}, ones_init());
  register_parameter("bias", {dim}, zeros_init());
}

Var LayerNorm::forward(Tracer& t, const Var& x) const {
  return F::layer_norm(t, x, {dim}, param(t, "weight"), param(t, "bias"), eps);
}

RMSNorm::RMSNorm(int64_t dim, double eps) : eps(eps) {
  register_parameter("weight", {dim}, ones_init());
}

Var RMSNorm::forward(Tracer& t, const Var& x) const {
  return F::rms_norm(t, x, param(t, "weight"), eps);
}

GroupNorm::GroupNorm(int64_t groups, int64_t channels, double eps) : groups(groups), eps(eps) {
  if (groups <= 0 || channels % groups != 0)
    usage_error("GroupNorm: " + std::to_string(channels) + " channels are not divisible by " +
                std::to_string(groups) + " groups");
  register_parameter("weight", {channels}, ones_init());
  register_parameter("bias", {channels}, zeros_init());
}

Var GroupNorm::forward(Tracer& t, const Var& x) const {
  return F::group_norm(t, x, groups, param(t, "weight"), param(t, "bias"), eps);
}

Embedding::Embedding(int64_t num, int64_t dim, double init_std, int64_t padding_idx)
    : num(num), dim(dim), padding_idx(padding_idx) {
  if (padding_idx >= num)
    usage_error("Embedding: padding_idx " + std::to_string(padding_idx) + " is not below " +
                std::to_string(num) + " rows");
  register_parameter("weight", {num, dim}, normal_init(0, init_std));
}

Var Embedding::forward(Tracer& t, const Var& indices) const {
  return F::embedding(t, param(t, "weight"), indices, padding_idx);
}

MultiheadAttention::MultiheadAttention(const Config& c) : config(c) {
  if (config.kv_heads == 0) config.kv_heads = config.heads;
  if (config.heads <= 0 || config.dim % config.heads != 0)
    usage_error("attention: dim " + std::to_string(config.dim) + " is not divisible by " +
                std::to_string(config.heads) + " heads");
  const int64_t hd = config.dim / config.heads;
  q_proj_ = &register_module("q_proj",
                             std::make_unique<Linear>(config.dim, config.heads * hd, config.bias));
  k_proj_ = &register_module(
      "k_proj", std::make_unique<Linear>(config.dim, config.kv_heads * hd, config.bias));
  v_proj_ = &register_module(
      "v_proj", std::make_unique<Linear>(config.dim, config.kv_heads * hd, config.bias));
  o_proj_ = &register_module("o_proj",
                             std::make_unique<Linear>(config.heads * hd, config.dim, config.bias));
}

Var MultiheadAttention::forward(Tracer& t, const Var& x) const {
  const int64_t b = x.size(0), s = x.size(1), hd = config.dim / config.heads;
  Var q = F::view(t, q_proj_->forward(t, x), {b, s, config.heads, hd});
  Var k = F::view(t, k_proj_->forward(t, x), {b, s, config.kv_heads, hd});
  const Var v = F::view(t, v_proj_->forward(t, x), {b, s, config.kv_heads, hd});
  if (config.rope_theta > 0) {
    q = F::rotary(t, q, config.rope_theta);
    k = F::rotary(t, k, config.rope_theta);
  }
  return o_proj_->forward(t, F::attention(t, q, k, v, config.causal));
}

Mlp::Mlp(int64_t dim, int64_t hidden, const std::string& act, bool bias) : act(act) {
  if (act == "swiglu") {
    gate_ = &register_module("gate_proj", std::make_unique<Linear>(dim, hidden, bias));
    up_ = &register_module("up_proj", std::make_unique<Linear>(dim, hidden, bias));
    down_ = &register_module("down_proj", std::make_unique<Linear>(hidden, dim, bias));
  } else {
    fc1_ = &register_module("fc1", std::make_unique<Linear>(dim, hidden, bias));
    fc2_ = &register_module("fc2", std::make_unique<Linear>(hidden, dim, bias));
  }
}

Var Mlp::forward(Tracer& t, const Var& x) const {
  if (act == "swiglu") {
    const Var g = F::silu(t, gate_->forward(t, x));
    return down_->forward(t, F::mul(t, g, up_->forward(t, x)));
  }
  return fc2_->forward(t, F::activation(t, fc1_->forward(t, x), act));
}

}  // namespace crucible::nn
