// ViT (see ViT.h).
#include "models/ViT/ViT.h"

#include "models/zoo_util.h"

namespace crucible::models {

namespace {

class Container : public nn::Module {
 public:
  template <class M>
  M& add(const std::string& name, std::unique_ptr<M> m) {
    return register_module(name, std::move(m));
  }
  void add_parameter(const std::string& name, const Shape& shape, graph::Initializer init) {
    register_parameter(name, shape, std::move(init));
  }
};

class Layer : public nn::Module {
 public:
  Layer(int64_t dim, int64_t heads, int64_t hidden, double eps) : heads_(heads) {
    before_ = &register_module("layernorm_before", std::make_unique<nn::LayerNorm>(dim, eps));
    auto& attention = register_module("attention", std::make_unique<Container>());
    auto& self = attention.add("attention", std::make_unique<Container>());
    q_ = &self.add("query", std::make_unique<nn::Linear>(dim, dim, true, 0.02));
    k_ = &self.add("key", std::make_unique<nn::Linear>(dim, dim, true, 0.02));
    v_ = &self.add("value", std::make_unique<nn::Linear>(dim, dim, true, 0.02));
    auto& out = attention.add("output", std::make_unique<Container>());
    o_ = &out.add("dense", std::make_unique<nn::Linear>(dim, dim, true, 0.02));
    after_ = &register_module("layernorm_after", std::make_unique<nn::LayerNorm>(dim, eps));
    auto& inter = register_module("intermediate", std::make_unique<Container>());
    fc1_ = &inter.add("dense", std::make_unique<nn::Linear>(dim, hidden, true, 0.02));
    auto& output = register_module("output", std::make_unique<Container>());
    fc2_ = &output.add("dense", std::make_unique<nn::Linear>(hidden, dim, true, 0.02));
  }
  nn::Var forward(nn::Tracer& t, const nn::Var& x) const {
    const int64_t b = x.size(0), s = x.size(1), d = x.size(2), hd = d / heads_;
    const nn::Var n = before_->forward(t, x);
    auto heads = [&](const nn::Linear* l) {
      return nn::F::view(t, l->forward(t, n), {b, s, heads_, hd});
    };
    const nn::Var a = nn::F::attention(t, heads(q_), heads(k_), heads(v_), false);
    const nn::Var h = nn::F::add(t, x, o_->forward(t, a));
    const nn::Var m = nn::F::gelu(t, fc1_->forward(t, after_->forward(t, h)));
    return nn::F::add(t, h, fc2_->forward(t, m));
  }

 private:
  int64_t heads_;
  nn::LayerNorm *before_, *after_;
  nn::Linear *q_, *k_, *v_, *o_, *fc1_, *fc2_;
};

}  // namespace

ViT::ViT(const Json& args) {
  const int64_t image = detail::int_arg(args, "image_size", 224);
  patch_ = detail::int_arg(args, "patch_size", 16);
  const int64_t channels = detail::int_arg(args, "num_channels", 3);
  dim_ = detail::int_arg(args, "hidden_size", 768);
  const int64_t heads = detail::int_arg(args, "num_attention_heads", 12);
  const int64_t hidden = detail::int_arg(args, "intermediate_size", 3072);
  const int64_t layers = detail::int_arg(args, "num_hidden_layers", 12);
  const int64_t classes = detail::int_arg(args, "num_labels", 1000);
  const double eps = detail::num_arg(args, "layer_norm_eps", 1e-12);
  if (patch_ <= 0 || image % patch_ != 0)
    usage_error("ViT: image_size is not a multiple of patch_size");
  if (heads <= 0 || dim_ % heads != 0)
    usage_error("ViT: hidden_size is not divisible by num_attention_heads");
  const int64_t tokens = (image / patch_) * (image / patch_) + 1;
  auto& vit = register_module("vit", std::make_unique<Container>());
  auto& emb = vit.add("embeddings", std::make_unique<Container>());
  embeddings_ = &emb;
  emb.add_parameter("cls_token", {1, 1, dim_}, nn::normal_init(0, 0.02));
  emb.add_parameter("position_embeddings", {1, tokens, dim_}, nn::normal_init(0, 0.02));
  auto& pe = emb.add("patch_embeddings", std::make_unique<Container>());
  projection_ =
      &pe.add("projection", std::make_unique<nn::Conv2d>(channels, dim_, patch_, patch_, 0));
  auto& enc = vit.add("encoder", std::make_unique<Container>());
  auto& list = enc.add("layer", std::make_unique<nn::ModuleList>());
  for (int64_t i = 0; i < layers; ++i)
    layers_.push_back(&list.push_back(std::make_unique<Layer>(dim_, heads, hidden, eps)));
  norm_ = &vit.add("layernorm", std::make_unique<nn::LayerNorm>(dim_, eps));
  classifier_ = &register_module("classifier", std::make_unique<nn::Linear>(dim_, classes));
}

nn::Var ViT::forward(nn::Tracer& t, const std::vector<nn::Var>& inputs) const {
  const nn::Var x = inputs.at(0);
  const int64_t b = x.size(0);
  nn::Var p = projection_->forward(t, x);  // [B, D, h, w]
  const int64_t n = p.size(2) * p.size(3);
  p = nn::F::transpose(t, nn::F::view(t, p, {b, dim_, n}), 1, 2);  // [B, n, D]
  const nn::Var cls = nn::F::expand(t, embeddings_->param(t, "cls_token"), {b, 1, dim_});
  nn::Var h = nn::F::cat(t, {cls, p}, 1);
  h = nn::F::add(t, h, embeddings_->param(t, "position_embeddings"));
  for (const nn::Module* l : layers_) h = static_cast<const Layer*>(l)->forward(t, h);
  h = norm_->forward(t, h);
  return classifier_->forward(t, nn::F::select(t, h, 1, 0));
}

}  // namespace crucible::models
