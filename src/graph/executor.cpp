// The graph executor: declarations materialised, then each node bound and run on the backend.
#include "crucible/graph/executor.h"

#include <algorithm>
#include <map>
#include <set>

#include "crucible/core/error.h"
#include "crucible/core/rng.h"
#include "crucible/graph/print.h"
#include "graph/node_call.h"

namespace crucible::graph {

namespace {

using cases::Literal;
using cases::LitKind;

bool promotable(DType t) { return is_floating(t); }

Literal golden_literal(const Literal& l) {
  if (l.kind == LitKind::DType && promotable(l.dtype)) return Literal::dtype_lit(DType::Float64);
  if (l.kind != LitKind::List && l.kind != LitKind::Tuple) return l;
  Literal out = l;
  for (Literal& item : out.items) item = golden_literal(item);
  return out;
}

// The node's call in the f64 mode: floating dtype arguments are f64; half_to_float is False.
cases::CallSpec golden_call(const OpDef& op, const cases::CallSpec& call) {
  cases::CallSpec out = call;
  auto fix = [&](const std::string& name, Literal& l) {
    if (name == "half_to_float" && l.kind == LitKind::Bool) l = Literal::boolean(false);
    l = golden_literal(l);
  };
  for (size_t i = 0; i < out.args.size(); ++i)
    fix(i < op.schema.arguments.size() ? op.schema.arguments[i].name : "", out.args[i]);
  for (auto& [name, l] : out.kwargs) fix(name, l);
  return out;
}

TensorSpec golden_spec(TensorSpec s) {
  if (s.defined && promotable(s.dtype)) s.dtype = DType::Float64;
  return s;
}

std::string node_place(const Graph& g, size_t i) {
  return g.file + ":" + std::to_string(g.nodes[i].line) + ": " + print_node(g, i);
}

// A host copy with the value's own layout (a view keeps its strides).
Tensor layout_copy(const Tensor& t) { return deep_copy(Values{Value(t)})[0].tensor(); }

Tensor host_copy(Backend& b, const Tensor& t) {
  if (!t.defined()) return t;
  Tensor h = b.to_host(t);
  return h.shares_storage(t) ? layout_copy(h) : h;
}

// The unit roundoff of a floating dtype (half its machine epsilon).
double unit_roundoff(DType t) {
  switch (t) {
    case DType::Float64:
      return 0x1p-53;
    case DType::Float32:
      return 0x1p-24;
    case DType::Float16:
      return 0x1p-11;
    case DType::BFloat16:
      return 0x1p-8;
    default:
      return 0x1p-4;  // fp8 (e4m3; e5m2 rounds coarser still)
  }
}

// Multiplies every element of host tensor `t` by 1 + d, d uniform in +-ulps unit roundoffs.
void perturb(Tensor& t, double ulps, Rng& rng) {
  if (!t.defined() || !is_floating(t.dtype())) return;
  const double scale = ulps * unit_roundoff(t.dtype());
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double d = (2.0 * rng.uniform() - 1.0) * scale;
    t.set(i, t.get(i) * (1.0 + d));
  }
}

// Perturbs the outputs of an op that accumulates (one whose catalog tolerance widens with its
// reduction length: sums, products, convolutions, norms, softmax, ...) by as much as an honest
// kernel's accumulation strays: `ulps` times that widening (about the square root of the
// length), in units of rounding. An op that rounds once (pointwise) or not at all (copies,
// views, indexing, comparisons) is left exact, as is an output that shares storage with an
// argument (a view or an in-place result), whose perturbation would change the argument too.
void perturb_outputs(Backend& backend, const OpDef& op, const Values& args,
                     std::vector<Tensor>& outs, double ulps, Rng& rng) {
  if (!op.compare.tol_scale || op.compare.values_unspecified || op.compare.random) return;
  const double scale = ulps * std::max(1.0, op.compare.tol_scale(args));
  for (Tensor& out : outs) {
    if (!out.defined() || !is_floating(out.dtype())) continue;
    bool aliases = false;
    for (const Value& a : args) {
      if (a.is_tensor()) aliases = aliases || out.shares_storage(a.tensor());
      if (a.kind() == ValueKind::TensorList || a.kind() == ValueKind::OptTensorList)
        for (const Tensor& t : a.tensors()) aliases = aliases || out.shares_storage(t);
    }
    if (aliases) continue;
    Tensor h = backend.to_host(out);
    perturb(h, scale, rng);
    if (!h.shares_storage(out)) out = backend.to_device(h);
  }
}

}  // namespace

std::vector<std::string> missing_ops(const Graph& g, const Backend& backend, bool golden) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (seen.contains(n.op)) continue;
    const OpDef& op = OpRegistry::catalog().get(n.op);
    const std::string line = g.file + ":" + std::to_string(n.line);
    if (!backend.has_op(op)) {
      seen.insert(n.op);
      out.push_back(n.op + ": " + backend.name() + " does not implement it (first needed at " +
                    line + ")");
      continue;
    }
    // A backend from outside answers `supports` with its own code, in a candidate process: it
    // is asked for each call as the graph runs, not here.
    if (backend.untrusted()) continue;
    // The call as the node makes it, on meta tensors of the values' specs.
    std::map<std::string, Tensor, std::less<>> metas;
    detail::for_each_reference(n.call, [&](const std::string& name) {
      TensorSpec s = g.value(name).spec;
      if (golden) s = golden_spec(s);
      metas[name] = s.defined ? Tensor::meta_strided(s.shape, s.strides, s.dtype) : Tensor();
    });
    std::string why;
    bool ok = true;
    try {
      const Values args = detail::bind_node(
          op, golden ? golden_call(op, n.call) : n.call,
          [&](std::string_view name) -> const Tensor& { return metas.find(name)->second; });
      ok = backend.supports(op, args, &why);
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::Internal) throw;
      ok = false;
      why = e.what();
    }
    if (!ok) {
      seen.insert(n.op);
      out.push_back(n.op + ": " + (why.empty() ? "not supported" : why) + " (at " + line + ")");
    }
  }
  return out;
}

