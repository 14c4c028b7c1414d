// The op-by-op flow's cases (see opbyop_suite.h).
#include "crucible/suites/opbyop.h"

#include <map>
#include <mutex>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "crucible/cases/trace.h"
#include "crucible/core/error.h"
#include "crucible/graph/executor.h"
#include "crucible/graph/node_inputs.h"
#include "crucible/graph/parse.h"
#include "crucible/graph/print.h"
#include "crucible/ops/op.h"

namespace crucible {

std::shared_ptr<const OpByOpPlan> opbyop_plan(const std::string& file, uint64_t seed) {
  static std::mutex mu;
  static std::map<std::pair<std::string, uint64_t>, std::shared_ptr<const OpByOpPlan>> cache;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache.find({file, seed}); it != cache.end()) return it->second;

  auto plan = std::make_shared<OpByOpPlan>();
  plan->graph = std::make_shared<const graph::Graph>(graph::read_graph(file));
  const graph::Graph& g = *plan->graph;
  graph::ExecOptions exec{.seed = seed, .keep_values = true};
  const graph::ExecResult run = graph::execute(g, "ref", exec);
  std::map<std::string, size_t> by_signature;  // "op call" -> index in plan->nodes
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const graph::Node& n = g.nodes[i];
    cases::CallSpec call = graph::node_call_spec(g, i);
    const std::string signature = n.op + " " + cases::print_call(call);
    if (auto it = by_signature.find(signature); it != by_signature.end()) {
      plan->nodes[it->second].lines.push_back(n.line);
      continue;
    }
    by_signature.emplace(signature, plan->nodes.size());
    OpByOpNode node{
        .op = n.op,
        .call = std::move(call),
        .lines = {n.line},
        .outputs = n.outputs,
        .inputs = std::make_shared<const Values>(deep_copy(graph::node_inputs(g, i, run.values)))};
    plan->nodes.push_back(std::move(node));
  }
  cache.emplace(std::make_pair(file, seed), plan);
  return plan;
}

std::vector<SuiteCase> opbyop_suite(const SuiteOptions& o, const std::string& path) {
  if (!o.dtypes.empty()) usage_error("--dtypes does not apply to --suite opbyop");
  std::shared_ptr<const OpByOpPlan> plan = opbyop_plan(path, o.seed);
  std::set<std::string> wanted;
  if (!o.ops.empty()) {
    for (const OpDef* op : OpRegistry::catalog().match(o.ops)) wanted.insert(op->name);
  }
  std::vector<SuiteCase> out;
  for (const OpByOpNode& n : plan->nodes) {
    if (!wanted.empty() && !wanted.count(n.op)) continue;
    SuiteCase sc;
    sc.c.op = n.op;
    sc.c.call = n.call;
    sc.c.seed = o.seed;
    sc.c.label = "node";
    sc.c.source = fmt::format("{}:{}", plan->graph->file, n.lines.front());
    sc.c.cnt = static_cast<int64_t>(n.lines.size());
    sc.op = OpRegistry::catalog().find(n.op);
    sc.inputs = n.inputs;
    const std::string file = path, op = n.op;
    const uint64_t seed = o.seed;
    sc.reproducer = [file, op, seed](const std::string& backend) {
      return fmt::format("crucible run --suite opbyop:{} --ops {} --backend {} --seed {}", file, op,
                         backend, seed);
    };
    out.push_back(std::move(sc));
  }
  return out;
}

}  // namespace crucible
