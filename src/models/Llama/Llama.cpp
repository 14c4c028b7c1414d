// Llama (see Llama.h).
#include "models/Llama/Llama.h"

#include "models/zoo_util.h"

namespace crucible::models {

namespace {

class Container : public nn::Module {
 public:
  template <class M>
  M& add(const std::string& name, std::unique_ptr<M> m) {
    return register_module(name, std::move(m));
  }
};

class Layer : public nn::Module {
 public:
  Layer(const nn::MultiheadAttention::Config& a, int64_t hidden, double eps) {
    in_norm_ = &register_module("input_layernorm", std::make_unique<nn::RMSNorm>(a.dim, eps));
    attn_ = &register_module("self_attn", std::make_unique<nn::MultiheadAttention>(a));
    post_norm_ =
        &register_module("post_attention_layernorm", std::make_unique<nn::RMSNorm>(a.dim, eps));
    mlp_ = &register_module("mlp", std::make_unique<nn::Mlp>(a.dim, hidden, "swiglu", false));
  }
  nn::Var forward(nn::Tracer& t, const nn::Var& x) const {
    const nn::Var h = nn::F::add(t, x, attn_->forward(t, in_norm_->forward(t, x)));
    return nn::F::add(t, h, mlp_->forward(t, post_norm_->forward(t, h)));
  }

 private:
  nn::RMSNorm *in_norm_, *post_norm_;
  nn::MultiheadAttention* attn_;
  nn::Mlp* mlp_;
};

}  // namespace

Llama::Llama(const Json& args) {
  vocab = detail::int_arg(args, "vocab_size", 32000);
  const int64_t dim = detail::int_arg(args, "hidden_size", 4096);
  const int64_t hidden = detail::int_arg(args, "intermediate_size", 11008);
  const int64_t layers = detail::int_arg(args, "num_hidden_layers", 32);
  nn::MultiheadAttention::Config a;
  a.dim = dim;
  a.heads = detail::int_arg(args, "num_attention_heads", 32);
  a.kv_heads = detail::int_arg(args, "num_key_value_heads", a.heads);
  a.bias = false;
  a.causal = true;
  a.rope_theta = detail::num_arg(args, "rope_theta", 10000.0);
  const double eps = detail::num_arg(args, "rms_norm_eps", 1e-6);
  auto& model = register_module("model", std::make_unique<Container>());
  embed_ = &model.add("embed_tokens", std::make_unique<nn::Embedding>(vocab, dim, 0.02));
  auto& list = model.add("layers", std::make_unique<nn::ModuleList>());
  for (int64_t i = 0; i < layers; ++i)
    layers_.push_back(&list.push_back(std::make_unique<Layer>(a, hidden, eps)));
  norm_ = &model.add("norm", std::make_unique<nn::RMSNorm>(dim, eps));
  lm_head_ = &register_module("lm_head", std::make_unique<nn::Linear>(dim, vocab, false, 0.02));
}

graph::Initializer Llama::input_init(const std::string& name, DType dtype) const {
  if (name == "input_ids") return detail::index_init(vocab);
  return ZooModel::input_init(name, dtype);
}

nn::CheckpointLayout Llama::hf_layout() const {
  nn::CheckpointLayout l;
  l.ignored = {"rotary_emb.inv_freq", "rotary_emb.original_inv_freq", "lifted_tensor_0"};
  return l;
}

nn::Var Llama::forward(nn::Tracer& t, const std::vector<nn::Var>& inputs) const {
  nn::Var h = embed_->forward(t, inputs.at(0));
  for (const nn::Module* l : layers_) h = static_cast<const Layer*>(l)->forward(t, h);
  return lm_head_->forward(t, norm_->forward(t, h));
}

}  // namespace crucible::models
