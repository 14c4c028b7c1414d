// A call's arguments read by name: the bound values of one call together with the schema that
// names them. The reference, the meta functions, the cost models and the cpu kernels read
// `a.tensor("self")`, `a.ints("dim")`, `a.opt_dtype("dtype")` instead of `a[0]`, so a function
// shared by several overloads reads each by its own schema, and an argument the call left out
// reads as the schema's default.
//
// An Args converts to `const Values&`, so helpers written for plain values keep working.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "crucible/core/value.h"
#include "crucible/schema/schema.h"

namespace crucible {

class Args {
 public:
  Args(const Values& values, const Schema& schema) : values_(values), schema_(&schema) {}

  // NOLINTNEXTLINE(google-explicit-constructor): helpers on plain values take an Args as is.
  operator const Values&() const { return values_; }
  const Values& values() const { return values_; }
  const Schema& schema() const { return *schema_; }
  size_t size() const { return values_.size(); }

  // The position of argument `name` in the schema; an internal error naming the op when the
  // schema has no such argument (a misspelt name is a bug in crucible, not in the call).
  size_t index(std::string_view name) const;
  // Whether the schema has argument `name`.
  bool has(std::string_view name) const;
  // The argument as passed, or its schema default where the call left it out.
  const Value& value(std::string_view name) const;
  // Whether the argument was passed (or defaults) as something other than None.
  bool given(std::string_view name) const { return !value(name).is_none(); }

  const Tensor& tensor(std::string_view name) const { return value(name).tensor(); }
  std::optional<Tensor> opt_tensor(std::string_view name) const { return value(name).opt_tensor(); }
  const std::vector<Tensor>& tensors(std::string_view name) const { return value(name).tensors(); }
  int64_t integer(std::string_view name) const { return value(name).to_int(); }
  std::optional<int64_t> opt_integer(std::string_view name) const { return value(name).opt_int(); }
  double real(std::string_view name) const { return value(name).to_double(); }
  std::optional<double> opt_real(std::string_view name) const { return value(name).opt_double(); }
  bool flag(std::string_view name) const { return value(name).to_bool(); }
  Scalar scalar(std::string_view name) const { return value(name).to_scalar(); }
  std::vector<int64_t> ints(std::string_view name) const { return value(name).to_int_list(); }
  DType dtype(std::string_view name) const { return value(name).to_dtype(); }
  std::optional<DType> opt_dtype(std::string_view name) const { return value(name).opt_dtype(); }
  const std::string& str(std::string_view name) const { return value(name).str_value(); }

 private:
  const Values& values_;
  const Schema* schema_;
};

}  // namespace crucible
