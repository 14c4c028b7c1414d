// Binding a call's arguments to a schema, and converting each value to its argument's kind.
//
// The rules follow ATen's Python argument parser (torch/csrc/utils/python_arg_parser.cpp), which
// is what a traced call went through:
// - int / SymInt take an Int only. A Bool is NOT an int there (THPUtils_checkLong rejects bool),
//   and neither is a Float.
// - float takes a Float, or an Int, which becomes a Float. A Bool is rejected: Python would take
//   it (bool is an int subclass), TorchScript would not; a bool where a float belongs in a trace
//   is far more likely a mistake than intended, so crucible reports it.
// - bool takes a Bool only (an Int 0/1 is rejected, as THPUtils_checkBool does).
// - Scalar and number take Int, Float and Bool and keep the kind: it matters for promotion.
// - int[N] (a fixed size) also takes a single Int, repeated N times ("int[2] stride" given 2).
//   int[] without a size does not. A list's length is not checked against N: ATen leaves that
//   to the kernel (max_pool2d takes kernel_size=[3]).
// - float[] takes a FloatList or an IntList (converted). An empty list of any kind is an empty
//   list of the argument's kind (a trace cannot tell "[]" of ints from "[]" of floats).
// - Tensor[] takes a TensorList (or an OptTensorList whose elements are all defined); Tensor?[]
//   takes either and yields an OptTensorList.
// - ScalarType, Layout and MemoryFormat take their own kind, a name ("float32", "strided",
//   "channels_last") or c10's enum number; Device takes a Device or a string ("cuda:0").
// - Tensor takes a Tensor, or a Python number (a wrapped number, kept as Int/Float/Bool).
// - None is accepted only by optional arguments ('?').
// - Kinds crucible does not model (Generator, Storage, Stream, Any, type variables, containers)
//   are passed through unchanged.
#include <string>
#include <utility>
#include <vector>

#include "crucible/core/error.h"
#include "crucible/schema/schema.h"
#include "schema/default_value.h"

