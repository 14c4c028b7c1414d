// The two phases of a run, working from its plan (crucible/eval/run_plan.h): correctness (every
// case, in parallel isolated workers) and, with --perf, timing (the passing cases, one at a
// time). Each decided case or timing is appended to results.jsonl at once and kept.
#pragma once

#include <vector>

#include "crucible/eval/pool_trace.h"
#include "crucible/eval/run_plan.h"
#include "crucible/results/result.h"

namespace crucible {

// The records of a run: those of a resumed run first, then those decided now.
struct RunRecords {
  std::vector<CaseResult> results;
  std::vector<TimingRecord> timings;
};

// The machine's load: the 1-minute load average and the tasks runnable right now (-1: unknown).
struct LoadSample {
  double loadavg = -1;
  int running = -1;
};

// The load around the timing phase.
struct TimingLoad {
  LoadSample before, after;
};

// Decides every case of the plan not decided yet: skipped and unsupported ones without running
// anything, the others in parallel isolated workers. `trace`: where the workers' pool records
// what it did (--profile), or null.
void run_correctness(const RunPlan& plan, RunRecords& records, PoolTrace* trace = nullptr);

// With --perf, times the cases that passed and have no timing yet: one case at a time, nothing
// else running, candidate and baseline alternating. Without --perf, does nothing.
TimingLoad run_timing(const RunPlan& plan, RunRecords& records, PoolTrace* trace = nullptr);

}  // namespace crucible
