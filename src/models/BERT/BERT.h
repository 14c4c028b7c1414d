// BERT with its masked-language-model head (Hugging Face's BertForMaskedLM layout:
// bert.embeddings.{word,position,token_type}_embeddings and .LayerNorm,
// bert.encoder.layer.N.{attention.self.{query,key,value}, attention.output.{dense,LayerNorm},
// intermediate.dense, output.{dense,LayerNorm}}, cls.predictions.{transform.dense,
// transform.LayerNorm, decoder, bias}; the decoder tied to the word embeddings). Post-norm
// encoder layers, unmasked attention, GELU (erf) MLPs; every token of type 0. `pad_token_id`
// (Hugging Face's config key) makes the word embedding's row of that id get no gradient, as
// Hugging Face's embedding does for its [PAD] id (0 in BertConfig); the default, -1, has no
// padding id, so every token id trains.
#pragma once

#include "crucible/models/zoo.h"
#include "crucible/nn/layers.h"

namespace crucible::models {

class BERT : public ZooModel {
 public:
  explicit BERT(const Json& args);
  std::string class_name() const override { return "BERT"; }
  graph::Initializer input_init(const std::string& name, DType dtype) const override;
  nn::Var forward(nn::Tracer& t, const std::vector<nn::Var>& inputs) const override;
  int64_t vocab, positions, type_vocab, dim, heads, intermediate, pad_token;

 private:
  nn::Embedding *word_, *position_, *token_type_;
  nn::LayerNorm *embed_ln_, *head_ln_;
  nn::Linear* head_dense_;
  nn::Module* predictions_;
  nn::Dropout* dropout_;
  std::vector<const nn::Module*> layers_;
};

}  // namespace crucible::models
