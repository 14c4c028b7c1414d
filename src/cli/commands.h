// The subcommands of `crucible`. Each returns the process exit status.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "crucible/eval/run.h"

namespace crucible {

// The raw values of `crucible run`'s flags, validated by command_run.
struct RunFlags {
  std::string suite = "smoke";
  std::string backend;
  std::string reference = "ref";
  std::string baseline;
  bool perf = false;
  bool warm_cache = false;
  std::string ops;
  std::string dtypes;
  std::string perf_dtype;  // --perf-dtype f32: timed cases' floating tensors as this dtype
  int calls_per_op = 0;    // --calls-per-op N: traces, at most N distinct calls per op
  std::string seed = "0";
  int workers = 0;
  int threads = 0;
  double timeout = 60;
  std::string memory_limit = "4G";
  std::string out;
  std::string resume;
  std::string op;
  std::string case_text;
  double p = 1.0;
  int64_t max_numel = -1;  // -1: the suite's default
  double max_flops = -1;   // -1: the suite's default
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
