// Applying a recipe to a model graph: every linear layer (aten.addmm with a bias or aten.mm
// whose weight is a parameter, directly or through a [1, 0] permute or aten.t) is rewritten
// into the recipe's quantized operators. Weights are quantized once, here (their quantized
// tensors become parameters of the new graph); activations are quantized by nodes of the
// graph, on every call, where the recipe says so.
#pragma once

#include <string>
#include <vector>

#include "crucible/graph/graph.h"
#include "crucible/graph/values.h"
#include "crucible/quant/recipe.h"

namespace crucible::quant {

// A linear layer of a graph: out = x @ W^T + bias, W [N, K] (the parameter, or its transpose).
struct LinearSite {
  size_t node = 0;
  std::string x;              // the [M, K] input value
  std::string weight;         // the parameter's name
  bool weight_is_kn = false;  // the parameter is stored [K, N] (GPT-2's Conv1D)
  std::string bias;           // "" when none
  std::string out;
  int64_t n = 0, k = 0;
};

std::vector<LinearSite> find_linear_layers(const graph::Graph& g);

struct QuantizedGraph {
  graph::Graph graph;
  graph::TensorMap weights;  // every param and buffer of `graph`, quantized ones included
  int layers = 0;            // linear layers rewritten
};

// `params` holds the graph's params and buffers by name (materialize_declarations). A layer
// the recipe cannot take (a group size that does not divide K, an N ATen's int4 kernel cannot
// pack) is an Input error naming the layer, its sizes and the fix.
QuantizedGraph apply_recipe(const Recipe& recipe, const graph::Graph& g,
                            const graph::TensorMap& params);

}  // namespace crucible::quant
