// GPT-2 (see GPT2.h).
#include "models/GPT2/GPT2.h"

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

class Block : public nn::Module {
 public:
  Block(int64_t dim, int64_t heads, double eps) : dim_(dim), heads_(heads) {
    ln_1_ = &register_module("ln_1", std::make_unique<nn::LayerNorm>(dim, eps));
    auto& attn = register_module("attn", std::make_unique<Container>());
    c_attn_ = &attn.add("c_attn", std::make_unique<nn::Linear>(dim, 3 * dim, true, 0.02));
    attn_proj_ = &attn.add("c_proj", std::make_unique<nn::Linear>(dim, dim, true, 0.02));
    ln_2_ = &register_module("ln_2", std::make_unique<nn::LayerNorm>(dim, eps));
    auto& mlp = register_module("mlp", std::make_unique<Container>());
    c_fc_ = &mlp.add("c_fc", std::make_unique<nn::Linear>(dim, 4 * dim, true, 0.02));
    mlp_proj_ = &mlp.add("c_proj", std::make_unique<nn::Linear>(4 * dim, dim, true, 0.02));
  }

  nn::Var forward(nn::Tracer& t, const nn::Var& x) const {
    const int64_t b = x.size(0), s = x.size(1), hd = dim_ / heads_;
    const nn::Var qkv = c_attn_->forward(t, ln_1_->forward(t, x));
    auto part = [&](int64_t i) {
      return nn::F::view(t, nn::F::slice(t, qkv, 2, i * dim_, (i + 1) * dim_), {b, s, heads_, hd});
    };
    const nn::Var a = nn::F::attention(t, part(0), part(1), part(2), true);
    const nn::Var h = nn::F::add(t, x, attn_proj_->forward(t, a));
    const nn::Var m = nn::F::gelu(t, c_fc_->forward(t, ln_2_->forward(t, h)), "tanh");
    return nn::F::add(t, h, mlp_proj_->forward(t, m));
  }

 private:
  int64_t dim_, heads_;
  nn::LayerNorm *ln_1_, *ln_2_;
  nn::Linear *c_attn_, *attn_proj_, *c_fc_, *mlp_proj_;
};

}  // namespace

GPT2::GPT2(const Json& args) {
  vocab = detail::int_arg(args, "vocab_size", 50257);
  positions = detail::int_arg(args, "n_positions", 1024);
  dim = detail::int_arg(args, "n_embd", 768);
  heads = detail::int_arg(args, "n_head", 12);
  const int64_t layers = detail::int_arg(args, "n_layer", 12);
  const double eps = detail::num_arg(args, "layer_norm_epsilon", 1e-5);
  if (heads <= 0 || dim % heads != 0) usage_error("GPT2: n_embd is not divisible by n_head");
  auto& tr = register_module("transformer", std::make_unique<Container>());
  transformer_ = &tr;
  wte_ = &tr.add("wte", std::make_unique<nn::Embedding>(vocab, dim, 0.02));
  wpe_ = &tr.add("wpe", std::make_unique<nn::Embedding>(positions, dim, 0.01));
  auto& h = tr.add("h", std::make_unique<nn::ModuleList>());
  for (int64_t i = 0; i < layers; ++i)
    blocks_.push_back(&h.push_back(std::make_unique<Block>(dim, heads, eps)));
  ln_f_ = &tr.add("ln_f", std::make_unique<nn::LayerNorm>(dim, eps));
}

graph::Initializer GPT2::input_init(const std::string& name, DType dtype) const {
  if (name == "input_ids") return detail::index_init(vocab);
  return ZooModel::input_init(name, dtype);
}

nn::CheckpointLayout GPT2::hf_layout() const {
  nn::CheckpointLayout l;
  l.transposed = {"attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight",
                  "mlp.c_proj.weight"};
  l.tied = {{"lm_head.weight", "transformer.wte.weight"}};
  l.prefix = "transformer.";
  l.ignored = {".attn.bias", ".attn.masked_bias", "lifted_tensor_0"};
  return l;
}

nn::Var GPT2::forward(nn::Tracer& t, const std::vector<nn::Var>& inputs) const {
  const nn::Var ids = inputs.at(0);
  const int64_t s = ids.size(1);
  if (s > positions)
    usage_error("GPT2: a sequence of " + std::to_string(s) + " exceeds n_positions");
  graph::Initializer arange;
  arange.kind = graph::Initializer::Kind::Arange;
  const nn::Var pos = t.declare(graph::DeclKind::Const, "position_ids", {s}, DType::Int64, arange);
  nn::Var h = nn::F::add(t, wte_->forward(t, ids), wpe_->forward(t, pos));
  for (const nn::Module* b : blocks_) h = static_cast<const Block*>(b)->forward(t, h);
  h = ln_f_->forward(t, h);
  // The LM head is the token embedding, transposed (tied weights).
  return nn::F::linear(t, h, wte_->param(t, "weight"), nn::Var{});
}

}  // namespace crucible::models
