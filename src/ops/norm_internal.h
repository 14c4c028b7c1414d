// Helpers shared by the batch_norm, group_norm, upsample, grid_sampler and padding families
// (private to those files): dtype names as ATen prints them, byte counts, dtype checks.
#pragma once

#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "crucible/cases/literal.h"
#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/core/value.h"
#include "crucible/ops/rules/norm.h"

namespace crucible::nnops {

using cases::Literal;

// c10's ScalarType names ("Float", "Half", "Long"), as dispatch errors print them.

inline double bytes_of(const Value& v) {
  if (!v.is_tensor() || !v.tensor().defined()) return 0;
  return static_cast<double>(v.tensor().numel()) * static_cast<double>(v.tensor().itemsize());
}

inline double bytes_of_all(const Values& vs) {
  double b = 0;
  for (const Value& v : vs) b += bytes_of(v);
  return b;
}

inline Literal bool_list(const std::vector<bool>& v) {
  std::vector<Literal> items;
  for (bool b : v) items.push_back(Literal::boolean(b));
  return Literal::list(std::move(items));
}

inline std::string int_list_str(const std::vector<int64_t>& v) { return shape_str(v); }

}  // namespace crucible::nnops
