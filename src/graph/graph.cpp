// The graph's data structure: value specs, initialisers and lookups.
#include "crucible/graph/graph.h"

#include <set>

#include "crucible/core/error.h"

namespace crucible::graph {

TensorSpec TensorSpec::of(const Tensor& t) {
  if (!t.defined()) return TensorSpec{.shape = {}, .strides = {}, .defined = false};
  return TensorSpec{.shape = t.shape(), .strides = t.strides(), .dtype = t.dtype()};
}

TensorSpec TensorSpec::from_literal(const cases::TensorLit& t) {
  return TensorSpec{.shape = t.shape,
                    .strides = t.strides ? *t.strides : contiguous_strides(t.shape),
                    .dtype = t.dtype};
}

cases::TensorLit TensorSpec::literal() const {
  cases::TensorLit t;
  t.shape = shape;
  t.dtype = dtype;
  if (!contiguous()) {
    t.strides = strides;
    t.stride_written = true;
  }
  return t;
}

std::string TensorSpec::str() const {
  return defined ? cases::print_literal(cases::Literal::tensor_lit(literal())) : "None";
}

std::string_view decl_kind_name(DeclKind k) {
  switch (k) {
    case DeclKind::Input:
      return "input";
    case DeclKind::Param:
      return "param";
    case DeclKind::Buffer:
      return "buffer";
    case DeclKind::Const:
      return "const";
  }
  return "?";
}

std::string_view initializer_name(Initializer::Kind k) {
  using K = Initializer::Kind;
  switch (k) {
    case K::Normal:
      return "normal";
    case K::Uniform:
      return "uniform";
    case K::Zeros:
      return "zeros";
    case K::Ones:
      return "ones";
    case K::Full:
      return "full";
    case K::Arange:
      return "arange";
    case K::Index:
      return "index";
    case K::Bool:
      return "bool";
    case K::Data:
      return "data";
    case K::Grad:
      return "grad";
  }
  return "?";
}

double Initializer::number(size_t i) const {
  if (i >= args.size()) internal_error("Initializer::number: no argument " + std::to_string(i));
  const cases::Literal& a = args[i];
  switch (a.kind) {
    case cases::LitKind::Int:
      return static_cast<double>(a.i);
    case cases::LitKind::Float:
      return a.f;
    case cases::LitKind::Bool:
      return a.b ? 1.0 : 0.0;
    default:
      internal_error("Initializer::number: argument " + std::to_string(i) + " is not a number");
  }
}

std::string Initializer::str() const {
  if (!written) return "";
  std::string s(initializer_name(kind));
  const bool has_args = kind == Kind::Normal || kind == Kind::Uniform || kind == Kind::Full ||
                        kind == Kind::Index || kind == Kind::Data;
  if (!has_args) return s;
  s += '(';
  for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + cases::print_literal(args[i]);
  return s + ')';
}

const ValueDef& Graph::value(std::string_view name) const {
  const auto it = values.find(name);
  if (it == values.end())
    internal_error("graph " + this->name + ": no value %" + std::string(name));
  return it->second;
}

const Declaration* Graph::find_decl(std::string_view name) const {
  const auto it = values.find(name);
  if (it == values.end() || it->second.decl < 0) return nullptr;
  return &decls[static_cast<size_t>(it->second.decl)];
}

std::vector<std::string> Graph::ops_used() const {
  std::set<std::string> ops;
  for (const Node& n : nodes) ops.insert(n.op);
  return {ops.begin(), ops.end()};
}

}  // namespace crucible::graph
