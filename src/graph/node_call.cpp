// Binding a node's call: references resolved, every other argument converted as a case's is.
#include "graph/node_call.h"

#include <utility>

#include "crucible/core/error.h"
#include "crucible/ops/materialize.h"

namespace crucible::graph::detail {

using cases::Literal;
using cases::LitKind;

namespace {

std::string_view ref_name(const Literal& lit) { return std::string_view(lit.text).substr(1); }

Literal with_specs(const Literal& lit,
                   const std::function<TensorSpec(std::string_view name)>& spec_of) {
  if (cases::is_value_ref(lit)) {
    const TensorSpec spec = spec_of(ref_name(lit));
    return spec.defined ? Literal::tensor_lit(spec.literal()) : Literal::none();
  }
  if (lit.kind != LitKind::List && lit.kind != LitKind::Tuple) return lit;
  Literal out = lit;
  for (Literal& item : out.items) item = with_specs(item, spec_of);
  return out;
}

// Puts the referenced tensors into the bound value `v` of literal `lit`.
void substitute(const Literal& lit, Value& v, const ValueLookup& value_of) {
  if (cases::is_value_ref(lit)) {
    const Tensor& t = value_of(ref_name(lit));
    v = t.defined() ? Value(t) : Value();
    return;
  }
  if (lit.kind != LitKind::List && lit.kind != LitKind::Tuple) return;
  bool any = false;
  for (const Literal& item : lit.items) any |= cases::is_value_ref(item);
  if (!any) return;
  if (v.kind() != ValueKind::TensorList && v.kind() != ValueKind::OptTensorList) {
    op_error("a list of value references is bound to an argument of kind " +
             std::string(value_kind_name(v.kind())));
  }
  std::vector<Tensor> ts = v.tensors();
  if (ts.size() != lit.items.size()) internal_error("bind_node: a tensor list changed length");
  for (size_t j = 0; j < lit.items.size(); ++j) {
    if (cases::is_value_ref(lit.items[j])) ts[j] = value_of(ref_name(lit.items[j]));
  }
  v = Value::tensor_list(std::move(ts), v.kind() == ValueKind::OptTensorList);
}

void visit(const Literal& lit, const std::function<void(const std::string& name)>& fn) {
  if (cases::is_value_ref(lit)) {
    fn(std::string(ref_name(lit)));
    return;
  }
  for (const Literal& item : lit.items) visit(item, fn);
}

}  // namespace

cases::CallSpec call_with_specs(const cases::CallSpec& call,
                                const std::function<TensorSpec(std::string_view name)>& spec_of) {
  cases::CallSpec out;
  for (const Literal& a : call.args) out.args.push_back(with_specs(a, spec_of));
  for (const auto& [name, lit] : call.kwargs)
    out.kwargs.emplace_back(name, with_specs(lit, spec_of));
  return out;
}

Values bind_node(const OpDef& op, const cases::CallSpec& call, const ValueLookup& value_of) {
  // Meta tensors stand where the references go; then the real tensors replace them.
  const cases::CallSpec specs =
      call_with_specs(call, [&](std::string_view name) { return TensorSpec::of(value_of(name)); });
  Values bound = materialize_meta(op, specs);
  for (size_t i = 0; i < call.args.size() && i < bound.size(); ++i)
    substitute(call.args[i], bound[i], value_of);
  for (const auto& [name, lit] : call.kwargs) {
    const int idx = op.schema.find_argument(name);
    if (idx >= 0 && static_cast<size_t>(idx) < bound.size()) substitute(lit, bound[idx], value_of);
  }
  return bound;
}

std::vector<Tensor> flatten_returns(const Values& returns, const std::string& op) {
  std::vector<Tensor> out;
  for (const Value& v : returns) {
    if (v.kind() == ValueKind::Tensor) {
      out.push_back(v.tensor());
    } else if (v.kind() == ValueKind::None) {
      out.emplace_back();
    } else if (v.kind() == ValueKind::TensorList || v.kind() == ValueKind::OptTensorList) {
      for (const Tensor& t : v.tensors()) out.push_back(t);
    } else {
      op_error(op + " returns a " + value_kind_name(v.kind()) +
               "; the values of a graph are tensors");
    }
  }
  return out;
}

void for_each_reference(const cases::CallSpec& call,
                        const std::function<void(const std::string& name)>& fn) {
  for (const Literal& a : call.args) visit(a, fn);
  for (const auto& kw : call.kwargs) visit(kw.second, fn);
}

}  // namespace crucible::graph::detail
