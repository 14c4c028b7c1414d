// Helpers the zoo's classes share (private to src/models).
#pragma once

#include <cstdint>
#include <string>

#include "crucible/core/error.h"
#include "crucible/models/zoo.h"

namespace crucible::models::detail {

inline int64_t int_arg(const Json& args, const std::string& key, int64_t fallback) {
  if (!args.contains(key)) return fallback;
  if (!args[key].is_number_integer())
    usage_error("init_args." + key + " is not an integer: " + args[key].dump());
  return args[key].get<int64_t>();
}

inline double num_arg(const Json& args, const std::string& key, double fallback) {
  if (!args.contains(key)) return fallback;
  if (!args[key].is_number()) usage_error("init_args." + key + " is not a number");
  return args[key].get<double>();
}

inline std::string str_arg(const Json& args, const std::string& key, const std::string& fallback) {
  if (!args.contains(key)) return fallback;
  if (!args[key].is_string()) usage_error("init_args." + key + " is not a string");
  return args[key].get<std::string>();
}

inline graph::Initializer index_init(int64_t hi) {
  graph::Initializer init;
  init.kind = graph::Initializer::Kind::Index;
  init.args = {cases::Literal::integer(0), cases::Literal::integer(hi)};
  return init;
}

}  // namespace crucible::models::detail
