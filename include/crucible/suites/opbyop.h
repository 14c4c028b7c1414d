// The op-by-op flow's cases: every unique node of a model graph (deduplicated by op and argument
// signature, with its number of occurrences), run alone on the candidate with its real inputs --
// the intermediate tensors of the graph's run on `ref` in its own dtypes. `--suite
// opbyop:<graph>` runs them as a suite; `crucible opbyop` adds the chained run and the reports.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "crucible/cases/literal.h"
#include "crucible/core/value.h"
#include "crucible/graph/graph.h"
#include "crucible/suites/suite.h"

namespace crucible {

struct OpByOpNode {
  std::string op;                        // "aten.addmm.default"
  cases::CallSpec call;                  // the node as a case (its arguments' specs)
  std::vector<int> lines;                // the graph lines of every node with this signature
  std::vector<std::string> outputs;      // the first node's output names
  std::shared_ptr<const Values> inputs;  // the first node's real inputs (bound arguments)
};

struct OpByOpPlan {
  std::shared_ptr<const graph::Graph> graph;
  std::vector<OpByOpNode> nodes;  // in the order of their first occurrence
};

// The unique nodes of the graph in `file` and their real inputs under `seed` (the graph run on
// `ref`, keeping every value). Kept per (file, seed) for the process: `crucible opbyop` and the
// suite it runs share one.
std::shared_ptr<const OpByOpPlan> opbyop_plan(const std::string& file, uint64_t seed);

std::vector<SuiteCase> opbyop_suite(const SuiteOptions& o, const std::string& path);

}  // namespace crucible
