// A node's real inputs (see crucible/graph/node_inputs.h).
#include "crucible/graph/node_inputs.h"

#include <algorithm>
#include <filesystem>
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

std::set<std::string> node_references(const Graph& g, size_t node) {
  std::set<std::string> out;
  detail::for_each_reference(g.nodes.at(node).call,
                             [&](const std::string& name) { out.insert(name); });
  return out;
}

std::vector<std::string> graph_files(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return {path};
  if (!fs::is_directory(path, ec)) input_error(path, "no such graph file or folder");
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(path, ec))
    if (e.is_regular_file() && e.path().extension() == ".graph") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  if (out.empty()) input_error(path, "holds no .graph file");
  return out;
}

}  // namespace crucible::graph
