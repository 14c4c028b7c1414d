// Arguments read by name (see args.h).
#include "crucible/ops/args.h"

#include <fmt/format.h>

#include "crucible/core/error.h"

namespace crucible {

namespace {

const Value& none_value() {
  static const Value none;
  return none;
}

}  // namespace

bool Args::has(std::string_view name) const {
  for (const Argument& a : schema_->arguments)
    if (a.name == name) return true;
  return false;
}

size_t Args::index(std::string_view name) const {
  const std::vector<Argument>& args = schema_->arguments;
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].name == name) return i;
  internal_error(
      fmt::format("{} has no argument named '{}'", schema_->op_name(), std::string(name)));
}

const Value& Args::value(std::string_view name) const {
  const size_t i = index(name);
  if (i < values_.size()) return values_[i];
  const Argument& a = schema_->arguments[i];
  if (a.default_value) return *a.default_value;
  if (a.type.optional) return none_value();
  internal_error(fmt::format("{}: argument '{}' was not passed and has no default",
                             schema_->op_name(), a.name));
}

}  // namespace crucible
