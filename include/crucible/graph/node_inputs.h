// A node's real inputs and references, and the graph files a path names. A node's real inputs:
// its bound arguments on the values of a run (an executor run that kept
// every value), so the node can be run alone on them (the op-by-op flow).
#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "crucible/core/value.h"
#include "crucible/graph/graph.h"
#include "crucible/graph/values.h"

namespace crucible::graph {

// The bound arguments of node `node` (schema order, defaults filled), each reference being the
// tensor `values` holds under its name (an Internal error when it holds none).
Values node_inputs(const Graph& g, size_t node, const TensorMap& values);

// The names of the values node `node` reads (its %references, lists included).
std::set<std::string> node_references(const Graph& g, size_t node);

// The graph files `path` names: the file itself, or every *.graph under the folder, sorted.
// A path that is neither, or a folder without one, is an Input error naming it.
std::vector<std::string> graph_files(const std::string& path);

}  // namespace crucible::graph
