// Llama (Hugging Face's LlamaForCausalLM layout: model.embed_tokens, model.layers.N.
// {input_layernorm, self_attn.{q,k,v,o}_proj, post_attention_layernorm, mlp.{gate,up,down}_proj},
// model.norm, lm_head): RMSNorm, rotary embeddings, SwiGLU and grouped-query attention.
#pragma once

#include "crucible/models/zoo.h"
#include "crucible/nn/layers.h"

namespace crucible::models {

class Llama : public ZooModel {
 public:
  explicit Llama(const Json& args);
  std::string class_name() const override { return "Llama"; }
  graph::Initializer input_init(const std::string& name, DType dtype) const override;
  nn::Var forward(nn::Tracer& t, const std::vector<nn::Var>& inputs) const override;
  nn::CheckpointLayout hf_layout() const override;
  int64_t vocab;

 private:
  nn::Embedding* embed_;
  nn::RMSNorm* norm_;
  nn::Linear* lm_head_;
  std::vector<const nn::Module*> layers_;
};

}  // namespace crucible::models
