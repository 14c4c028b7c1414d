// The fastest policy's trials in a worker process (see kernel_trials.h).
#include "crucible/eval/kernel_trials.h"

#include <map>
#include <memory>
#include <new>

#include <nlohmann/json.hpp>

#include "crucible/core/error.h"
#include "crucible/core/tensor.h"
#include "crucible/eval/workers.h"

namespace crucible {

models::TrialRunner isolated_trial_runner(const KernelTrialOptions& options) {
  return [options](const graph::Graph& g, const graph::TensorMap& values,
                   std::vector<models::Trial>& trials) {
    if (trials.empty()) return;
    std::map<std::string, std::unique_ptr<Backend>> mine;  // the worker's own backends
    BackendRegistry::instance().prepare(options.backends);
    WorkerOptions wo;
    wo.workers = 1;
    wo.timeout_s = options.timeout_s;
    wo.memory_limit = options.memory_limit;
    wo.max_batch = 1;
    wo.on_worker_start = [&] {
      set_allocation_limit(options.memory_limit);
      mine.clear();
      for (const std::string& name : options.backends)
        mine.emplace(name, BackendRegistry::instance().create(name));
    };
    WorkerPool pool(wo, [&](size_t i) {
      models::Trial t = trials.at(i);
      nlohmann::json report;
      try {
        const auto it = mine.find(t.backend);
        if (it == mine.end()) internal_error("kernel trials: no backend " + t.backend);
        models::run_trial(g, *it->second, values, t);
        if (t.seconds)
          report["seconds"] = *t.seconds;
        else
          report["why"] = t.why;
      } catch (const Error& e) {
        report["why"] = std::string("raised: ") + e.what();
      } catch (const std::bad_alloc&) {
        report["why"] = "allocation failed (std::bad_alloc)";
      }
      return report.dump();
    });
    std::vector<size_t> all(trials.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    pool.run(
        all,
        [&](size_t i, const std::string& payload) {
          nlohmann::json j;
          try {
            j = nlohmann::json::parse(payload);
          } catch (const nlohmann::json::exception& e) {
            throw MalformedReport(e.what());
          }
          if (j.contains("seconds") && j["seconds"].is_number())
            trials.at(i).seconds = j["seconds"].get<double>();
          else if (j.contains("why") && j["why"].is_string())
            trials.at(i).why = j["why"].get<std::string>();
          else
            throw MalformedReport("a trial report with neither seconds nor why");
        },
        [&](size_t i, const JobFailure& f) {
          trials.at(i).why =
              (f.kind == JobFailure::Kind::Crashed ? "crashed: " : "timed out: ") + f.detail;
        });
  };
}

}  // namespace crucible
