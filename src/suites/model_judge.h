// Judging a whole model graph on a candidate backend, as the model suite does in a worker:
// golden (the graph in f64 on `ref`), baseline (the graph in its own dtypes on `ref`) and the
// candidate's run; every graph output (for training graphs the loss and every parameter
// gradient) judged by the f64 arbiter (crucible/compare/arbiter.h). When the model fails, the
// run is repeated keeping every value, and the first node whose outputs diverge beyond the
// arbiter is named, with what lies downstream of it.
#pragma once

#include <cstdint>
#include <string>

#include "crucible/backends/backend.h"
#include "crucible/graph/graph.h"
#include "crucible/results/result.h"

namespace crucible {

struct ModelJudgeOptions {
  uint64_t seed = 0;
  double k = 3.0;
  std::string fallback;  // a backend for the ops the candidate lacks; empty: none
};

// The verdict of graph `g` on `candidate`: Passed, Failed (wrong outputs, or the candidate
// raised: the node is named), or Unsupported (the ops it lacks, each listed). `r` comes in with
// the case's identity filled and goes out with status, detail and one check per graph output.
void judge_model(const graph::Graph& g, Backend& candidate, const ModelJudgeOptions& options,
                 CaseResult& r);

}  // namespace crucible
