// The graph format's printer and the nodes as trace-grammar cases.
#include "crucible/graph/print.h"

#include "graph/node_call.h"

namespace crucible::graph {

namespace {

std::string print_arguments(const cases::CallSpec& call) {
  std::string s = "(";
  for (size_t i = 0; i < call.args.size(); ++i)
    s += (i ? ", " : "") + cases::print_literal(call.args[i]);
  for (size_t i = 0; i < call.kwargs.size(); ++i) {
    s += (i || !call.args.empty() ? ", " : "") + call.kwargs[i].first + "=" +
         cases::print_literal(call.kwargs[i].second);
  }
  return s + ")";
}

std::string_view output_keyword(GraphOutput::Kind k) {
  switch (k) {
    case GraphOutput::Kind::Output:
      return "output";
    case GraphOutput::Kind::Loss:
      return "loss";
    case GraphOutput::Kind::Grad:
      return "grad";
  }
  return "output";
}

}  // namespace

std::string print_node(const Graph& g, size_t node) {
  const Node& n = g.nodes.at(node);
  std::string s;
  for (size_t k = 0; k < n.outputs.size(); ++k) s += (k ? ", %" : "%") + n.outputs[k];
  s += " = " + n.op + print_arguments(n.call) + " -> ";
  if (n.out_specs.size() == 1) return s + n.out_specs[0].str();
  s += '(';
  for (size_t k = 0; k < n.out_specs.size(); ++k) s += (k ? ", " : "") + n.out_specs[k].str();
  return s + ')';
}

std::string print_graph(const Graph& g) {
  std::string s = "crucible-graph " + std::to_string(kFormatVersion) + "\n";
  s += "name " + g.name + "\n";
  s += "kind " + g.kind + "\n";
  if (g.source) {
    cases::Literal src = cases::Literal::string(*g.source);
    src.quote = '"';
    s += "source " + cases::print_literal(src) + "\n";
  }
  if (!g.decls.empty()) s += "\n";
  for (const Declaration& d : g.decls) {
    s += std::string(decl_kind_name(d.kind)) + " %" + d.name + " : " +
         cases::print_literal(cases::Literal::tensor_lit(d.type));
    if (d.init.written) s += " " + d.init.str();
    s += "\n";
  }
  if (!g.nodes.empty()) s += "\n";
  for (size_t i = 0; i < g.nodes.size(); ++i) s += print_node(g, i) + "\n";
  s += "\n";
  for (const GraphOutput& o : g.outputs) {
    s += std::string(output_keyword(o.kind)) + " %" + o.value;
    if (o.kind == GraphOutput::Kind::Grad) s += " " + o.param;
    s += "\n";
  }
  return s;
}

cases::CallSpec node_call_spec(const Graph& g, size_t node) {
  return detail::call_with_specs(g.nodes.at(node).call,
                                 [&](std::string_view name) { return g.value(name).spec; });
}

std::string node_as_case(const Graph& g, size_t node) {
  return "Operator: " + g.nodes.at(node).op + "\ncnt: 1, " +
         cases::print_call(node_call_spec(g, node)) + "\n";
}

}  // namespace crucible::graph
