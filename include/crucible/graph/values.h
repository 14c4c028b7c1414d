// The values a graph starts from: each declaration materialised from its initialiser and the
// seed, deterministically and per name (the value's name hashed with the seed: adding a
// parameter does not change the others), or parameters and buffers loaded by name.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "crucible/core/tensor.h"
#include "crucible/graph/graph.h"

namespace crucible::graph {

using TensorMap = std::map<std::string, Tensor, std::less<>>;

// The declaration's value (host memory, the declared shape, strides and dtype).
Tensor materialize_declaration(const Declaration& d, uint64_t seed);

// Checks that `weights` holds every param and buffer of `g` with the declared dtype and shape;
// an Input error naming `weights_file` and the tensor otherwise.
void check_weights(const Graph& g, const TensorMap& weights, const std::string& weights_file);

// Checks that each tensor of `inputs` named as an input of `g` has the declared dtype and shape
// (an Input error naming `inputs_file` and the tensor otherwise); others are ignored.
void check_inputs(const Graph& g, const TensorMap& inputs, const std::string& inputs_file);

// Every declaration's value by name. With `weights`, each param and buffer is the tensor of
// that name there (converted to the declared strides); one that `weights` lacks, or whose dtype
// or shape differs from the declaration, is an Input error naming `weights_file` and the tensor.
// With `inputs`, each input found there by name is that tensor (recorded inputs of a model);
// the others come from their initialisers.
TensorMap materialize_declarations(const Graph& g, uint64_t seed,
                                   const TensorMap* weights = nullptr,
                                   const std::string& weights_file = "",
                                   const TensorMap* inputs = nullptr,
                                   const std::string& inputs_file = "");

}  // namespace crucible::graph
