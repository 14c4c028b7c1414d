// Capturing a model as a graph: functionals (functional.h) call catalog ops through a Tracer,
// which checks each call with the op's meta function (so a call that does not chain is refused
// where it is made, naming the op) and records it as a node of a `crucible-graph 1` graph
// (crucible/graph). The captured graph is the model: it prints, parses and runs on any backend
// through the graph executor, and autograd (crucible/autograd) extends it with its backward.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "crucible/cases/literal.h"
#include "crucible/graph/graph.h"

namespace crucible::nn {

// A value of the graph being captured: its name (without '%') and spec.
struct Var {
  std::string name;
  graph::TensorSpec spec;

  bool defined() const { return !name.empty() && spec.defined; }
  const Shape& shape() const { return spec.shape; }
  DType dtype() const { return spec.dtype; }
  int64_t dim() const { return static_cast<int64_t>(spec.shape.size()); }
  int64_t size(int64_t d) const;  // negative counts from the end
  int64_t numel() const { return numel_of(spec.shape); }
};

// One argument of a call: a value reference (%name; an undefined Var is None) or a literal.
struct Arg {
  cases::Literal lit;
  Arg(const Var& v);  // NOLINT: implicit, as a tensor argument reads
  Arg(int v) : lit(cases::Literal::integer(v)) {}
  Arg(int64_t v) : lit(cases::Literal::integer(v)) {}
  Arg(double v) : lit(cases::Literal::floating(v)) {}
  Arg(bool v) : lit(cases::Literal::boolean(v)) {}
  Arg(const char* s) : lit(cases::Literal::string(s)) {}
  Arg(const std::string& s) : lit(cases::Literal::string(s)) {}
  Arg(DType t) : lit(cases::Literal::dtype_lit(t)) {}
  Arg(const std::vector<int64_t>& v);
  Arg(const std::vector<bool>& v);
  Arg(const std::vector<Var>& v);
  explicit Arg(cases::Literal l) : lit(std::move(l)) {}
  static Arg none() { return Arg(cases::Literal::none()); }
};

using Kwargs = std::vector<std::pair<std::string, Arg>>;

class Tracer {
 public:
  explicit Tracer(std::string name, std::string kind = "forward", std::string source = "");

  // Declares an input, parameter, buffer or constant; declaring a name twice returns the first
  // declaration when the shape and dtype agree (a tied parameter used twice) and is a Usage error
  // otherwise.
  Var declare(graph::DeclKind kind, const std::string& name, const Shape& shape, DType dtype,
              graph::Initializer init);
  // The declared value `name`, if any.
  std::optional<Var> find_decl(const std::string& name) const;

  // Records `op(args, kwargs)` after its meta function accepted it; one Var per output (an
  // output the op leaves out is an undefined Var). `stem` names the outputs (default: the op's
  // base name). A refused call is an OpError naming the op and the call.
  std::vector<Var> call(const std::string& op, const std::vector<Arg>& args,
                        const Kwargs& kwargs = {}, const std::string& stem = "");
  Var call1(const std::string& op, const std::vector<Arg>& args, const Kwargs& kwargs = {},
            const std::string& stem = "");

  // Whether a backend may give `v` another layout than its spec's contiguous one: an
  // elementwise op's output follows its inputs' layout (TensorIterator's rule), which backends
  // choose differently for permuted inputs, and a view of such a value inherits it. `view` then
  // copies first, as reshape would.
  bool layout_varies(const Var& v) const { return varying_.contains(v.name); }

  void output(const Var& v);
  void loss(const Var& v);
  void grad(const Var& v, const std::string& param);

  const graph::Graph& graph() const { return graph_; }
  void set_kind(const std::string& kind) { graph_.kind = kind; }
  // The captured graph, printed and parsed back: every line number is the printed text's and
  // the round trip is checked (parse_graph refuses what it would refuse in a file).
  graph::Graph finish() const;

 private:
  std::string fresh(const std::string& stem);
  void define(const std::string& name, graph::ValueDef def);

  graph::Graph graph_;
  std::map<std::string, int> counters_;
  std::set<std::string> varying_;
};

// The base name of an overload: "aten.mm.default" -> "mm".
std::string base_name(const std::string& op);

}  // namespace crucible::nn
