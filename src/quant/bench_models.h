// The micro-benchmark's model types as crucible-graph text: `linear` (x @ W^T, no bias, as
// TorchAO's ToyLinearModel), `ln_linear_<act>` (layer norm, linear, activation), and
// `transformer_block` (pre-norm attention with heads of 64 and a 4x GELU MLP, residuals; every
// linear of it is rewritten by a recipe). Internal to src/quant.
#pragma once

#include <string>

#include "crucible/graph/graph.h"
#include "crucible/quant/bench_config.h"

namespace crucible::quant {

// The graph of `model_type` for the shape (m tokens, k input features, n output features; the
// transformer block's hidden size is k and its output k) in `dtype`; its input is %x.
graph::Graph bench_model(const std::string& model_type, const MatrixShape& s, DType dtype);

}  // namespace crucible::quant
