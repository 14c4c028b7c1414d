// A node's real inputs (see crucible/graph/node_inputs.h).
#include "crucible/graph/node_inputs.h"

#include <string>

#include "crucible/core/error.h"
#include "graph/node_call.h"

namespace crucible::graph {

Values node_inputs(const Graph& g, size_t node, const TensorMap& values) {
  const Node& n = g.nodes.at(node);
  const OpDef& op = OpRegistry::catalog().get(n.op);
  return detail::bind_node(op, n.call, [&](std::string_view name) -> const Tensor& {
    auto it = values.find(name);
    if (it == values.end())
      internal_error("node_inputs: no value %" + std::string(name) + " for line " +
                     std::to_string(n.line));
    return it->second;
  });
}

}  // namespace crucible::graph
