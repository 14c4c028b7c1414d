// Schema types and their printing, equality and queries (op name, mutated arguments, ...).
#include <array>
#include <cmath>
#include <string>
#include <utility>

#include "crucible/schema/schema.h"

namespace crucible {
namespace {

// The type as written, with the alias annotation in the place ATen writes it.
std::string type_str(const SchemaType& t, const AliasInfo* alias) {
  std::string out = t.name;
  bool list_alias = alias && t.is_list && !alias->on_elements;
  if (alias && !list_alias) out += "(" + alias->str() + ")";
  if (t.is_list) {
    if (t.element_optional) out += "?";
    out += "[";
    if (t.fixed_size) out += std::to_string(*t.fixed_size);
    out += "]";
    if (list_alias) out += "(" + alias->str() + ")";
  }
  if (t.optional) out += "?";
  return out;
}

void join(std::string& out, const std::vector<std::string>& parts, const char* sep) {
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
}

// Equality of the values defaults can hold (never tensors with data).
bool same_value(const Value& a, const Value& b) {
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case ValueKind::None:
      return true;
    case ValueKind::Int:
      return a.to_int() == b.to_int();
    case ValueKind::Float: {
      double x = a.to_double(), y = b.to_double();
      return x == y || (std::isnan(x) && std::isnan(y));
    }
    case ValueKind::Bool:
      return a.to_bool() == b.to_bool();
    case ValueKind::String:
      return a.str_value() == b.str_value();
    case ValueKind::IntList:
      return a.to_int_list() == b.to_int_list();
    case ValueKind::FloatList:
      return a.float_list() == b.float_list();
    case ValueKind::BoolList:
      return a.bool_list() == b.bool_list();
    case ValueKind::DType:
      return a.to_dtype() == b.to_dtype();
    case ValueKind::Device:
      return a.to_device() == b.to_device();
    case ValueKind::Layout:
      return a.to_layout() == b.to_layout();
    case ValueKind::MemoryFormat:
      return a.to_memory_format() == b.to_memory_format();
    case ValueKind::Tensor:
      return a.tensor().storage() == b.tensor().storage();
    case ValueKind::TensorList:
    case ValueKind::OptTensorList: {
      const auto& x = a.tensors();
      const auto& y = b.tensors();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        if (x[i].storage() != y[i].storage()) return false;
      }
      return true;
    }
  }
  return false;
}

}  // namespace

BaseType base_type_from_name(std::string_view name) {
  static constexpr std::array<std::pair<std::string_view, BaseType>, 20> kNames = {{
      {"Tensor", BaseType::Tensor},
      {"int", BaseType::Int},
      {"SymInt", BaseType::SymInt},
      {"float", BaseType::Float},
      {"bool", BaseType::Bool},
      {"str", BaseType::Str},
      {"Scalar", BaseType::Scalar},
      {"ScalarType", BaseType::ScalarType},
      {"Layout", BaseType::Layout},
      {"Device", BaseType::Device},
      {"MemoryFormat", BaseType::MemoryFormat},
      {"Generator", BaseType::Generator},
      {"Dimname", BaseType::Dimname},
      {"Storage", BaseType::Storage},
      {"Stream", BaseType::Stream},
      {"complex", BaseType::Complex},
      {"number", BaseType::Number},
      {"Any", BaseType::Any},
      {"QScheme", BaseType::QScheme},
      {"t", BaseType::TypeVar},
  }};
  for (const auto& [n, b] : kNames) {
    if (n == name) return b;
  }
  // Type variables: t, t1, t2, ...
  if (name.size() > 1 && name[0] == 't') {
    bool digits = true;
    for (char c : name.substr(1)) digits &= c >= '0' && c <= '9';
    if (digits) return BaseType::TypeVar;
  }
  return BaseType::Other;
}

std::string SchemaType::str() const { return type_str(*this, nullptr); }

std::string AliasInfo::str() const {
  std::string out;
  join(out, before_sets, "|");
  if (is_write) out += "!";
  if (!after_sets.empty()) {
    out += " -> ";
    join(out, after_sets, "|");
  }
  return out;
}

std::string Argument::str() const {
  std::string out = type_str(type, alias ? &*alias : nullptr);
  if (!name.empty()) out += " " + name;
  if (default_text) out += "=" + *default_text;
  return out;
}

bool operator==(const Argument& a, const Argument& b) {
  if (a.name != b.name || !(a.type == b.type) || a.default_text != b.default_text ||
      a.kwarg_only != b.kwarg_only || a.alias != b.alias ||
      a.default_value.has_value() != b.default_value.has_value()) {
    return false;
  }
  return !a.default_value || same_value(*a.default_value, *b.default_value);
}

bool operator==(const Schema& a, const Schema& b) {
  return a.ns == b.ns && a.name == b.name && a.overload == b.overload &&
         a.arguments == b.arguments && a.returns == b.returns && a.is_vararg == b.is_vararg &&
         a.is_varret == b.is_varret;
}

std::string Schema::op_name() const {
  return (ns.empty() ? std::string("aten") : ns) + "." + name + "." +
         (overload.empty() ? std::string("default") : overload);
}

std::vector<size_t> Schema::mutated_arguments() const {
  std::vector<size_t> out;
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (arguments[i].is_mutable()) out.push_back(i);
  }
  return out;
}

bool Schema::is_inplace() const {
  if (name.empty() || name.back() != '_' || arguments.empty()) return false;
  // "self" is the argument of that name, or else the first one (e.g. _foreach ops' lists).
  int self = find_argument("self");
  const Argument& arg = arguments[self >= 0 ? static_cast<size_t>(self) : 0];
  return arg.is_mutable() && !arg.kwarg_only;
}

bool Schema::is_out() const {
  for (const Argument& a : arguments) {
    if (a.kwarg_only && a.is_mutable()) return true;
  }
  return false;
}

int Schema::find_argument(std::string_view arg_name) const {
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (arguments[i].name == arg_name) return static_cast<int>(i);
  }
  return -1;
}

std::string Schema::str() const {
  std::string out;
  if (!ns.empty()) out += ns + "::";
  out += name;
  if (!overload.empty()) out += "." + overload;
  out += "(";
  bool kwarg_only = false;
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (i) out += ", ";
    if (arguments[i].kwarg_only && !kwarg_only) {
      out += "*, ";
      kwarg_only = true;
    }
    out += arguments[i].str();
  }
  if (is_vararg) out += arguments.empty() ? "..." : ", ...";
  out += ") -> ";
  // A single unnamed return prints bare, unless its type is itself a tuple type ("(int, int)",
  // "()"): bare, "-> ()" would read back as no return at all.
  bool single = returns.size() == 1 && !is_varret && returns[0].name.empty() &&
                !returns[0].type.name.starts_with("(");
  if (single) {
    out += returns[0].str();
  } else if (returns.empty() && is_varret) {
    out += "...";
  } else {
    out += "(";
    for (size_t i = 0; i < returns.size(); ++i) {
      if (i) out += ", ";
      out += returns[i].str();
    }
    if (is_varret) out += returns.empty() ? "..." : ", ...";
    out += ")";
  }
  return out;
}

}  // namespace crucible
