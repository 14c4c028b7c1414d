// The zoo in the model suite (see zoo_cases.h).
#include "suites/zoo_cases.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>

#include <fmt/format.h>

#include "crucible/compare/arbiter.h"
#include "crucible/core/error.h"
#include "crucible/graph/executor.h"
#include "crucible/graph/values.h"
#include "crucible/models/zoo.h"

namespace crucible {

namespace {

// One SGD step on the host: w -= lr * grad for every parameter with a gradient output.
void sgd_update(const graph::Graph& g, const graph::ExecResult& r, double lr, graph::TensorMap& w) {
  for (size_t k = 0; k < g.outputs.size(); ++k) {
    if (g.outputs[k].kind != graph::GraphOutput::Kind::Grad) continue;
    Tensor& p = w.at(g.outputs[k].param);
    const Tensor& grad = r.outputs[k];
    Tensor next = p.clone();
    for (int64_t i = 0; i < next.numel(); ++i) next.set(i, p.get(i) - lr * grad.get(i));
    p = next;
  }
}

}  // namespace

void judge_sgd(const graph::Graph& g, Backend& candidate, const ModelJudgeOptions& options,
               int steps, double lr, CaseResult& r) {
  graph::TensorMap w;
  for (auto& [name, t] : graph::materialize_declarations(g, options.seed)) {
    const graph::Declaration* d = g.find_decl(name);
    if (d && (d->kind == graph::DeclKind::Param || d->kind == graph::DeclKind::Buffer))
      w.emplace(name, t);
  }
  std::unique_ptr<Backend> ref = BackendRegistry::instance().create("ref");
  std::vector<double> losses;
  for (int s = 1; s <= steps; ++s) {
    // The step: the golden run's gradients, applied on the host.
    graph::ExecOptions step{.seed = options.seed, .golden = true};
    step.weights = &w;
    step.weights_file = fmt::format("<sgd step {}>", s);
    sgd_update(g, graph::execute(g, *ref, step), lr, w);
    // Golden, baseline and candidate at the trained weights (copies: a backend may update
    // buffers such as batch-norm running statistics in place).
    graph::TensorMap copy;
    auto fresh = [&](bool golden) {
      copy.clear();
      for (const auto& [k, v] : w) copy.emplace(k, v.clone());
      graph::ExecOptions o{.seed = options.seed, .golden = golden};
      o.weights = &copy;
      o.weights_file = step.weights_file;
      return o;
    };
    auto run = [&](Backend& b, bool golden) { return graph::execute(g, b, fresh(golden)); };
    const graph::ExecResult rg = run(*ref, true);
    std::vector<graph::ExecResult> rbs;  // the baseline runs, each on fresh weights
    for (int j = 0; j <= options.perturbed_runs; ++j)
      rbs.push_back(graph::execute(g, *ref, baseline_options(options, fresh(false), j)));
    const graph::ExecResult& rb = rbs.front();
    graph::ExecResult rc;
    try {
      rc = run(candidate, false);
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::Memory) throw;
      r.status = Status::Failed;
      r.detail = fmt::format("SGD step {}: {} raised: {}", s, candidate.name(), e.what());
      return;
    }
    losses.push_back(rc.outputs[0].get(0));
    for (size_t k = 0; k < g.outputs.size(); ++k) {
      const graph::GraphOutput& out = g.outputs[k];
      const std::string what = fmt::format(
          "sgd step {} {}", s,
          out.kind == graph::GraphOutput::Kind::Grad ? "grad " + out.param : std::string("loss"));
      // The loss is one number summed over every output element: its floor scales with it
      // (1e-6 of its magnitude, a few f32 roundings), or a trained loss of 1e3 would be held
      // to 1e-8 relative.
      ArbiterOptions ao{.k = options.k};
      if (out.kind == graph::GraphOutput::Kind::Loss)
        ao.floor =
            std::max(arbiter_floor(rb.outputs[k].dtype()), 1e-6 * std::abs(rg.outputs[k].get(0)));
      std::vector<Tensor> spread;
      for (const graph::ExecResult& b : rbs) spread.push_back(b.outputs[k]);
      const ArbiterCheck a = arbitrate(rg.outputs[k], spread, rc.outputs[k], ao, what);
      if (out.kind == graph::GraphOutput::Kind::Loss || !a.passed) {
        TensorCheck c;
        c.what = a.what;
        c.passed = a.passed;
        c.reason = a.reason;
        c.numel = rg.outputs[k].numel();
        c.max_abs_err = a.max_abs_err;
        c.max_rel_err = a.max_rel_err;
        c.pcc = a.pcc;
        c.rmse = a.candidate_rmse;
        c.baseline_rmse = a.baseline_rmse;
        c.allowed_rmse = a.allowed_rmse;
        r.checks.push_back(c);
      }
      if (!a.passed && r.status != Status::Failed) {
        r.status = Status::Failed;
        r.detail = fmt::format("SGD step {}: {}", s, a.reason);
      }
    }
  }
  if (r.status == Status::Passed)
    r.detail +=
        fmt::format("; {} SGD steps (lr {}), loss {:.6g}", steps, lr, fmt::join(losses, " -> "));
}

std::vector<SuiteCase> zoo_suite_cases(const SuiteOptions& o) {
  std::vector<SuiteCase> out;
  if (models::zoo_dir().empty()) return out;
  for (const models::ZooEntry& e : models::zoo()) {
    const std::string name = "zoo-" + e.name;
    if (!o.model_filter.empty()) {
      bool any = false;
      for (const std::string& f : o.model_filter) any |= name.find(f) != std::string::npos;
      if (!any) continue;
    }
    const models::ModelConfig c = models::load_config(e.name);
    const auto model = e.make(c.init_args);
    auto g = std::make_shared<const graph::Graph>(
        models::capture(*model, name, c.tests.front().second, true).graph);
    SuiteCase sc;
    sc.c.op = "model:" + name;
    sc.c.seed = o.seed;
    sc.c.label = "training+sgd";
    sc.c.source = c.file;
    const ModelJudgeOptions judge{.seed = o.seed, .k = o.model_k, .fallback = o.fallback};
    const Case cs = sc.c;
    sc.evaluate = [g, judge, cs](Backend&, Backend& candidate) {
      CaseResult r;
      r.case_id = cs.id();
      r.op = cs.op;
      r.label = cs.label;
      r.source = cs.source;
      r.seed = cs.seed;
      const auto t0 = std::chrono::steady_clock::now();
      judge_model(*g, candidate, judge, r);
      if (r.status == Status::Passed) judge_sgd(*g, candidate, judge, kZooSgdSteps, kZooSgdLr, r);
      r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      return r;
    };
    sc.reproducer = [name, judge](const std::string& backend) {
      std::string cmd =
          fmt::format("crucible run --suite model:zoo --model-filter {} --backend {} --seed {}",
                      name, backend, judge.seed);
      if (judge.k != 3.0) cmd += fmt::format(" --model-k {}", judge.k);
      if (!judge.fallback.empty()) cmd += " --fallback " + judge.fallback;
      return cmd;
    };
    out.push_back(std::move(sc));
  }
  return out;
}

}  // namespace crucible
