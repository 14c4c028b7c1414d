// `crucible run`: flags -> RunOptions -> crucible::run.
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "crucible/core/error.h"

namespace crucible {

// Cases of a traces suite with more elements (or estimated FLOPs) than these are skipped by
// default, and reported as skipped with the reason: the reference computes in f64 with simple
// loops on the CPU, and the largest trace calls (10^8 elements, 10^11 FLOPs) would take
// minutes each. `--max-numel 0 --max-flops 0` runs them all. See docs/architecture.md.
constexpr int64_t kDefaultTraceMaxNumel = int64_t{1} << 24;
constexpr double kDefaultTraceMaxFlops = 2e9;

void add_run_flags(CLI::App& app, RunFlags& f) {
  app.add_option("--suite", f.suite, "smoke | opinfo | traces:<file or folder>")
      ->capture_default_str();
  app.add_option("--backend", f.backend,
                 "the candidate backend (default: the fastest built-in CPU backend)");
  app.add_option("--reference", f.reference, "the backend taken as ground truth")
      ->capture_default_str();
  app.add_flag("--perf", f.perf, "time the cases (candidate vs baseline, alternating)");
  app.add_option("--baseline", f.baseline, "the backend timed against (default: the reference)");
  app.add_flag("--warm-cache", f.warm_cache, "do not flush the caches between timing samples");
  app.add_option("--ops", f.ops,
                 "comma-separated overloads (add.Tensor) or base names (add = every overload)");
  app.add_option("--dtypes", f.dtypes, "comma-separated dtypes of the first tensor: f32,f16,...");
  app.add_option("--seed", f.seed, "seed of the materialised inputs")->capture_default_str();
  app.add_option("--workers", f.workers, "worker processes (default: number of cores)");
  app.add_option("--threads", f.threads,
                 "threads each backend call may use, the same for candidate and baseline "
                 "(default: number of cores)");
  app.add_option("--timeout", f.timeout, "seconds per case before it is killed as timed_out")
      ->capture_default_str();
  app.add_option("--memory-limit", f.memory_limit, "per-worker memory limit (e.g. 4G, 512M)")
      ->capture_default_str();
  app.add_option("--out", f.out, "run folder (default: runs/<suite>-<backend>-<timestamp>)");
  app.add_option("--resume", f.resume, "continue the run in this folder, skipping finished cases");
  app.add_option("--op", f.op, "with --case: the op of a single case (aten.add.Tensor)");
  app.add_option("--case", f.case_text, "with --op: a single case in the trace grammar");
  app.add_option("--p", f.p, "threshold of perf@p (speed-up)")->capture_default_str();
  app.add_option(
      "--max-numel", f.max_numel,
      "traces: skip cases with more tensor elements than this (0: no cap; default 2^24)");
  app.add_option(
      "--max-flops", f.max_flops,
      "traces: skip matmul/convolution cases estimated above this many FLOPs (0: no cap; "
      "default 2e9)");
  app.add_option("--perf-dtype", f.perf_dtype,
                 "with --perf: time the cases with floating tensors (f16/bf16/f32/f64) and "
                 "floating dtype arguments rewritten to this dtype, e.g. f32");
  app.add_option("--calls-per-op", f.calls_per_op,
                 "traces: at most this many distinct calls per op, an even spread of its sizes "
                 "within the caps (0: every call); with --perf, the real-model performance run");
  app.add_flag("-q,--quiet", f.quiet, "no progress and no summary table");
  app.add_flag("--no-sandbox", f.no_sandbox,
               "run untrusted kernels (plugin:, dir:) without the sandbox, for debugging them");
  app.add_option(
      "--ops-directory", f.ops_directory,
      "with --backend directory: the kernel folder (the same as --backend dir:<folder>)");
  app.add_option("--kernels-dir", f.kernels_dir,
                 "with --backend pregenerated: the kernel folder (the same as --backend "
                 "dir:<folder>)");
}

size_t parse_bytes(const std::string& text, const std::string& flag) {
  std::string t = text;
  if (t.empty()) usage_error(flag + " is empty; give a size like 4G or 512M");
  double mult = 1;
  char last = static_cast<char>(std::toupper(static_cast<unsigned char>(t.back())));
  if (last == 'B') {
    t.pop_back();
    last = t.empty() ? '0' : static_cast<char>(std::toupper(static_cast<unsigned char>(t.back())));
  }
  if (last == 'K' || last == 'M' || last == 'G' || last == 'T') {
    mult = last == 'K'   ? 1024.0
           : last == 'M' ? 1048576.0
           : last == 'G' ? 1073741824.0
                         : 1099511627776.0;
    t.pop_back();
  }
  try {
    size_t used = 0;
    double v = std::stod(t, &used);
    if (used != t.size() || v < 0) throw std::invalid_argument("");
    return static_cast<size_t>(v * mult);
  } catch (const std::exception&) {
    usage_error(
        fmt::format("{} '{}' is not a size; use e.g. 4G, 512M or a number of bytes", flag, text));
  }
}

namespace {

std::vector<std::string> split_csv(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// --resume: the earlier run's own command line, from its manifest.
RunFlags flags_of_run(const std::string& dir, std::vector<std::string>& argv) {
  std::string mpath = dir + "/manifest.json";
  std::ifstream f(mpath);
  if (!f) input_error("--resume " + dir, "no manifest.json there; is it a crucible run folder?");
  nlohmann::json m = nlohmann::json::parse(f, nullptr, false);
  if (m.is_discarded() || !m.contains("argv") || !m["argv"].is_array())
    input_error(mpath, "not a crucible manifest (no argv)");
  argv = m["argv"].get<std::vector<std::string>>();
  // Re-parse the earlier flags (after "crucible run").
  CLI::App app;
  RunFlags rf;
  add_run_flags(app, rf);
  std::vector<std::string> rest;
  for (size_t i = 2; i < argv.size(); ++i) rest.push_back(argv[i]);
  std::reverse(rest.begin(), rest.end());
  try {
    app.parse(rest);
  } catch (const CLI::ParseError& e) {
    input_error(mpath, std::string("cannot re-read the earlier command line: ") + e.what());
  }
  return rf;
}

}  // namespace

int command_run(RunFlags f, const std::vector<std::string>& argv_in) {
  std::vector<std::string> argv = argv_in;
  if (!f.resume.empty()) {
    std::string dir = f.resume;
    int workers = f.workers;
    bool quiet = f.quiet;
    f = flags_of_run(dir, argv);
    f.resume = dir;
    f.out.clear();
    if (workers > 0) f.workers = workers;
    f.quiet = quiet;
  }

  RunOptions o;
  o.argv = argv;
  o.suite.suite = f.suite;
  o.suite.ops = split_csv(f.ops);
  if (!f.ops.empty() && o.suite.ops.empty()) usage_error("--ops is empty");
  for (const std::string& d : split_csv(f.dtypes)) {
    auto t = parse_dtype(d);
    if (!t) {
      std::string valid;
      for (DType x : all_dtypes())
        valid += std::string(valid.empty() ? "" : " ") + std::string(dtype_code(x));
      usage_error(fmt::format("unknown dtype '{}' in --dtypes; valid: {}", d, valid));
    }
    o.suite.dtypes.insert(*t);
  }
  if (!f.perf_dtype.empty()) {
    const auto t = parse_dtype(f.perf_dtype);
    if (!t || !(*t == DType::Float16 || *t == DType::BFloat16 || *t == DType::Float32 ||
                *t == DType::Float64))
      usage_error("--perf-dtype '" + f.perf_dtype + "': expected one of f16, bf16, f32, f64");
    if (!f.perf) usage_error("--perf-dtype needs --perf (it retypes the timed cases)");
    o.suite.perf_dtype = *t;
  }
  if (f.calls_per_op < 0)
    usage_error(fmt::format("--calls-per-op {}: expected 0 (every call) or a positive count",
                            f.calls_per_op));
  if (f.calls_per_op > 0 && !f.suite.starts_with("traces:"))
    usage_error(
        "--calls-per-op applies to --suite traces:<path> (the opinfo suite's --perf "
        "cases already take a few real-model calls per op)");
  o.suite.calls_per_op = f.calls_per_op;
  o.suite.seed = f.seed;
  o.suite.max_numel = f.max_numel >= 0 ? f.max_numel : kDefaultTraceMaxNumel;
  o.suite.max_flops = f.max_flops >= 0 ? f.max_flops : kDefaultTraceMaxFlops;
  o.backend = f.backend;
  // BackendBench's spellings of a kernel folder.
  for (auto [name, flag, folder] : {std::tuple<std::string, std::string, std::string>{
                                        "directory", "--ops-directory", f.ops_directory},
                                    {"pregenerated", "--kernels-dir", f.kernels_dir}}) {
    if (f.backend == name) {
      if (folder.empty())
        usage_error(fmt::format("--backend {} needs {} <folder> (or write --backend dir:<folder>)",
                                name, flag));
      o.backend = "dir:" + folder;
    } else if (!folder.empty()) {
      usage_error(
          fmt::format("{} goes with --backend {} (or write --backend dir:{})", flag, name, folder));
    }
  }
  o.sandbox = !f.no_sandbox;
  o.reference = f.reference;
  o.baseline = f.baseline;
  o.perf = f.perf;
  if (!f.baseline.empty() && !f.perf)
    usage_error("--baseline only matters with --perf (it is the backend timed against)");
  o.cold_cache = !f.warm_cache;
  if (f.workers < 0) usage_error("--workers must be at least 1");
  o.workers = f.workers;
  if (f.threads < 0) usage_error("--threads must be at least 1 (0 or absent: number of cores)");
  o.threads = f.threads;
  o.timeout_s = f.timeout;
  o.memory_limit = parse_bytes(f.memory_limit, "--memory-limit");
  o.out = f.out;
  o.resume = f.resume;
  o.p = f.p;
  o.single_op = f.op;
  o.single_case = f.case_text;
  o.progress = !f.quiet;
  return run(o);
}

}  // namespace crucible