namespace crucible {
namespace {

using namespace schema_detail;

[[noreturn]] void reject(const Value& v, const SchemaType& type, const std::string& arg_name,
                         const std::string& context, const std::string& why = "") {
  std::string msg = context.empty() ? "" : context + ": ";
  msg += "argument '" + arg_name + "' must be " + type.str() + ", got " + value_kind_name(v.kind());
  if (!why.empty()) msg += " (" + why + ")";
  op_error(msg);
}

bool is_empty_list(const Value& v) {
  switch (v.kind()) {
    case ValueKind::IntList:
      return v.to_int_list().empty();
    case ValueKind::FloatList:
      return v.float_list().empty();
    case ValueKind::BoolList:
      return v.bool_list().empty();
    case ValueKind::TensorList:
    case ValueKind::OptTensorList:
      return v.tensors().empty();
    default:
      return false;
  }
}

Value coerce_list(const Value& v, const SchemaType& type, const std::string& arg_name,
                  const std::string& context) {
  switch (type.base) {
    case BaseType::Tensor: {
      if (is_empty_list(v)) return Value::tensor_list({}, type.element_optional);
      if (v.kind() != ValueKind::TensorList && v.kind() != ValueKind::OptTensorList) {
        reject(v, type, arg_name, context);
      }
      const std::vector<Tensor>& ts = v.tensors();
      if (!type.element_optional) {
        for (size_t i = 0; i < ts.size(); ++i) {
          if (!ts[i].defined()) {
            reject(v, type, arg_name, context, "element " + std::to_string(i) + " is None");
          }
        }
      }
      if ((v.kind() == ValueKind::OptTensorList) == type.element_optional) return v;
      return Value::tensor_list(ts, type.element_optional);
    }
    case BaseType::Int:
    case BaseType::SymInt:
      if (v.kind() == ValueKind::IntList) return v;
      if (v.kind() == ValueKind::Int && type.fixed_size) {
        return Value(std::vector<int64_t>(static_cast<size_t>(*type.fixed_size), v.to_int()));
      }
      if (is_empty_list(v)) return Value(std::vector<int64_t>{});
      reject(v, type, arg_name, context,
             v.kind() == ValueKind::Int ? "a single int is accepted only for int[N]" : "");
    case BaseType::Float:
      if (v.kind() == ValueKind::FloatList) return v;
      if (v.kind() == ValueKind::IntList) {
        std::vector<double> out;
        for (int64_t i : v.to_int_list()) out.push_back(static_cast<double>(i));
        return Value(std::move(out));
      }
      if (is_empty_list(v)) return Value(std::vector<double>{});
      reject(v, type, arg_name, context);
    case BaseType::Bool:
      if (v.kind() == ValueKind::BoolList) return v;
      if (is_empty_list(v)) return Value(std::vector<bool>{});
      reject(v, type, arg_name, context);
    default:
      return v;  // str[], Scalar[], t[], ...: no Value kind to check against
  }
}

Value coerce_single(const Value& v, const SchemaType& type, const std::string& arg_name,
                    const std::string& context) {
  const ValueKind k = v.kind();
  switch (type.base) {
    case BaseType::Tensor:
      // A Python number where a Tensor belongs is a wrapped number (add.Tensor(x, 1)): it
      // stays a scalar, and ops promote it as ATen promotes wrapped numbers.
      if (k == ValueKind::Tensor || k == ValueKind::Int || k == ValueKind::Float ||
          k == ValueKind::Bool)
        return v;
      break;
    case BaseType::Int:
    case BaseType::SymInt:
      if (k == ValueKind::Int) return v;
      if (k == ValueKind::Bool) reject(v, type, arg_name, context, "a bool is not an int");
      break;
    case BaseType::Float:
      if (k == ValueKind::Float) return v;
      if (k == ValueKind::Int) return Value(static_cast<double>(v.to_int()));
      if (k == ValueKind::Bool) reject(v, type, arg_name, context, "a bool is not a float");
      break;
    case BaseType::Bool:
      if (k == ValueKind::Bool) return v;
      break;
    case BaseType::Scalar:
    case BaseType::Number:
      if (v.is_scalar()) return v;
      break;
    case BaseType::Complex:
      if (k == ValueKind::Int || k == ValueKind::Float) return v;
      break;
    case BaseType::Str:
    case BaseType::Dimname:
      if (k == ValueKind::String) return v;
      break;
    case BaseType::ScalarType: {
      if (k == ValueKind::DType) return v;
      std::optional<DType> t;
      if (k == ValueKind::Int) t = dtype_from_aten_index(v.to_int());
      if (k == ValueKind::String) t = dtype_from_name(v.str_value());
      if (t) return Value(*t);
      break;
    }
    case BaseType::Layout: {
      if (k == ValueKind::Layout) return v;
      std::optional<Layout> l;
      if (k == ValueKind::Int) l = layout_from_index(v.to_int());
      if (k == ValueKind::String) l = layout_from_name(v.str_value());
      if (l) return Value(*l);
      break;
    }
    case BaseType::MemoryFormat: {
      if (k == ValueKind::MemoryFormat) return v;
      std::optional<MemoryFormat> m;
      if (k == ValueKind::Int) m = memory_format_from_index(v.to_int());
      if (k == ValueKind::String) m = memory_format_from_name(v.str_value());
      if (m) return Value(*m);
      break;
    }
    case BaseType::Device:
      if (k == ValueKind::Device) return v;
      if (k == ValueKind::String) {
        try {
          return Value(parse_device(v.str_value()));
        } catch (const Error& e) {
          reject(v, type, arg_name, context, e.what());
        }
      }
      break;
    default:
      return v;  // Generator, Storage, Stream, Any, type variables, containers
  }
  reject(v, type, arg_name, context);
}

Value coerce(const Value& v, const SchemaType& type, const std::string& arg_name,
             const std::string& context) {
  if (v.is_none()) {
    if (type.optional) return v;
    reject(v, type, arg_name, context, "the argument is not optional");
  }
  return type.is_list ? coerce_list(v, type, arg_name, context)
                      : coerce_single(v, type, arg_name, context);
}

std::string argument_names(const Schema& schema) {
  std::string out;
  for (size_t i = 0; i < schema.arguments.size(); ++i) {
    if (i) out += ", ";
    out += schema.arguments[i].name;
  }
  return out;
}

}  // namespace

Value coerce_to_type(const Value& v, const SchemaType& type, const std::string& arg_name) {
  return coerce(v, type, arg_name, "");
}

Values bind_arguments(const Schema& schema, const Values& positional,
                      const std::vector<std::pair<std::string, Value>>& keywords) {
  const std::string op = schema.op_name();
  const size_t n = schema.arguments.size();
  size_t max_positional = 0;
  while (max_positional < n && !schema.arguments[max_positional].kwarg_only) ++max_positional;

  if (positional.size() > max_positional) {
    std::string msg = op + ": takes at most " + std::to_string(max_positional) +
                      " positional arguments, got " + std::to_string(positional.size());
    if (max_positional < n) {
      msg += "; argument '" + schema.arguments[max_positional].name +
             "' is keyword-only and must be given by name";
    }
    op_error(msg + " (schema: " + schema.str() + ")");
  }

  Values out(n);
  std::vector<bool> given(n, false);
  for (size_t i = 0; i < positional.size(); ++i) {
    out[i] = coerce(positional[i], schema.arguments[i].type, schema.arguments[i].name, op);
    given[i] = true;
  }
  for (const auto& [name, value] : keywords) {
    int idx = schema.find_argument(name);
    if (idx < 0) {
      op_error(op + ": unknown keyword argument '" + name + "'; the arguments are (" +
               argument_names(schema) + ") (schema: " + schema.str() + ")");
    }
    const size_t i = static_cast<size_t>(idx);
    if (given[i]) op_error(op + ": argument '" + name + "' given more than once");
    out[i] = coerce(value, schema.arguments[i].type, name, op);
    given[i] = true;
  }
  for (size_t i = 0; i < n; ++i) {
    if (given[i]) continue;
    const Argument& arg = schema.arguments[i];
    if (!arg.default_value) {
      op_error(op + ": missing required argument '" + arg.name + "' (" + arg.str() +
               ") (schema: " + schema.str() + ")");
    }
    out[i] = *arg.default_value;
  }
  return out;
}

}  // namespace crucible
