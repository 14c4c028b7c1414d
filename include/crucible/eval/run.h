// A run: build the suite, evaluate every case in isolated workers, time the passing cases with
// --perf, and write the run folder (manifest.json, results.jsonl, summary.json,
// operator_summary.csv, SUMMARY.md, junit.xml, report.html); record the run in the history.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "crucible/eval/shard.h"
#include "crucible/suites/suite.h"

namespace crucible {

// The values are used as given: `crucible run` refuses the ones that cannot mean anything as it
// parses its flags (src/cli/run_flags.cpp) and checks the flags against each other
// (src/cli/run_command.cpp).
// --memory-limit's default ("auto"): each worker's share of the machine's memory, resolved with
// the workers (default_memory_limit in crucible/eval/run_plan.h).
inline constexpr size_t kMemoryLimitAuto = SIZE_MAX;

struct RunOptions {
  SuiteOptions suite;
  std::string backend;  // candidate
  std::string reference = "ref";
  std::string baseline;  // empty: the reference
  bool perf = false;
  bool cold_cache = true;
  int workers = 0;  // 0: number of cores
  // --gpus: the GPUs the workers are spread over, one per worker in turn ("auto": every visible
  // one when there are several; "all"; or a list such as "0,1"; crucible/eval/gpus.h).
  std::string gpus = "auto";
  int threads = 0;        // threads per backend call (Backend::set_num_threads); 0: number of cores
  double timeout_s = 60;  // positive and finite
  size_t memory_limit = kMemoryLimitAuto;  // 0: no limit
  std::string out;                         // run folder; empty: runs/<suite>-<backend>-<timestamp>
  std::string resume;                      // run folder to continue
  double p = 1.0;                          // perf@p threshold
  std::vector<std::string> argv;           // the command line, for the manifest and --resume
  bool progress = true;                    // console progress output
  // Untrusted candidates (plugin:, dir:) run in sandboxed workers (src/sandbox/sandbox.h);
  // `--no-sandbox` turns it off for debugging a kernel.
  bool sandbox = true;
  // A single case (--op/--case): both or neither.
  std::string single_op;
  std::string single_case;
  // With the single case: its tensors read from this safetensors file (saved_inputs.h).
  std::string single_inputs;
  // --shard i/n: run only this machine's share of the suite's cases (crucible/eval/shard.h);
  // `crucible merge` joins the shards' run folders.
  ShardSpec shard;
  // --sanitize: after the correctness phase, the failed, crashed and timed-out cases run again
  // alone under this memory checker ("memcheck"; empty: none), its report in their details
  // (src/eval/sanitize.h).
  std::string sanitize;
  // The run history the finished run is recorded in (report/history.h): empty for the default
  // (default_history_path()), "none" for none.
  std::string history;
  // --profile: write profile.json (where the run's time went: its phases and what each worker
  // did; crucible/eval/run_profile.h) to the run folder and summarise it on the console.
  bool profile = false;
};

// Runs and returns the process exit status: 0 every case passed, 1 some case did not.
// Usage and input errors are thrown (exit status 2 in the CLI).
int run(const RunOptions& opts);

}  // namespace crucible
