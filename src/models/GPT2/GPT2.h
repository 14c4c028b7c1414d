// GPT-2 (Hugging Face's GPT2LMHeadModel layout: transformer.wte, .wpe, .h.N.{ln_1, attn.c_attn,
// attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj}, .ln_f; the LM head tied to wte). Linear weights
// are PyTorch's [out, in]; Hugging Face's Conv1D stores them transposed, which the checkpoint
// loader undoes (nn/checkpoint.h).
#pragma once

#include "crucible/models/zoo.h"
#include "crucible/nn/layers.h"

namespace crucible::models {

class GPT2 : public ZooModel {
 public:
  explicit GPT2(const Json& args);
  std::string class_name() const override { return "GPT2"; }
  graph::Initializer input_init(const std::string& name, DType dtype) const override;
  nn::Var forward(nn::Tracer& t, const std::vector<nn::Var>& inputs) const override;
  nn::CheckpointLayout hf_layout() const override;
  int64_t vocab, positions, dim, heads;

 private:
  nn::Module* transformer_;
  nn::Embedding *wte_, *wpe_;
  nn::LayerNorm* ln_f_;
  std::vector<const nn::Module*> blocks_;
};

}  // namespace crucible::models
