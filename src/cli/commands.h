// The subcommands of `crucible`. Each returns the process exit status.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "crucible/eval/run.h"

namespace crucible {

// Cases of a traces suite with more elements (or estimated FLOPs) than these are skipped by
// default, and reported as skipped with the reason. The reference computes real-model calls in
// f64 with BLAS products and threaded loops, so the caps are only a safety net above the largest
// shipped call (data/traces: 5.3e8 elements, 1.2e11 FLOPs); `--max-numel 0 --max-flops 0` lifts
// them. See docs/architecture.md.
constexpr int64_t kDefaultTraceMaxNumel = int64_t{1} << 30;
constexpr double kDefaultTraceMaxFlops = 1e12;

// The values of `crucible run`'s flags, each validated as it is parsed (add_run_flags): a value
// that cannot mean anything is a Usage error naming the flag. command_run checks the flags
// against each other.
struct RunFlags {
  std::string suite = "smoke";
  std::string backend;
  std::string reference = "ref";
  std::string baseline;
  bool perf = false;
  bool warm_cache = false;
  std::vector<std::string> ops;     // --ops terms (empty: not given)
  std::set<DType> dtypes;           // --dtypes (empty: not given)
  std::optional<DType> perf_dtype;  // --perf-dtype f32: timed cases' floating tensors as this
  int calls_per_op = 0;             // --calls-per-op N: traces, at most N distinct calls per op
  uint64_t seed = 0;
  int workers = 0;  // 1 .. max_parallelism(); 0: not given (one per core)
  int threads = 0;  // 1 .. max_parallelism(); 0: not given (one per core)
  double timeout = 60;
  size_t memory_limit = size_t{4} << 30;  // 0: no limit
  std::string out;
  std::string resume;
  std::string op;
  std::string case_text;
  double p = 1.0;
  int64_t max_numel = kDefaultTraceMaxNumel;  // 0: no cap
  double max_flops = kDefaultTraceMaxFlops;   // 0: no cap
  bool quiet = false;
  bool no_sandbox = false;
  std::string ops_directory;       // BackendBench's --backend directory --ops-directory <folder>
  std::string kernels_dir;         // BackendBench's --backend pregenerated --kernels-dir <folder>
  std::vector<std::string> given;  // the long names of the flags given on the command line
};

// The flags of `app` given on its command line (their long names), for RunFlags::given.
std::vector<std::string> given_flags(const CLI::App& app);
// The most worker processes or threads a flag may ask for: 4 x the cores (more only thrash).
int max_parallelism();

// Adds `crucible run`'s flags to `app`; parsing fills `f` (src/cli/run_flags.cpp).
void add_run_flags(CLI::App& app, RunFlags& f);
// Parses "4G", "512M", "65536" into bytes; a Usage error names the flag otherwise.
// Refuses values that cannot mean anything: not finite, or above 2^50 bytes (1 PiB).
size_t parse_bytes(const std::string& text, const std::string& flag);

int command_run(RunFlags flags, const std::vector<std::string>& argv);
int command_ops(const std::string& backend, bool json);
// meta: each call of a catalog op also goes through the op's meta function (outputs printed,
// invalid calls listed with file:line, exit status 1 when there are any).
int command_parse(const std::string& path, bool quiet, bool meta);
// threads 0: number of cores; cached: reuse this machine's cached peaks when present.
int command_calibrate(int threads, bool cached, bool json);

}  // namespace crucible
