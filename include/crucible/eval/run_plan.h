// The plan of a run: everything `crucible run` decides before any case runs. Making it resolves
// the options, checks the backends and the sandbox, builds the cases, takes the run folder (its
// lock, results.jsonl, what a resumed run already holds) and writes its manifest.json; all that
// can be refused is refused there. The correctness and timing phases then work from the plan
// (src/eval/run_phases.h), and run() writes the reports.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "crucible/eval/calibrate.h"
#include "crucible/eval/run.h"
#include "crucible/eval/shard.h"
#include "crucible/report/manifest.h"
#include "crucible/results/result.h"
#include "crucible/suites/suite.h"

namespace crucible {

class ResultsFile;
class RunFolderLock;
class ScratchRoot;
struct SandboxOptions;

struct RunPlan {
  RunPlan();
  ~RunPlan();
  RunPlan(RunPlan&&) noexcept;
  RunPlan& operator=(RunPlan&&) noexcept;

  // The options with their defaults filled in: the backend, the baseline, the workers and
  // threads, the suite's name ("case" for --op/--case), the run folder (`out`, also when
  // resuming).
  RunOptions options;
  // The candidate, the reference and (with --perf) the baseline, as the manifest names them.
  std::vector<BackendInfo> backends;

  // Untrusted kernels (plugin:, dir:) run in sandboxed workers unless --no-sandbox; the sandbox
  // was entered once in a probe process. Set only when sandboxed: the workers' scratch folders
  // (removed with the plan) and the sandbox they enter.
  bool sandboxed = false;
  std::unique_ptr<ScratchRoot> scratch;
  std::unique_ptr<SandboxOptions> sandbox;

  // The GPUs the workers are spread over (worker slot k gets the (k mod n)-th as its only
  // device; crucible/eval/gpus.h); empty: the workers see what the environment shows.
  std::vector<std::string> gpus;
  // The timing phase's workers (timing_workers below).
  int timing_workers = 1;

  // The suite's cases (or the single --op/--case), in order; with --shard, this shard's.
  std::vector<SuiteCase> cases;
  // With --shard: the split, as the manifest records it (spec.count 0: not sharded).
  ShardInfo shard;

  // The run folder, locked until the plan ends; results.jsonl, open for appending.
  std::unique_ptr<RunFolderLock> lock;
  std::string results_path;
  std::unique_ptr<ResultsFile> results_file;

  // What a resumed run already holds (its results.jsonl), and the ids of those cases and timings.
  std::vector<CaseResult> previous_results;
  std::vector<TimingRecord> previous_timings;
  std::set<std::string> done_cases, done_timings;

  // A backend of the run is on CUDA (its default workers and timing workers follow).
  bool on_cuda = false;
  // --perf: the machine's peaks, for "% of peak" (also in the manifest). Measured on the host
  // only when no backend of the run is on CUDA: a GPU's calls are not judged against the host's
  // triad and f32 FLOP/s (zero: no "% of peak").
  MachinePeaks peaks;
};

// Makes the plan of a run (see above). Usage and input errors are thrown, as run() throws them.
RunPlan make_run_plan(const RunOptions& opts);

// The cores online (at least 1): the default --workers and --threads.
int online_cores();

// The default --workers: the cores; with a backend on CUDA, 8 per GPU the run spreads over
// (`gpus`: 0 when it does not spread, one GPU), 16 at most, and never more than the cores.
int default_workers(int cores, bool on_cuda, size_t gpus);

// The default --memory-limit ("auto"): each of the correctness phase's `workers` gets an equal
// share of three quarters of `memory` (usable_memory()), and at least 1 GiB. A fixed 4 GiB
// refused the largest real-model calls (two [128256, 2048] f32 inputs, their copies and the
// f64 reference's take 8 GB) on a machine that had room for them, and let 16 workers of a
// 32 GB machine promise 64 GB.
size_t default_memory_limit(int workers, size_t memory);

// The memory this process may use: the machine's physical memory, or its cgroup's limit
// (cgroup v2 memory.max) where that is lower.
size_t usable_memory();

// The threads each backend call may use in the correctness phase, whose `workers` run side by
// side: the worker's share of the `cores`, at least 1 and at most --threads. (The timing phase
// runs alone and uses --threads.) 64 workers of 64 threads each on a 64-core host made a
// [3072, 64, 9] bmm run past 60 s, and the threads' own buffers reached the memory limit.
int correctness_threads(int threads, int cores, int workers);

// The timing phase's workers: one per GPU the run spreads over with a backend on CUDA (each
// worker times on its own device), else one (the CPU's timings need the machine to themselves).
int timing_workers(bool on_cuda, size_t gpus);

}  // namespace crucible
