// Judging a whole model graph (see model_judge.h).
#include "suites/model_judge.h"

#include <memory>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "crucible/backends/fallback.h"
#include "crucible/compare/arbiter.h"
#include "crucible/core/error.h"
#include "crucible/graph/executor.h"
#include "crucible/graph/node_inputs.h"
#include "crucible/graph/print.h"

namespace crucible {

namespace {

std::string output_label(const graph::GraphOutput& o, size_t i) {
  switch (o.kind) {
    case graph::GraphOutput::Kind::Loss:
      return "loss";
    case graph::GraphOutput::Kind::Grad:
      return "grad " + o.param;
    default:
      return fmt::format("output {}", i);
  }
}

// One arbiter check as the run records it (TensorCheck with the RMSE figures).
TensorCheck as_check(const ArbiterCheck& a, const Tensor& golden) {
  TensorCheck c;
  c.what = a.what;
  c.passed = a.passed;
  c.reason = a.reason;
  c.numel = golden.numel();
  c.mismatches = a.nonfinite_mismatches;
  c.max_abs_err = a.max_abs_err;
  c.max_rel_err = a.max_rel_err;
  c.pcc = a.pcc;
  c.rmse = a.candidate_rmse;
  c.baseline_rmse = a.baseline_rmse;
  c.allowed_rmse = a.allowed_rmse;
  return c;
}

// Floating values are judged against golden; integer and bool values (indices, masks) against
// the baseline, which computes them in the graph's own dtypes as the candidate does.
ArbiterCheck judge_value(const Tensor& golden, const Tensor& baseline, const Tensor& candidate,
                         double k, const std::string& what) {
  const bool floating = is_floating(baseline.dtype()) || is_complex(baseline.dtype());
  return arbitrate(floating ? golden : baseline, baseline, candidate, {.k = k}, what);
}

// The first node whose (judged) outputs diverge, from runs that kept every value; "" when none.
std::string first_divergence(const graph::Graph& g, const graph::ExecResult& golden,
                             const graph::ExecResult& baseline, const graph::ExecResult& cand,
                             double k) {
  const auto& catalog = OpRegistry::catalog();
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const graph::Node& n = g.nodes[i];
    const OpDef* op = catalog.find(n.op);
    if (op &&
        (op->compare.values_unspecified || op->compare.kind == ComparePolicy::Kind::ShapeOnly))
      continue;  // empty*: uninitialised values
    for (const std::string& name : n.outputs) {
      if (name == "_") continue;
      auto gv = golden.values.find(name), bv = baseline.values.find(name),
           cv = cand.values.find(name);
      if (gv == golden.values.end() || bv == baseline.values.end() || cv == cand.values.end())
        continue;
      if (!bv->second.defined()) continue;
      ArbiterCheck c = judge_value(gv->second, bv->second, cv->second, k, "%" + name);
      if (c.passed) continue;
      // What lies downstream: the nodes that use this value, directly or not.
      std::set<std::string> tainted{name};
      size_t downstream = 0;
      for (size_t j = i + 1; j < g.nodes.size(); ++j) {
        bool uses = false;
        for (const std::string& ref : graph::node_references(g, j))
          uses = uses || tainted.count(ref) > 0;
        if (!uses) continue;
        ++downstream;
        for (const std::string& out : g.nodes[j].outputs) tainted.insert(out);
      }
      return fmt::format("first divergence at {}:{}: {} ({}); {} node(s) downstream of it", g.file,
                         n.line, graph::print_node(g, i), c.reason, downstream);
    }
  }
  return "";
}

}  // namespace

void judge_model(const graph::Graph& g, Backend& candidate, const ModelJudgeOptions& options,
                 CaseResult& r) {
  // The candidate, with the named fallback for what it lacks.
  std::unique_ptr<FallbackBackend> with_fallback;
  Backend* cand = &candidate;
  if (!options.fallback.empty()) {
    with_fallback = std::make_unique<FallbackBackend>(
        candidate, BackendRegistry::instance().create(options.fallback));
    cand = with_fallback.get();
  }
  std::vector<std::string> missing = graph::missing_ops(g, *cand);
  if (!missing.empty()) {
    r.status = Status::Unsupported;
    r.detail = fmt::format("{} lacks {} op(s) of the model: {}", candidate.name(), missing.size(),
                           fmt::join(missing, "; "));
    return;
  }

  graph::ExecOptions exec{.seed = options.seed};
  graph::ExecOptions golden_exec{.seed = options.seed, .golden = true};
  const graph::ExecResult golden = graph::execute(g, "ref", golden_exec);
  const graph::ExecResult baseline = graph::execute(g, "ref", exec);
  graph::ExecResult got;
  try {
    got = graph::execute(g, *cand, exec);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::Memory) throw;
    r.status = e.kind() == ErrorKind::Unsupported ? Status::Unsupported : Status::Failed;
    r.detail = fmt::format("{} raised: {}", candidate.name(), e.what());
    return;
  }

  size_t failed = 0;
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const std::string what = output_label(g.outputs[i], i);
    ArbiterCheck a =
        judge_value(golden.outputs[i], baseline.outputs[i], got.outputs[i], options.k, what);
    if (!a.passed) ++failed;
    r.checks.push_back(as_check(a, golden.outputs[i]));
  }
  std::string where;
  if (with_fallback && !with_fallback->fell_back().empty())
    where = fmt::format("; ran on {}: {}", with_fallback->fallback().name(),
                        fmt::join(with_fallback->fell_back(), ", "));
  if (failed == 0) {
    r.status = Status::Passed;
    r.detail = fmt::format("{} output(s) within {} x the {} baseline's error against f64{}",
                           g.outputs.size(), options.k, "ref", where);
    return;
  }
  r.status = Status::Failed;
  const TensorCheck* first = nullptr;
  for (const TensorCheck& c : r.checks)
    if (!c.passed && !first) first = &c;
  r.detail = fmt::format("{} of {} output(s) wrong: {}", failed, g.outputs.size(), first->reason);
  // Chained: the same three runs keeping every value name the first node that diverges.
  graph::ExecOptions keep = exec, keep_golden = golden_exec;
  keep.keep_values = keep_golden.keep_values = true;
  try {
    const std::string d =
        first_divergence(g, graph::execute(g, "ref", keep_golden), graph::execute(g, "ref", keep),
                         graph::execute(g, *cand, keep), options.k);
    if (!d.empty()) r.detail += "; " + d;
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::Memory) throw;
    r.detail += fmt::format("; the chained run stopped: {}", e.what());
  }
  r.detail += where;
}

}  // namespace crucible
