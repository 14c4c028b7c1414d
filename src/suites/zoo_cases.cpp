// The zoo in the model suite (see zoo_cases.h).
#include "suites/zoo_cases.h"

#include <chrono>
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
  graph::TensorMap init;
  for (auto& [name, t] : graph::materialize_declarations(g, options.seed)) {
    const graph::Declaration* d = g.find_decl(name);
    if (d && (d->kind == graph::DeclKind::Param || d->kind == graph::DeclKind::Buffer))
      init.emplace(name, t);
  }
  auto copy = [](const graph::TensorMap& m) {
    graph::TensorMap out;
    for (const auto& [k, v] : m) out.emplace(k, v.clone());
    return out;
  };
  graph::TensorMap wg = copy(init), wb = copy(init), wc = copy(init);
  std::unique_ptr<Backend> ref = BackendRegistry::instance().create("ref");
  int failed = 0;
  std::vector<double> losses;
  for (int s = 0; s <= steps; ++s) {
    graph::ExecOptions og{.seed = options.seed, .golden = true};
    graph::ExecOptions ob{.seed = options.seed};
    graph::ExecOptions oc{.seed = options.seed};
    og.weights = &wg;
    ob.weights = &wb;
    oc.weights = &wc;
    og.weights_file = ob.weights_file = oc.weights_file = fmt::format("<sgd step {}>", s);
    const graph::ExecResult rg = graph::execute(g, *ref, og);
    const graph::ExecResult rb = graph::execute(g, *ref, ob);
    graph::ExecResult rc;
    try {
      rc = graph::execute(g, candidate, oc);
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::Memory) throw;
      r.status = Status::Failed;
      r.detail = fmt::format("SGD step {}: {} raised: {}", s, candidate.name(), e.what());
      return;
    }
    const ArbiterCheck a = arbitrate(rg.outputs[0], rb.outputs[0], rc.outputs[0], {.k = options.k},
                                     fmt::format("sgd loss {}", s));
    TensorCheck c;
    c.what = a.what;
    c.passed = a.passed;
    c.reason = a.reason;
    c.numel = 1;
    c.max_abs_err = a.max_abs_err;
    c.max_rel_err = a.max_rel_err;
    c.rmse = a.candidate_rmse;
    c.baseline_rmse = a.baseline_rmse;
    c.allowed_rmse = a.allowed_rmse;
    r.checks.push_back(c);
    losses.push_back(rc.outputs[0].get(0));
    if (!a.passed) {
      ++failed;
      if (r.status != Status::Failed) {
        r.status = Status::Failed;
        r.detail = fmt::format("SGD step {}: {}", s, a.reason);
      }
    }
    if (s == steps) break;
    sgd_update(g, rg, lr, wg);
    sgd_update(g, rb, lr, wb);
    sgd_update(g, rc, lr, wc);
  }
  if (failed == 0)
    r.detail +=
        fmt::format("; {} SGD steps (lr {}), losses {:.6g}", steps, lr, fmt::join(losses, " -> "));
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
      return fmt::format("crucible run --suite model:zoo --model-filter {} --backend {} --seed {}",
                         name, backend, judge.seed);
    };
    out.push_back(std::move(sc));
  }
  return out;
}

}  // namespace crucible
