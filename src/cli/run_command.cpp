// `crucible run`: flags -> RunOptions -> crucible::run.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
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
  constexpr double kMaxBytes = 1125899906842624.0;  // 2^50: 1 PiB
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
  double v = 0;
  try {
    size_t used = 0;
    // Digits and a decimal point only: no "inf", "nan", hex or exponents.
    if (t.empty() || t.find_first_not_of("0123456789.") != std::string::npos)
      throw std::invalid_argument("");
    v = std::stod(t, &used);
    if (used != t.size()) throw std::invalid_argument("");
  } catch (const std::exception&) {
    usage_error(
        fmt::format("{} '{}' is not a size; use e.g. 4G, 512M or a number of bytes", flag, text));
  }
  if (!std::isfinite(v * mult) || v * mult > kMaxBytes)
    usage_error(fmt::format("{} '{}' is beyond any machine's memory (at most 1024T, 2^50 bytes)",
                            flag, text));
  return static_cast<size_t>(v * mult);
}

std::vector<std::string> given_flags(const CLI::App& app) {
  std::vector<std::string> out;
  for (const CLI::Option* opt : app.get_options())
    if (opt->count() > 0) out.push_back(opt->get_name(false, false));
  return out;
}

int max_parallelism() { return 4 * static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN))); }

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
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    input_error("--resume " + dir, "not a folder; give the run folder of the run to continue");
  std::string mpath = dir + "/manifest.json";
  if (!std::filesystem::is_regular_file(mpath, ec))
    input_error("--resume " + dir, "no manifest.json file there; is it a crucible run folder?");
  std::ifstream f(mpath);
  if (!f) input_error(mpath, "cannot read the manifest");
  nlohmann::json m = nlohmann::json::parse(f, nullptr, false);
  if (m.is_discarded()) input_error(mpath, "not JSON; the manifest is damaged");
  if (!m.is_object() || !m.contains("argv") || !m["argv"].is_array())
    input_error(mpath, "not a crucible manifest (no \"argv\" list)");
  argv.clear();
  for (const nlohmann::json& a : m["argv"]) {
    if (!a.is_string())
      input_error(mpath, "\"argv\" holds " + a.dump() + ", not a string; the manifest is damaged");
    argv.push_back(a.get<std::string>());
  }
  if (argv.size() < 2 || argv[1] != "run")
    input_error(mpath, "\"argv\" is not the command line of a crucible run");
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
  auto given = [&](const std::string& name) {
    return std::find(f.given.begin(), f.given.end(), name) != f.given.end();
  };
  if (given("--resume")) {
    // A resumed run keeps the flags it started with; a flag it would ignore is refused.
    std::vector<std::string> ignored;
    for (const std::string& g : f.given)
      if (g != "--resume" && g != "--workers" && g != "--quiet") ignored.push_back(g);
    if (!ignored.empty()) {
      std::string names;
      for (const std::string& g : ignored) names += (names.empty() ? "" : ", ") + g;
      usage_error("--resume continues a run with the flags it was started with; " + names +
                  (ignored.size() == 1 ? " is" : " are") +
                  " not taken with it (only --workers and --quiet are)");
    }
    if (f.resume.empty()) usage_error("--resume is empty; give the run folder to continue");
  }
  if (!f.op.empty() || !f.case_text.empty() || given("--op") || given("--case")) {
    for (const char* other : {"--ops", "--suite", "--dtypes", "--calls-per-op"})
      if (given(other))
        usage_error(std::string("--op/--case run one case; ") + other +
                    " selects the cases of a suite and cannot be given with them");
  }
  for (const char* flag : {"--ops", "--dtypes"}) {
    const std::string& v = std::string(flag) == "--ops" ? f.ops : f.dtypes;
    if (given(flag) && split_csv(v).empty())
      usage_error(std::string(flag) + " is empty; name at least one (comma-separated)");
  }
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
  if (f.seed.empty() || f.seed.find_first_not_of("0123456789") != std::string::npos ||
      f.seed.size() > 20 || (f.seed.size() == 20 && f.seed > "18446744073709551615"))
    usage_error("--seed '" + f.seed + "': expected a non-negative integer below 2^64");
  o.suite.seed = std::stoull(f.seed);
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
  if (f.workers > max_parallelism())
    usage_error(fmt::format(
        "--workers {}: at most {} (4 x the {} cores); more workers only compete for them",
        f.workers, max_parallelism(), max_parallelism() / 4));
  o.workers = f.workers;
  if (f.threads < 0) usage_error("--threads must be at least 1 (0 or absent: number of cores)");
  if (f.threads > max_parallelism())
    usage_error(fmt::format("--threads {}: at most {} (4 x the {} cores)", f.threads,
                            max_parallelism(), max_parallelism() / 4));
  o.threads = f.threads;
  if (!std::isfinite(f.timeout) || f.timeout <= 0 || f.timeout > 1e6)
    usage_error(fmt::format("--timeout {}: expected a positive number of seconds (at most 1e6)",
                            f.timeout));
  o.timeout_s = f.timeout;
  if (!std::isfinite(f.p) || f.p <= 0)
    usage_error(fmt::format("--p {}: expected a positive speed-up threshold", f.p));
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
