// BERT (see BERT.h).
#include "models/BERT/BERT.h"

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

// cls.predictions: the head's layers and its own output bias.
class Predictions : public Container {
 public:
  explicit Predictions(int64_t vocab) {
    graph::Initializer zeros;
    zeros.kind = graph::Initializer::Kind::Zeros;
    register_parameter("bias", {vocab}, zeros);
  }
};

// One encoder layer: self-attention, then the MLP, each added to its input and layer-normed.
class Layer : public nn::Module {
 public:
  Layer(int64_t dim, int64_t heads, int64_t inner, double eps, const nn::Dropout* dropout)
      : dim_(dim), heads_(heads), dropout_(dropout) {
    auto& attention = register_module("attention", std::make_unique<Container>());
    auto& self = attention.add("self", std::make_unique<Container>());
    query_ = &self.add("query", std::make_unique<nn::Linear>(dim, dim, true, 0.02));
    key_ = &self.add("key", std::make_unique<nn::Linear>(dim, dim, true, 0.02));
    value_ = &self.add("value", std::make_unique<nn::Linear>(dim, dim, true, 0.02));
    auto& attn_out = attention.add("output", std::make_unique<Container>());
    attn_dense_ = &attn_out.add("dense", std::make_unique<nn::Linear>(dim, dim, true, 0.02));
    attn_ln_ = &attn_out.add("LayerNorm", std::make_unique<nn::LayerNorm>(dim, eps));
    auto& inter = register_module("intermediate", std::make_unique<Container>());
    inter_dense_ = &inter.add("dense", std::make_unique<nn::Linear>(dim, inner, true, 0.02));
    auto& out = register_module("output", std::make_unique<Container>());
    out_dense_ = &out.add("dense", std::make_unique<nn::Linear>(inner, dim, true, 0.02));
    out_ln_ = &out.add("LayerNorm", std::make_unique<nn::LayerNorm>(dim, eps));
  }

  nn::Var forward(nn::Tracer& t, const nn::Var& x) const {
    const int64_t b = x.size(0), s = x.size(1), hd = dim_ / heads_;
    auto heads = [&](const nn::Linear* proj) {
      return nn::F::view(t, proj->forward(t, x), {b, s, heads_, hd});
    };
    const nn::Var a = nn::F::attention(t, heads(query_), heads(key_), heads(value_), false);
    const nn::Var h =
        attn_ln_->forward(t, nn::F::add(t, dropout_->forward(t, attn_dense_->forward(t, a)), x));
    const nn::Var m = nn::F::gelu(t, inter_dense_->forward(t, h));
    return out_ln_->forward(t, nn::F::add(t, dropout_->forward(t, out_dense_->forward(t, m)), h));
  }

 private:
  int64_t dim_, heads_;
  const nn::Dropout* dropout_;
  nn::Linear *query_, *key_, *value_, *attn_dense_, *inter_dense_, *out_dense_;
  nn::LayerNorm *attn_ln_, *out_ln_;
};

}  // namespace

BERT::BERT(const Json& args) {
  vocab = detail::int_arg(args, "vocab_size", 30522);
  positions = detail::int_arg(args, "max_position_embeddings", 512);
  type_vocab = detail::int_arg(args, "type_vocab_size", 2);
  dim = detail::int_arg(args, "hidden_size", 768);
  heads = detail::int_arg(args, "num_attention_heads", 12);
  intermediate = detail::int_arg(args, "intermediate_size", 3072);
  const int64_t layers = detail::int_arg(args, "num_hidden_layers", 12);
  const double eps = detail::num_arg(args, "layer_norm_eps", 1e-12);
  const double p = detail::num_arg(args, "hidden_dropout_prob", 0.0);
  if (heads <= 0 || dim % heads != 0)
    usage_error("BERT: hidden_size is not divisible by num_attention_heads");
  if (p < 0 || p >= 1) usage_error("BERT: hidden_dropout_prob must be in [0, 1)");
  if (type_vocab <= 0) usage_error("BERT: type_vocab_size must be positive");
  pad_token = detail::int_arg(args, "pad_token_id", -1);
  if (pad_token < -1 || pad_token >= vocab)
    usage_error("BERT: pad_token_id " + std::to_string(pad_token) +
                " is not a token id (or -1 for none)");
  dropout_ = &register_module("dropout", std::make_unique<nn::Dropout>(p));
  auto& bert = register_module("bert", std::make_unique<Container>());
  auto& emb = bert.add("embeddings", std::make_unique<Container>());
  word_ = &emb.add("word_embeddings", std::make_unique<nn::Embedding>(vocab, dim, 0.02, pad_token));
  position_ =
      &emb.add("position_embeddings", std::make_unique<nn::Embedding>(positions, dim, 0.02));
  token_type_ =
      &emb.add("token_type_embeddings", std::make_unique<nn::Embedding>(type_vocab, dim, 0.02));
  embed_ln_ = &emb.add("LayerNorm", std::make_unique<nn::LayerNorm>(dim, eps));
  auto& enc = bert.add("encoder", std::make_unique<Container>());
  auto& list = enc.add("layer", std::make_unique<nn::ModuleList>());
  for (int64_t i = 0; i < layers; ++i)
    layers_.push_back(
        &list.push_back(std::make_unique<Layer>(dim, heads, intermediate, eps, dropout_)));
  auto& cls = register_module("cls", std::make_unique<Container>());
  auto& pred = cls.add("predictions", std::make_unique<Predictions>(vocab));
  predictions_ = &pred;
  auto& transform = pred.add("transform", std::make_unique<Container>());
  head_dense_ = &transform.add("dense", std::make_unique<nn::Linear>(dim, dim, true, 0.02));
  head_ln_ = &transform.add("LayerNorm", std::make_unique<nn::LayerNorm>(dim, eps));
}

graph::Initializer BERT::input_init(const std::string& name, DType dtype) const {
  if (name == "input_ids") return detail::index_init(vocab);
  return ZooModel::input_init(name, dtype);
}

nn::Var BERT::forward(nn::Tracer& t, const std::vector<nn::Var>& inputs) const {
  const nn::Var ids = inputs.at(0);
  const int64_t s = ids.size(1);
  if (s > positions)
    usage_error("BERT: a sequence of " + std::to_string(s) + " exceeds max_position_embeddings");
  graph::Initializer arange, zeros;
  arange.kind = graph::Initializer::Kind::Arange;
  zeros.kind = graph::Initializer::Kind::Zeros;
  const nn::Var pos = t.declare(graph::DeclKind::Const, "position_ids", {s}, DType::Int64, arange);
  const nn::Var types =
      t.declare(graph::DeclKind::Const, "token_type_ids", {s}, DType::Int64, zeros);
  nn::Var h = nn::F::add(t, word_->forward(t, ids), token_type_->forward(t, types));
  h = nn::F::add(t, h, position_->forward(t, pos));
  h = dropout_->forward(t, embed_ln_->forward(t, h));
  for (const nn::Module* l : layers_) h = static_cast<const Layer*>(l)->forward(t, h);
  // The MLM head: dense, GELU, layer norm, then the decoder tied to the word embeddings.
  h = head_ln_->forward(t, nn::F::gelu(t, head_dense_->forward(t, h)));
  return nn::F::linear(t, h, word_->param(t, "weight"), predictions_->param(t, "bias"));
}

}  // namespace crucible::models
