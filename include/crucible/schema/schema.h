// ATen function schemas: parsed from their text form, e.g.
//   add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
//   aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)
// and used to bind a call's positional and keyword arguments.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "crucible/core/value.h"

namespace crucible {

// The base type of an argument or return, without optional/list decoration.
enum class BaseType : uint8_t {
  Tensor,
  Int,
  SymInt,
  Float,
  Bool,
  Str,
  Scalar,
  ScalarType,
  Layout,
  Device,
  MemoryFormat,
  Generator,
  Dimname,
  Storage,
  Stream,
  Complex,
  Number,  // 'number' in prim schemas
  Any,
  TypeVar,  // 't', 't1', ... in generic schemas
  QScheme,
  Other,  // anything else ATen's grammar allows (kept by name)
};

struct SchemaType {
  BaseType base = BaseType::Tensor;
  std::string name;               // the base type as written ("Tensor", "SymInt", "t")
  bool optional = false;          // T?  (or T[]? for an optional list)
  bool is_list = false;           // T[] or T[N]
  bool element_optional = false;  // T?[]
  std::optional<int> fixed_size;  // T[N]
  // Tuple or other compound types ("(int, int)", "Dict(str, Tensor)", "Future(t)") are kept as
  // text in `name` with base Other.
  std::string str() const;
  bool operator==(const SchemaType&) const = default;
};

// The base type a name denotes ("int" -> Int, "t1" -> TypeVar, "Foo" -> Other).
BaseType base_type_from_name(std::string_view name);

struct AliasInfo {
  std::vector<std::string> before_sets;  // "a" in Tensor(a!) / Tensor(a -> *)
  std::vector<std::string> after_sets;   // "*" in Tensor(a -> *)
  bool is_write = false;                 // '!'
  bool wildcard_after = false;
  // For a list type: true when written on the elements, Tensor(a!)[], false when written on the
  // list itself, Tensor[](a!).
  bool on_elements = false;
  std::string str() const;  // "a!", "a -> *", "b|c"
  bool operator==(const AliasInfo&) const = default;
};

struct Argument {
  std::string name;  // may be empty for returns
  SchemaType type;
  std::optional<std::string> default_text;  // as written, e.g. "1", "[0, 0]", "None", "\"mean\""
  std::optional<Value> default_value;       // parsed; set whenever default_text is
  bool kwarg_only = false;
  std::optional<AliasInfo> alias;

  bool is_mutable() const { return alias && alias->is_write; }
  // "Tensor(a!) out", "Scalar alpha=1" (without the '*' marker).
  std::string str() const;
};
// Equal names, types, aliases, default texts and default values.
bool operator==(const Argument& a, const Argument& b);

struct Schema {
  std::string ns;        // "aten" (empty when the text had no namespace)
  std::string name;      // "add_"
  std::string overload;  // "Tensor" (empty for the default overload)
  std::vector<Argument> arguments;
  std::vector<Argument> returns;
  bool is_vararg = false;  // '...' in the arguments
  bool is_varret = false;  // '...' in the returns

  // "aten.add_.Tensor"; a missing overload is "default", a missing namespace "aten".
  std::string op_name() const;
  // Indices of arguments written through (alias annotation with '!'), e.g. out= and self of
  // in-place ops.
  std::vector<size_t> mutated_arguments() const;
  bool is_inplace() const;  // name ends with '_' and self is mutated
  bool is_out() const;      // has kwarg-only mutated arguments (out= variants)
  // The argument's index by name, or -1.
  int find_argument(std::string_view name) const;
  // Prints back in ATen's text form (normalised spacing).
  std::string str() const;
};
bool operator==(const Schema& a, const Schema& b);

// Parses one schema. Errors are Input errors naming the column and what was expected.
Schema parse_schema(std::string_view text);

// Converts a value to the kind an argument of `type` holds, as ATen's argument parsing does:
// an Int given to a float or Scalar stays a number of its own kind for Scalar, becomes Float
// for float; a single Int given to int[N] is repeated N times; a Bool stays Bool, etc.
// Throws an op error naming `arg_name` when the value cannot be such an argument.
Value coerce_to_type(const Value& v, const SchemaType& type, const std::string& arg_name);

// Binds positional and keyword arguments to the schema, filling defaults. Returns one Value per
// schema argument, in schema order. Errors (too many positionals, a kwarg-only argument given
// positionally, an unknown keyword, a missing required argument, a value of the wrong kind) are
// op errors naming the schema and the argument.
Values bind_arguments(const Schema& schema, const Values& positional,
                      const std::vector<std::pair<std::string, Value>>& keywords);

}  // namespace crucible
