// The reverse-mode engine: nodes differentiated from the last back, gradients accumulated.
#include <algorithm>
#include <set>

#include "autograd/rule.h"
#include "crucible/autograd/autograd.h"
#include "crucible/cases/references.h"
#include "crucible/core/error.h"
#include "crucible/nn/functional.h"
#include "crucible/ops/op.h"

namespace crucible::autograd {

namespace detail {

const cases::Literal* RuleContext::literal(const std::string& name) const {
  const int idx = op.schema.find_argument(name);
  if (idx >= 0 && static_cast<size_t>(idx) < node.call.args.size())
    return &node.call.args[static_cast<size_t>(idx)];
  for (const auto& [k, lit] : node.call.kwargs)
    if (k == name) return &lit;
  return nullptr;
}

nn::Var RuleContext::tensor(const std::string& name) const {
  const cases::Literal* lit = literal(name);
  if (!lit || !cases::is_value_ref(*lit)) return nn::Var{};
  const std::string v = lit->text.substr(1);
  return nn::Var{v, t.graph().value(v).spec};
}

int64_t RuleContext::integer(const std::string& name, int64_t fallback) const {
  const cases::Literal* lit = literal(name);
  if (!lit || lit->kind == cases::LitKind::None) return fallback;
  if (lit->kind == cases::LitKind::Int || lit->kind == cases::LitKind::Bool)
    return lit->kind == cases::LitKind::Bool ? lit->b : lit->i;
  internal_error(node.op + ": argument " + name + " is not an integer");
}

double RuleContext::number(const std::string& name, double fallback) const {
  const cases::Literal* lit = literal(name);
  if (!lit || lit->kind == cases::LitKind::None) return fallback;
  if (lit->kind == cases::LitKind::Int) return static_cast<double>(lit->i);
  if (lit->kind == cases::LitKind::Float) return lit->f;
  if (lit->kind == cases::LitKind::Bool) return lit->b;
  internal_error(node.op + ": argument " + name + " is not a number");
}

std::vector<int64_t> RuleContext::ints(const std::string& name,
                                       std::vector<int64_t> fallback) const {
  const cases::Literal* lit = literal(name);
  if (!lit || lit->kind == cases::LitKind::None) return fallback;
  if (lit->kind == cases::LitKind::Int) return {lit->i};
  std::vector<int64_t> out;
  for (const cases::Literal& item : lit->items) out.push_back(item.i);
  return out;
}

nn::Arg RuleContext::arg(const std::string& name, nn::Arg fallback) const {
  const cases::Literal* lit = literal(name);
  return lit ? nn::Arg(*lit) : fallback;
}

nn::Var sum_to(nn::Tracer& t, const nn::Var& g, const Shape& shape) {
  if (g.shape() == shape) return g;
  const int64_t lead = g.dim() - static_cast<int64_t>(shape.size());
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < g.dim(); ++i) {
    if (i < lead || (shape[i - lead] == 1 && g.size(i) != 1)) dims.push_back(i);
  }
  nn::Var s = dims.empty() ? g : nn::F::sum(t, g, dims, true);
  return nn::F::view(t, s, shape);
}

}  // namespace detail

bool has_rule(const std::string& op) { return detail::rules().contains(op); }

std::vector<std::string> rule_ops() {
  std::vector<std::string> out;
  for (const auto& [op, rule] : detail::rules()) out.push_back(op);
  return out;
}