namespace {

void require_every_op(const Graph& g, const Backend& backend, bool golden) {
  const std::vector<std::string> missing = missing_ops(g, backend, golden);
  if (!missing.empty()) {
    std::string s;
    for (const std::string& m : missing) s += (s.empty() ? "" : "; ") + m;
    unsupported(g.file + ": backend " + backend.name() + " cannot run " +
                std::to_string(missing.size()) + " op(s) of graph " + g.name + ": " + s);
  }
}

}  // namespace

TensorMap upload_declarations(const Graph& g, Backend& backend, const ExecOptions& options) {
  if (options.golden || options.perturb_ulps > 0)
    internal_error("graph executor: resident declarations are for plain runs");
  require_every_op(g, backend, false);
  TensorMap out;
  for (auto& [name, t] :
       materialize_declarations(g, options.seed, options.weights, options.weights_file,
                                options.inputs, options.inputs_file))
    out.emplace(name, backend.to_device(t));
  backend.synchronize();
  return out;
}

ExecResult execute(const Graph& g, Backend& backend, const ExecOptions& options) {
  if (options.resident && (options.golden || options.perturb_ulps > 0))
    internal_error("graph executor: resident declarations are for plain runs");
  if (!options.resident) require_every_op(g, backend, options.golden);
  ExecResult result;
  // The node after which each value is no longer needed (graph outputs: never dropped).
  std::map<std::string, size_t, std::less<>> last_use;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    detail::for_each_reference(g.nodes[i].call,
                               [&](const std::string& name) { last_use[name] = i; });
  std::set<std::string, std::less<>> returned;
  for (const GraphOutput& o : g.outputs) returned.insert(o.value);

  if (options.perturb_ulps > 0 && options.golden)
    internal_error("graph executor: the f64 run is not perturbed");
  const bool perturbing = options.perturb_ulps > 0;
  Rng noise(options.perturb_seed, hash_str("graph perturbation"));
  backend.manual_seed(options.seed);  // random ops (dropout) draw from the run's seed
  std::map<std::string, Tensor, std::less<>> live;
  if (options.resident) {
    for (const Declaration& d : g.decls) {
      const auto it = options.resident->find(d.name);
      if (it == options.resident->end())
        internal_error("graph executor: no resident value for declaration %" + d.name);
      live.emplace(d.name, it->second);
    }
  }
  for (auto& [name, t] :
       options.resident
           ? TensorMap{}
           : materialize_declarations(g, options.seed, options.weights, options.weights_file,
                                      options.inputs, options.inputs_file)) {
    Tensor v = options.golden && promotable(t.dtype()) ? t.to(DType::Float64) : t;
    // Inputs and parameters carry the rounding of whatever made them; constants and buffers
    // (masks, position tables, running statistics) are taken as exact.
    const Declaration* d = g.find_decl(name);
    if (perturbing && is_floating(v.dtype()) && d &&
        (d->kind == DeclKind::Input || d->kind == DeclKind::Param)) {
      v = v.clone();  // never the caller's weights
      perturb(v, options.perturb_ulps, noise);
    }
    if (options.keep_values) result.values.emplace(name, layout_copy(v));
    live.emplace(name, backend.to_device(v));
  }
  const auto lookup = [&](std::string_view name) -> const Tensor& {
    const auto it = live.find(name);
    if (it == live.end())
      internal_error("graph executor: value %" + std::string(name) + " is gone");
    return it->second;
  };
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    const OpDef& op = OpRegistry::catalog().get(n.op);
    std::vector<Tensor> outs;
    try {
      const Values args =
          detail::bind_node(op, options.golden ? golden_call(op, n.call) : n.call, lookup);
      std::string why;
      if (!backend.supports(op, args, &why)) unsupported(why);
      outs = detail::flatten_returns(backend.run(op, args), n.op);
      if (perturbing) perturb_outputs(backend, op, args, outs, options.perturb_ulps, noise);
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::Internal) throw;
      throw Error(e.kind(), node_place(g, i) + ": " + e.what());
    }
    if (outs.size() != n.outputs.size()) {
      throw Error(ErrorKind::OpError,
                  node_place(g, i) + ": the backend returned " + std::to_string(outs.size()) +
                      " tensor(s), the node names " + std::to_string(n.outputs.size()));
    }
    for (size_t k = 0; k < outs.size(); ++k) {
      if (n.outputs[k] == "_") continue;
      if (options.keep_values) result.values[n.outputs[k]] = host_copy(backend, outs[k]);
      live[n.outputs[k]] = outs[k];
    }
    // Values no later node reads are dropped (their storage lives on while a view holds it).
    detail::for_each_reference(n.call, [&](const std::string& name) {
      if (last_use[name] == i && !returned.contains(name)) live.erase(name);
    });
  }
  for (const GraphOutput& o : g.outputs) {
    const Tensor& t = lookup(o.value);
    result.outputs.push_back(t.defined() && !options.device_outputs ? backend.to_host(t) : t);
  }
  return result;
}

ExecResult execute(const Graph& g, const std::string& backend, const ExecOptions& options) {
  if (options.golden && backend != "ref")
    usage_error("the f64 (golden) run of a graph is on ref, not " + backend);
  const std::unique_ptr<Backend> b = BackendRegistry::instance().create(backend);
  return execute(g, *b, options);
}

}  // namespace crucible::graph
