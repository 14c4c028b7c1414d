// A node's real inputs: its bound arguments on the values of a run (an executor run that kept
// every value), so the node can be run alone on them (the op-by-op flow).
#pragma once

#include <cstddef>

#include "crucible/core/value.h"
#include "crucible/graph/graph.h"
#include "crucible/graph/values.h"

namespace crucible::graph {

// The bound arguments of node `node` (schema order, defaults filled), each reference being the
// tensor `values` holds under its name (an Internal error when it holds none).
Values node_inputs(const Graph& g, size_t node, const TensorMap& values);

}  // namespace crucible::graph
