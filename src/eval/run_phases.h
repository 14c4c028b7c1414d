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

// Seconds a case may run beyond --timeout for crucible's own work on it, which grows with the
// call's size however fast the candidate is: materialising the inputs, the f64 reference, the
// copies and the comparison. 1 s per million elements of the call and per 1e10 FLOPs of its
// cost model, in whole seconds: none for a call below a million elements, and ~9 minutes for the
// shipped traces' largest (5.3e8 elements), which take 35-110 s alone on a 2-core machine. A hang
// is still killed. 0 for a case the suite judges itself (a model graph).
double size_allowance_s(const SuiteCase& sc);

// Decides every case of the plan not decided yet: skipped and unsupported ones without running
// anything, the others in parallel isolated workers. `trace`: where the workers' pool records
// what it did (--profile), or null.
void run_correctness(const RunPlan& plan, RunRecords& records, PoolTrace* trace = nullptr);

// With --perf, times the cases that passed and have no timing yet: one case at a time, nothing
// else running, candidate and baseline alternating. Without --perf, does nothing.
TimingLoad run_timing(const RunPlan& plan, RunRecords& records, PoolTrace* trace = nullptr);

}  // namespace crucible
