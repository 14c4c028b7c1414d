// Kernel policies: run a model graph with a per-op choice of backend, as gpt.rs's functional
// overrides do. `force` names the backend of given ops; `fastest` times, for each op of the
// graph, every backend that has it and passed its correctness check on the model's own calls
// (each node run alone on its real inputs, from a ref run of the graph, compared with ref's
// result), and picks the fastest. The trials run through a TrialRunner: crucible's runs them
// in an isolated worker process, where a backend whose kernel crashes, hangs or runs out of
// memory is rejected for that op; choices are cached by graph, op and backends. A partial
// backend so runs a whole model with its own kernels wherever they exist and are correct, and
// the report says which backend ran every op.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "crucible/backends/backend.h"
#include "crucible/graph/graph.h"
#include "crucible/graph/values.h"

namespace crucible::models {

struct KernelPolicy {
  std::vector<std::string> backends;         // candidates, in order of preference
  std::map<std::string, std::string> force;  // op -> backend (one of `backends`)
  bool fastest = false;                      // else: the first backend that has the op
  std::string cache;                         // a JSON file of earlier choices ("" : none)
};

struct OpChoice {
  std::string op;
  std::string backend;
  std::string why;                              // "forced", "fastest", "first with the op", ...
  std::map<std::string, double> seconds;        // fastest: each correct backend's time
  std::map<std::string, std::string> rejected;  // backend -> why it was not a candidate
};

// One timing trial of `fastest`: every call of `op` in the graph on `backend`.
struct Trial {
  std::string op;
  std::string backend;
  std::optional<double> seconds;  // correct on every call: the best of three timings
  std::string why;                // else: why it is not a candidate
};

// Runs one trial on `b` (the backend named by t.backend): each node of the op alone on its real
// inputs from `values` (a ref run that kept every value), compared with ref's result.
void run_trial(const graph::Graph& g, Backend& b, const graph::TensorMap& values, Trial& t);

// Runs every trial (fills seconds or why). crucible's runs them in an isolated worker process
// (crucible/eval/kernel_trials.h), so a crashing kernel is a rejected trial.
using TrialRunner = std::function<void(const graph::Graph& g, const graph::TensorMap& values,
                                       std::vector<Trial>& trials)>;

// Chooses a backend for every op of `g` (an Unsupported error when no backend runs an op);
// `fastest` runs its trials through `run_trials`.
std::vector<OpChoice> choose_kernels(const graph::Graph& g, const KernelPolicy& policy,
                                     uint64_t seed, const TrialRunner& run_trials);

// A backend that runs each op on its chosen backend, counting the calls.
class PolicyBackend final : public Backend {
 public:
  PolicyBackend(const std::vector<OpChoice>& choices, const std::vector<std::string>& backends);
  std::string name() const override { return "policy"; }
  // Untrusted when one of its backends is (plugin:, dir:); isolation reaches each of them.
  bool untrusted() const override;
  void isolate_candidates(const CandidateIsolation& isolation) override;
  bool has_op(const OpDef& op) const override { return choice_.contains(op.name); }
  bool supports(const OpDef& op, const Values& args, std::string* why) const override;
  Values run(const OpDef& op, const Values& args) override;
  void manual_seed(uint64_t seed) override;
  // op -> (backend, calls)
  const std::map<std::string, std::pair<std::string, int64_t>>& ran() const { return ran_; }

 private:
  Backend& of(const std::string& op) const;
  std::map<std::string, std::unique_ptr<Backend>> backends_;
  std::map<std::string, std::string> choice_;
  std::map<std::string, std::pair<std::string, int64_t>> ran_;
};

}  // namespace crucible::models
