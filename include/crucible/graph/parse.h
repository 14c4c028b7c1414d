// Reading the graph format (docs/graphs.md). Every node is checked with its op's meta function
// as it is read, so a parsed graph knows every value's shape, strides and dtype. Anything
// malformed is an Input error naming file:line:column (an unknown op or initialiser, a value used
// before its definition or defined twice, the wrong number of output names, another format
// version, a call the op's meta function refuses, an annotation `-> T(...)` the meta layer
// disagrees with).
#pragma once

#include <string>
#include <string_view>

#include "crucible/graph/graph.h"

namespace crucible::graph {

// Parses a graph's text; `file` names it in error messages.
Graph parse_graph(std::string_view text, const std::string& file = "<graph>");
// Reads and parses a file (an unreadable file is an Input error naming it).
Graph read_graph(const std::string& path);

}  // namespace crucible::graph
