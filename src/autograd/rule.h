// A derivative rule's view of one node (private to src/autograd).
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "crucible/graph/graph.h"
#include "crucible/nn/tracer.h"
#include "crucible/ops/op.h"

namespace crucible::autograd::detail {

struct RuleContext {
  nn::Tracer& t;
  const graph::Node& node;
  const OpDef& op;
  std::vector<nn::Var> outputs;         // the node's outputs (undefined for "_")
  nn::Var grad;                         // the gradient of output 0
  const std::set<std::string>& needed;  // values a gradient is wanted for

  // Argument `name` (schema position `pos`) as written, or nullptr when left to its default.
  const cases::Literal* literal(const std::string& name) const;
  // The tensor argument `name` (an undefined Var for None).
  nn::Var tensor(const std::string& name) const;
  int64_t integer(const std::string& name, int64_t fallback) const;
  double number(const std::string& name, double fallback) const;
  std::vector<int64_t> ints(const std::string& name, std::vector<int64_t> fallback) const;
  // Whether a gradient is wanted for `v`.
  bool needs(const nn::Var& v) const { return v.defined() && needed.contains(v.name); }
  // The argument as written, for passing on (its default spelled when left out).
  nn::Arg arg(const std::string& name, nn::Arg fallback) const;
};

// (value name, its gradient contribution)
using Grads = std::vector<std::pair<std::string, nn::Var>>;
using Rule = std::function<Grads(RuleContext&)>;

const std::map<std::string, Rule>& rules();

// Sums g down to `shape` (the gradient of a broadcast).
nn::Var sum_to(nn::Tracer& t, const nn::Var& g, const Shape& shape);

}  // namespace crucible::autograd::detail
