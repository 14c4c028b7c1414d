// Writing graphs: the canonical text of the format (docs/graphs.md), and any node as a case of
// the trace grammar.
#pragma once

#include <cstddef>
#include <string>

#include "crucible/cases/literal.h"
#include "crucible/graph/graph.h"

namespace crucible::graph {

// The canonical text: header, name, kind, source, the declarations, the nodes (full overload
// names, each annotated with its outputs' specs), the outputs; one space between tokens, no
// comments. print_graph(parse_graph(print_graph(g))) == print_graph(g).
std::string print_graph(const Graph& g);

// One node's statement as print_graph writes it ("%y = aten.relu.default(%x) -> T([2], f32)").
std::string print_node(const Graph& g, size_t node);

// Node `node`'s call with every reference replaced by its value's spec (T([shape], dtype), with
// stride= when not contiguous; None for an output an op left out): a case of the trace grammar.
cases::CallSpec node_call_spec(const Graph& g, size_t node);
// The node as a trace-grammar block: "Operator: aten.X.Y\ncnt: 1, ((...), {...})\n".
std::string node_as_case(const Graph& g, size_t node);

}  // namespace crucible::graph
