// The tracer: calls checked by the meta layer and recorded as graph nodes.
#include "crucible/nn/tracer.h"

#include <functional>
#include <set>

#include "crucible/cases/references.h"
#include "crucible/core/error.h"
#include "crucible/graph/parse.h"
#include "crucible/graph/print.h"
#include "crucible/ops/materialize.h"
#include "crucible/ops/op.h"

namespace crucible::nn {

using cases::Literal;
using cases::LitKind;

int64_t Var::size(int64_t d) const {
  const int64_t n = dim();
  if (d < 0) d += n;
  if (d < 0 || d >= n)
    internal_error("Var::size: dimension " + std::to_string(d) + " of a " + std::to_string(n) +
                   "-d value %" + name);
  return spec.shape[d];
}

Arg::Arg(const Var& v) : lit(v.defined() ? Literal::symbol("%" + v.name) : Literal::none()) {}

Arg::Arg(const std::vector<int64_t>& v) {
  std::vector<Literal> items;
  for (int64_t x : v) items.push_back(Literal::integer(x));
  lit = Literal::list(std::move(items));
}

Arg::Arg(const std::vector<bool>& v) {
  std::vector<Literal> items;
  for (bool x : v) items.push_back(Literal::boolean(x));
  lit = Literal::list(std::move(items));
}

Arg::Arg(const std::vector<Var>& v) {
  std::vector<Literal> items;
  for (const Var& x : v) items.push_back(Arg(x).lit);
  lit = Literal::list(std::move(items));
}

std::string base_name(const std::string& op) {
  std::string s = op.rfind("aten.", 0) == 0 ? op.substr(5) : op;
  if (const auto dot = s.find('.'); dot != std::string::npos) s.resize(dot);
  while (!s.empty() && s.front() == '_') s.erase(s.begin());
  return s.empty() ? "v" : s;
}

Tracer::Tracer(std::string name, std::string kind, std::string source) {
  graph_.name = std::move(name);
  graph_.kind = std::move(kind);
  graph_.file = "<" + graph_.name + ">";
  if (!source.empty()) graph_.source = std::move(source);
}

std::string Tracer::fresh(const std::string& stem) {
  std::string name = stem;
  int& n = counters_[stem];
  while (graph_.values.contains(name) || name == "_") name = stem + "_" + std::to_string(++n);
  return name;
}

void Tracer::define(const std::string& name, graph::ValueDef def) {
  graph_.values.emplace(name, std::move(def));
}

Var Tracer::declare(graph::DeclKind kind, const std::string& name, const Shape& shape, DType dtype,
                    graph::Initializer init) {
  if (const graph::Declaration* d = graph_.find_decl(name)) {
    if (d->kind != kind || d->spec.shape != shape || d->spec.dtype != dtype)
      usage_error("graph " + graph_.name + ": %" + name + " is declared twice, as " +
                  d->spec.str() + " and as " +
                  graph::TensorSpec{shape, contiguous_strides(shape), dtype}.str());
    return Var{name, d->spec};
  }
  if (graph_.values.contains(name))
    usage_error("graph " + graph_.name + ": the name %" + name + " is already a node's output");
  graph::Declaration d;
  d.kind = kind;
  d.name = name;
  d.spec = graph::TensorSpec{shape, contiguous_strides(shape), dtype};
  d.type = d.spec.literal();
  d.init = std::move(init);
  graph_.decls.push_back(d);
  graph::ValueDef def;
  def.decl = static_cast<int>(graph_.decls.size()) - 1;
  def.spec = d.spec;
  define(name, def);
  return Var{name, d.spec};
}

std::optional<Var> Tracer::find_decl(const std::string& name) const {
  const graph::Declaration* d = graph_.find_decl(name);
  if (!d) return std::nullopt;
  return Var{d->name, d->spec};
}

namespace {

// The literal with every value reference replaced by its spec's tensor literal.
Literal with_specs(const Literal& lit, const graph::Graph& g) {
  if (cases::is_value_ref(lit)) {
    const graph::TensorSpec& s = g.value(std::string_view(lit.text).substr(1)).spec;
    return s.defined ? Literal::tensor_lit(s.literal()) : Literal::none();
  }
  if (lit.kind != LitKind::List && lit.kind != LitKind::Tuple) return lit;
  Literal out = lit;
  for (Literal& item : out.items) item = with_specs(item, g);
  return out;
}

// Ops whose output takes its inputs' layout, and views (which inherit it).
bool elementwise(const std::string& op) {
  static const std::set<std::string> ops = {"aten.add.Tensor",
                                            "aten.sub.Tensor",
                                            "aten.mul.Tensor",
                                            "aten.div.Tensor",
                                            "aten.add.Scalar",
                                            "aten.mul.Scalar",
                                            "aten.div.Scalar",
                                            "aten.neg.default",
                                            "aten.relu.default",
                                            "aten.gelu.default",
                                            "aten.silu.default",
                                            "aten.tanh.default",
                                            "aten.hardtanh.default",
                                            "aten.rsqrt.default",
                                            "aten.pow.Tensor_Scalar",
                                            "aten.threshold_backward.default",
                                            "aten.gelu_backward.default",
                                            "aten.silu_backward.default",
                                            "aten.tanh_backward.default",
                                            "aten.hardtanh_backward.default",
                                            "aten._softmax.default",
                                            "aten._softmax_backward_data.default"};
  return ops.contains(op);
}

bool view_op(const std::string& op) {
  static const std::set<std::string> ops = {
      "aten.view.default",   "aten.permute.default", "aten.transpose.int", "aten.t.default",
      "aten.expand.default", "aten.slice.Tensor",    "aten.select.int"};
  return ops.contains(op);
}

}  // namespace

std::vector<Var> Tracer::call(const std::string& op_name, const std::vector<Arg>& args,
                              const Kwargs& kwargs, const std::string& stem) {
  const OpDef& op = OpRegistry::catalog().get(op_name);
  graph::Node n;
  n.op = op.name;
  for (const Arg& a : args) n.call.args.push_back(a.lit);
  for (const auto& [k, a] : kwargs) n.call.kwargs.emplace_back(k, a.lit);
  cases::CallSpec specs;
  for (const Literal& a : n.call.args) specs.args.push_back(with_specs(a, graph_));
  for (const auto& [k, a] : n.call.kwargs) specs.kwargs.emplace_back(k, with_specs(a, graph_));
  std::vector<Tensor> outs;
  try {
    const Values bound = materialize_meta(op, specs);
    for (const Value& v : op.run_meta(bound)) {
      if (v.kind() == ValueKind::Tensor) {
        outs.push_back(v.tensor());
      } else if (v.kind() == ValueKind::None) {
        outs.emplace_back();
      } else if (v.kind() == ValueKind::TensorList || v.kind() == ValueKind::OptTensorList) {
        for (const Tensor& t : v.tensors()) outs.push_back(t);
      } else {
        op_error("it returns a " + std::string(value_kind_name(v.kind())));
      }
    }
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::Internal) throw;
    throw Error(ErrorKind::OpError, "graph " + graph_.name + ": " + op.name +
                                        cases::print_call(specs) + " is refused: " + e.what());
  }
  // Whether the outputs' layout may differ between backends (see layout_varies).
  bool varies = false;
  if (elementwise(op.name) || view_op(op.name)) {
    std::function<void(const Literal&)> visit = [&](const Literal& l) {
      if (cases::is_value_ref(l)) {
        const std::string name = l.text.substr(1);
        varies |= varying_.contains(name);
        if (!view_op(op.name)) varies |= !graph_.value(name).spec.contiguous();
      }
      for (const Literal& item : l.items) visit(item);
    };
    for (const Literal& a : n.call.args) visit(a);
    for (const auto& kv : n.call.kwargs) visit(kv.second);
  }
  std::vector<Var> result;
  const std::string base = stem.empty() ? base_name(op.name) : stem;
  for (size_t k = 0; k < outs.size(); ++k) {
    graph::TensorSpec spec = graph::TensorSpec::of(outs[k]);
    if (!spec.defined) {
      n.outputs.push_back("_");
      n.out_specs.push_back(spec);
      result.push_back(Var{"", spec});
      continue;
    }
    const std::string name = fresh(base);
    n.outputs.push_back(name);
    n.out_specs.push_back(spec);
    graph::ValueDef def;
    def.node = static_cast<int>(graph_.nodes.size());
    def.output = static_cast<int>(k);
    def.spec = spec;
    define(name, def);
    if (varies) varying_.insert(name);
    result.push_back(Var{name, spec});
  }
  graph_.nodes.push_back(std::move(n));
  return result;
}

Var Tracer::call1(const std::string& op, const std::vector<Arg>& args, const Kwargs& kwargs,
                  const std::string& stem) {
  std::vector<Var> out = call(op, args, kwargs, stem);
  if (out.empty()) internal_error("Tracer::call1: " + op + " returned nothing");
  return out[0];
}

void Tracer::output(const Var& v) {
  graph_.outputs.push_back(graph::GraphOutput{graph::GraphOutput::Kind::Output, v.name, "", 0});
}

void Tracer::loss(const Var& v) {
  graph_.outputs.push_back(graph::GraphOutput{graph::GraphOutput::Kind::Loss, v.name, "", 0});
}

void Tracer::grad(const Var& v, const std::string& param) {
  graph_.outputs.push_back(graph::GraphOutput{graph::GraphOutput::Kind::Grad, v.name, param, 0});
}

graph::Graph Tracer::finish() const {
  if (graph_.outputs.empty()) usage_error("graph " + graph_.name + " has no output");
  graph::Graph g = graph::parse_graph(graph::print_graph(graph_), graph_.name + ".graph");
  return g;
}

}  // namespace crucible::nn
