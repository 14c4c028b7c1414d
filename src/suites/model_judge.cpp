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

// Floating values are judged against golden with the spread of every baseline run; integer and
// bool values (indices, masks) against the unperturbed baseline, which computes them in the
// graph's own dtypes as the candidate does.
ArbiterCheck judge_value(const Tensor& golden, const std::vector<Tensor>& baselines,
                         const Tensor& candidate, double k, const std::string& what) {
  const Tensor& baseline = baselines.front();
  const bool floating = is_floating(baseline.dtype()) || is_complex(baseline.dtype());
  if (!floating) return arbitrate(baseline, baseline, candidate, {.k = k}, what);
  return arbitrate(golden, baselines, candidate, {.k = k}, what);
}

// The first node whose (judged) outputs diverge, from runs that kept every value; "" when none.
std::string first_divergence(const graph::Graph& g, const graph::ExecResult& golden,
                             const std::vector<graph::ExecResult>& baselines,
                             const graph::ExecResult& cand, double k) {
  const graph::ExecResult& baseline = baselines.front();
  const auto& catalog = OpRegistry::catalog();
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const graph::Node& n = g.nodes[i];
    const OpDef* op = catalog.find(n.op);
    if (op &&
        (op->compare.values_unspecified || op->compare.kind == ComparePolicy::Kind::ShapeOnly))
      continue;  // empty*: uninitialised values
    for (size_t o = 0; o < n.outputs.size(); ++o) {
      const std::string& name = n.outputs[o];
      if (name == "_") continue;
      if (op && op->compare.output_unspecified(o)) continue;  // RNG state, unused buffers
      auto gv = golden.values.find(name), bv = baseline.values.find(name),
           cv = cand.values.find(name);
      if (gv == golden.values.end() || bv == baseline.values.end() || cv == cand.values.end())
        continue;
      if (!bv->second.defined()) continue;
      std::vector<Tensor> spread;
      for (const graph::ExecResult& b : baselines) {
        auto it = b.values.find(name);
        if (it != b.values.end() && it->second.defined()) spread.push_back(it->second);
      }
      ArbiterCheck c = judge_value(gv->second, spread, cv->second, k, "%" + name);
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

graph::ExecOptions baseline_options(const ModelJudgeOptions& options,
                                    const graph::ExecOptions& base, int j) {
  graph::ExecOptions o = base;
  o.golden = false;
  if (j > 0) {
    o.perturb_ulps = options.perturb_ulps;
    o.perturb_seed = options.seed * 1000003 + static_cast<uint64_t>(j);
  }
  return o;
}

std::vector<graph::ExecResult> baseline_runs(const graph::Graph& g,
                                             const ModelJudgeOptions& options,
                                             const graph::ExecOptions& base) {
  std::vector<graph::ExecResult> out;
  std::unique_ptr<Backend> ref = BackendRegistry::instance().create("ref");
  for (int j = 0; j <= options.perturbed_runs; ++j)
    out.push_back(graph::execute(g, *ref, baseline_options(options, base, j)));
  return out;
}

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
  const std::vector<graph::ExecResult> baselines = baseline_runs(g, options, exec);
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
    std::vector<Tensor> spread;
    for (const graph::ExecResult& b : baselines) spread.push_back(b.outputs[i]);
    ArbiterCheck a = judge_value(golden.outputs[i], spread, got.outputs[i], options.k, what);
    if (!a.passed) ++failed;
    r.checks.push_back(as_check(a, golden.outputs[i]));
  }
  std::string where;
  if (with_fallback && !with_fallback->fell_back().empty())
    where = fmt::format("; ran on {}: {}", with_fallback->fallback().name(),
                        fmt::join(with_fallback->fell_back(), ", "));
  if (failed == 0) {
    r.status = Status::Passed;
    r.detail = fmt::format(
        "{} output(s) within {} x the largest error of {} ref baseline run(s) against f64{}",
        g.outputs.size(), options.k, baselines.size(), where);
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
        first_divergence(g, graph::execute(g, "ref", keep_golden), baseline_runs(g, options, keep),
                         graph::execute(g, *cand, keep), options.k);
    if (!d.empty()) r.detail += "; " + d;
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::Memory) throw;
    r.detail += fmt::format("; the chained run stopped: {}", e.what());
  }
  r.detail += where;
}

}  // namespace crucible
