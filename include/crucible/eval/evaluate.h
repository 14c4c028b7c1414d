// Evaluating one case: materialise its inputs, run the reference and the candidate on separate
// copies, compare every output and every mutated argument; and timing a case.
#pragma once

#include "crucible/backends/backend.h"
#include "crucible/cases/case.h"
#include "crucible/results/result.h"

namespace crucible {

// Runs inside a worker process. Never throws for anything a kernel does: the verdict says it.
CaseResult evaluate_case(const Case& c, const OpDef& op, Backend& reference, Backend& candidate);
// The same on given inputs (bound arguments of the case's call: the op-by-op flow's real
// intermediate tensors, a reproducer's saved tensors) instead of inputs materialised from it.
CaseResult evaluate_case_with_inputs(const Case& c, const OpDef& op, const Values& inputs,
                                     Backend& reference, Backend& candidate);

struct TimingOptions {
  int warmup = 2;
  int min_samples = 5;
  int max_samples = 50;
  double min_seconds = 0.1;       // per backend: keep sampling until both have at least this much
  double max_wall_seconds = 2.0;  // per case, flushes included (min_samples are always taken)
  bool cold_cache = true;         // flush the caches before each sample of memory-bound cases
  bool settle_threads = true;  // before each turn, wait until no other thread of the process runs
};

// Times candidate and baseline alternating on the same inputs, after warm-up; reports medians,
// p10/p90, speed-up and the candidate's GB/s and GFLOP/s from the op's cost model.
TimingRecord time_case(const Case& c, const OpDef& op, Backend& candidate, Backend& baseline,
                       const TimingOptions& opts);

}  // namespace crucible
