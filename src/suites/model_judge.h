// Judging a whole model graph on a candidate backend, as the model suite does in a worker:
// golden (the graph in f64 on `ref`), the baselines (the graph in its own dtypes on `ref`, once
// as it is and perturbed_runs times perturbed by rounding) and the candidate's run; every graph
// output (for training graphs the loss and every parameter gradient) judged by the f64 arbiter
// (crucible/compare/arbiter.h). When the model fails, the run is repeated keeping every value, and
// the first node whose outputs diverge beyond the arbiter is named, with what lies downstream of
// it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "crucible/backends/backend.h"
#include "crucible/graph/executor.h"
#include "crucible/graph/graph.h"
#include "crucible/results/result.h"

namespace crucible {

struct ModelJudgeOptions {
  uint64_t seed = 0;
  double k = 3.0;
  // Baseline runs besides the unperturbed one: inputs, parameters and the results of ops that
  // accumulate perturbed by honest rounding (graph::ExecOptions::perturb_ulps), each from its
  // own seed.
  int perturbed_runs = 3;
  double perturb_ulps = 1;
  std::string fallback;  // a backend for the ops the candidate lacks; empty: none
};

// The options of baseline run j (0: unperturbed; 1..perturbed_runs: perturbed, each from its
// own seed) with `base`'s seed, weights and inputs (never golden).
graph::ExecOptions baseline_options(const ModelJudgeOptions& options,
                                    const graph::ExecOptions& base, int j);
// The baseline runs of `g` on ref with `base`'s seed, weights and inputs (never golden): the
// unperturbed run first, then options.perturbed_runs perturbed ones.
std::vector<graph::ExecResult> baseline_runs(const graph::Graph& g,
                                             const ModelJudgeOptions& options,
                                             const graph::ExecOptions& base);

// The verdict of graph `g` on `candidate`: Passed, Failed (wrong outputs, or the candidate
// raised: the node is named), or Unsupported (the ops it lacks, each listed). `r` comes in with
// the case's identity filled and goes out with status, detail and one check per graph output.
void judge_model(const graph::Graph& g, Backend& candidate, const ModelJudgeOptions& options,
                 CaseResult& r);

}  // namespace crucible