std::map<std::string, nn::Var> backward(nn::Tracer& t,
                                        const std::vector<std::pair<nn::Var, nn::Var>>& seeds,
                                        const std::vector<std::string>& wrt) {
  const graph::Graph& g = t.graph();
  const size_t n_nodes = g.nodes.size();
  // Values that depend on `wrt`: only these are differentiated.
  std::set<std::string> needed(wrt.begin(), wrt.end());
  for (size_t i = 0; i < n_nodes; ++i) {
    bool any = false;
    for (const cases::Literal& a : g.nodes[i].call.args) {
      if (cases::is_value_ref(a)) any |= needed.contains(a.text.substr(1));
      for (const cases::Literal& item : a.items)
        if (cases::is_value_ref(item)) any |= needed.contains(item.text.substr(1));
    }
    for (const auto& [k, a] : g.nodes[i].call.kwargs)
      if (cases::is_value_ref(a)) any |= needed.contains(a.text.substr(1));
    if (!any) continue;
    for (const std::string& o : g.nodes[i].outputs)
      if (o != "_") needed.insert(o);
  }
  std::map<std::string, nn::Var> grads;
  auto accumulate = [&](const std::string& name, const nn::Var& gv) {
    if (!gv.defined() || !needed.contains(name)) return;
    auto it = grads.find(name);
    if (it == grads.end()) {
      grads.emplace(name, gv);
    } else {
      it->second = nn::F::add(t, it->second, gv);
    }
  };
  for (const auto& [v, gv] : seeds) accumulate(v.name, gv);
  for (size_t i = n_nodes; i-- > 0;) {
    // Copies: the rule appends nodes, which may move the graph's storage.
    const graph::Node node = g.nodes[i];
    if (node.outputs.empty() || node.outputs[0] == "_") continue;
    const auto git = grads.find(node.outputs[0]);
    if (git == grads.end()) continue;
    const auto rit = detail::rules().find(node.op);
    if (rit == detail::rules().end())
      usage_error("autograd: " + node.op + " has no derivative rule (graph " + g.name +
                  ", value %" + node.outputs[0] + ")");
    const OpDef& op = OpRegistry::catalog().get(node.op);
    detail::RuleContext ctx{t, node, op, {}, git->second, needed};
    for (size_t k = 0; k < node.outputs.size(); ++k)
      ctx.outputs.push_back(node.outputs[k] == "_" ? nn::Var{}
                                                   : nn::Var{node.outputs[k], node.out_specs[k]});
    for (const auto& [name, gv] : rit->second(ctx)) accumulate(name, gv);
  }
  std::map<std::string, nn::Var> out;
  for (const std::string& w : wrt)
    if (auto it = grads.find(w); it != grads.end()) out.emplace(w, it->second);
  return out;
}

namespace {
std::vector<std::string> ops_between(const graph::Graph& g, size_t lo, size_t hi) {
  std::set<std::string> s;
  for (size_t i = lo; i < hi; ++i) s.insert(g.nodes[i].op);
  return {s.begin(), s.end()};
}
}  // namespace

TrainingOps make_training(nn::Tracer& t, const nn::Var& y) {
  TrainingOps ops;
  const size_t n_fwd = t.graph().nodes.size();
  ops.forward = ops_between(t.graph(), 0, n_fwd);
  graph::Initializer grad_init;
  grad_init.kind = graph::Initializer::Kind::Grad;
  const nn::Var tangent =
      t.declare(graph::DeclKind::Input, "tangent", y.shape(), y.dtype(), grad_init);
  const nn::Var loss = nn::F::sum(t, nn::F::mul(t, y, tangent));
  const size_t n_loss = t.graph().nodes.size();
  std::vector<std::string> params;
  for (const graph::Declaration& d : t.graph().decls)
    if (d.kind == graph::DeclKind::Param) params.push_back(d.name);
  // The upstream gradient of y is the tangent itself (d loss / d y).
  const std::map<std::string, nn::Var> grads = backward(t, {{y, tangent}}, params);
  ops.backward = ops_between(t.graph(), n_loss, t.graph().nodes.size());
  t.set_kind("training");
  t.loss(loss);
  for (const std::string& p : params) {
    auto it = grads.find(p);
    if (it == grads.end()) continue;
    // A gradient that is a view of another value is copied, so the output owns its storage.
    nn::Var gv = it->second;
    if (gv.name == p || !gv.spec.contiguous()) gv = nn::F::contiguous(t, gv);
    t.grad(gv, p);
  }
  std::set<std::string> bw(ops.backward.begin(), ops.backward.end());
  for (size_t i = n_loss; i < t.graph().nodes.size(); ++i) bw.insert(t.graph().nodes[i].op);
  ops.backward.assign(bw.begin(), bw.end());
  return ops;
}

}  // namespace crucible::autograd
