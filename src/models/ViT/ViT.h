// ViT (Hugging Face's ViTForImageClassification layout: vit.embeddings.{cls_token,
// position_embeddings, patch_embeddings.projection}, vit.encoder.layer.N.{layernorm_before,
// attention.attention.{query,key,value}, attention.output.dense, layernorm_after,
// intermediate.dense, output.dense}, vit.layernorm, classifier): patch convolution, a class
// token, pre-norm encoder layers with unmasked attention and GELU MLPs, the head on the class
// token.
#pragma once

#include "crucible/models/zoo.h"
#include "crucible/nn/layers.h"

namespace crucible::models {

class ViT : public ZooModel {
 public:
  explicit ViT(const Json& args);
  std::string class_name() const override { return "ViT"; }
  nn::Var forward(nn::Tracer& t, const std::vector<nn::Var>& inputs) const override;

 private:
  int64_t dim_, patch_;
  nn::Module* embeddings_;
  nn::Conv2d* projection_;
  std::vector<const nn::Module*> layers_;
  nn::LayerNorm* norm_;
  nn::Linear* classifier_;
};

}  // namespace crucible::models
