// `crucible run`: the parsed flags (src/cli/run_flags.cpp), checked against each other ->
// RunOptions -> crucible::run.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backends/dir/dir_backend.h"
#include "cli/commands.h"
#include "crucible/core/error.h"

namespace crucible {

namespace {

// --resume: the earlier run's own command line, from its manifest. `new_workers`: the earlier
// --workers is left out (it may exceed this machine's bound when the run started elsewhere).
RunFlags flags_of_run(const std::string& dir, std::vector<std::string>& argv, bool new_workers) {
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
  for (size_t i = 2; i < argv.size(); ++i) {
    if (new_workers && argv[i] == "--workers") {
      ++i;
      continue;
    }
    if (new_workers && argv[i].starts_with("--workers=")) continue;
    rest.push_back(argv[i]);
  }
  std::reverse(rest.begin(), rest.end());
  try {
    app.parse(rest);
  } catch (const CLI::ParseError& e) {
    input_error(mpath, std::string("cannot re-read the earlier command line: ") + e.what());
  } catch (const Error& e) {
    input_error(mpath, std::string("cannot re-read the earlier command line: ") + e.what());
  }
  return rf;
}

// The flags given with --resume that the resumed run would not use: all but --workers,
// --quiet, --profile and --history (the run folder's manifest holds the rest).
void refuse_flags_ignored_by_resume(const RunFlags& f) {
  std::vector<std::string> ignored;
  for (const std::string& g : f.given)
    if (g != "--resume" && g != "--workers" && g != "--quiet" && g != "--history" &&
        g != "--profile")
      ignored.push_back(g);
  if (ignored.empty()) return;
  std::string names;
  for (const std::string& g : ignored) names += (names.empty() ? "" : ", ") + g;
  usage_error(fmt::format(
      "--resume continues a run with the options in its run folder ({}/manifest.json); {} {} "
      "not taken with it (only --workers, --quiet and --profile are); --history may be given too "
      "(where the resumed run is recorded)",
      f.resume, names, ignored.size() == 1 ? "is" : "are"));
}

// The flags that choose or shape a suite's cases mean nothing with --op/--case (one case).
void refuse_flags_ignored_by_case(const RunFlags& f, bool given_op, bool given_case) {
  if (given_op != given_case)
    usage_error(
        "--op and --case go together: --op aten.add.Tensor --case '((T([2], f32), "
        "T([2], f32)), {})'");
  for (auto [flag, what] : {std::pair<const char*, const char*>{"--suite",
                                                                "selects the cases "
                                                                "of a suite"},
                            {"--ops", "selects the cases of a suite"},
                            {"--dtypes", "selects the cases of a suite"},
                            {"--calls-per-op", "selects the cases of a suite"},
                            {"--max-numel", "caps the sizes of a suite's cases"},
                            {"--max-flops", "caps the sizes of a suite's cases"},
                            {"--perf-dtype", "retypes a suite's timed cases"},
                            {"--shard", "splits a suite's cases between machines"}})
    if (std::find(f.given.begin(), f.given.end(), flag) != f.given.end())
      usage_error(fmt::format(
          "--op/--case run one case; {} {} and cannot be given with them (write the case "
          "as it should run)",
          flag, what));
}

// --backend llm: generates the kernels of the run's ops (the suite's cases are the feedback
// cases; a resumed run resumes its generation) and returns their kernel folder.
std::string generate_for_run(const RunFlags& f, const std::vector<std::string>& argv) {
  GenerateFlags g = f.llm;
  g.suite = f.suite == "opinfo" ? "opinfo" : "smoke";
  g.ops = f.ops;
  g.seed = std::to_string(f.seed);
  g.timeout = fmt::format("{}", f.timeout);
  if (f.workers > 0) g.workers = std::to_string(f.workers);
  g.no_sandbox = f.no_sandbox;
  g.quiet = f.quiet;
  if (g.run_id.empty())
    usage_error("--backend llm needs --run-id <name>: the kernels go to generated_kernels/<name>/");
  GenerateOptions go = generate_options(g, argv);
  go.resume = std::filesystem::exists(generation_folder(go) + "/generation.jsonl");
  generate(go);
  return generation_folder(go);
}

}  // namespace

int command_run(RunFlags f, const std::vector<std::string>& argv_in) {
  std::vector<std::string> argv = argv_in;
  auto given = [&](const std::string& name) {
    return std::find(f.given.begin(), f.given.end(), name) != f.given.end();
  };
  // The flags against each other (each flag's value was checked as it was parsed).
  if (given("--resume")) {
    refuse_flags_ignored_by_resume(f);
    const std::string dir = f.resume;
    const int workers = f.workers;
    const bool quiet = f.quiet;
    const bool profile = f.profile;
    const std::string history = f.history;
    const bool history_given = given("--history");
    f = flags_of_run(dir, argv, workers > 0);
    if (history_given) f.history = history;
    f.resume = dir;
    f.out.clear();
    if (workers > 0) f.workers = workers;
    f.quiet = quiet;
    f.profile = profile;
  } else {
    if (given("--op") || given("--case"))
      refuse_flags_ignored_by_case(f, given("--op"), given("--case"));
    if (given("--inputs") && !given("--op"))
      usage_error("--inputs gives the tensors of one case: use it with --op and --case");
    for (const char* flag : {"--baseline", "--warm-cache", "--p", "--perf-dtype"})
      if (given(flag) && !f.perf)
        usage_error(std::string(flag) +
                    " only matters with --perf (it sets how the cases are timed); add --perf or "
                    "drop it");
    const bool model_suite = f.suite == "model" || f.suite.starts_with("model:");
    for (const char* flag : {"--model-filter", "--model-k", "--fallback", "--quant"})
      if (given(flag) && !model_suite)
        usage_error(std::string(flag) +
                    " applies to --suite model[:<path>] (whole model graphs); drop it or run the "
                    "model suite");
    if (f.calls_per_op > 0 && !f.suite.starts_with("traces:"))
      usage_error(
          "--calls-per-op applies to --suite traces:<path> (the opinfo suite's --perf "
          "cases already take a few real-model calls per op)");
  }

  RunOptions o;
  o.argv = argv;
  o.suite.suite = f.suite;
  o.suite.ops = f.ops;
  o.suite.dtypes = f.dtypes;
  o.suite.perf_dtype = f.perf_dtype;
  o.suite.calls_per_op = f.calls_per_op;
  o.suite.model_filter = f.model_filter;
  o.suite.model_k = f.model_k;
  o.suite.fallback = f.fallback;
  o.suite.quant = f.quant;
  o.suite.seed = f.seed;
  o.suite.max_numel = f.max_numel;
  o.suite.max_flops = f.max_flops;
  o.backend = f.backend;
  // BackendBench's spellings of a kernel folder. BackendBench runs a folder's kernels on CUDA,
  // so these mean dir:cuda:<folder> where CUDA starts (its Python kernels get device tensors),
  // and dir:<folder> elsewhere; the console says which, and how to ask for the other.
  for (auto [name, flag, folder] : {std::tuple<std::string, std::string, std::string>{
                                        "directory", "--ops-directory", f.ops_directory},
                                    {"pregenerated", "--kernels-dir", f.kernels_dir}}) {
    if (f.backend == name) {
      if (folder.empty())
        usage_error(fmt::format("--backend {} needs {} <folder> (or write --backend dir:<folder>)",
                                name, flag));
      const std::string no_cuda = cuda_start_problem();
      o.backend = (no_cuda.empty() ? "dir:cuda:" : "dir:") + folder;
      if (no_cuda.empty())
        fmt::print(stderr,
                   "crucible: --backend {}: the folder's Python kernels run on CUDA, as "
                   "BackendBench runs them (--backend {}; --backend dir:{} runs them on the CPU)\n",
                   name, o.backend, folder);
      else
        fmt::print(stderr,
                   "crucible: --backend {}: CUDA does not start here ({}), so the folder's Python "
                   "kernels run on the CPU (--backend {})\n",
                   name, no_cuda, o.backend);
    } else if (!folder.empty()) {
      usage_error(
          fmt::format("{} goes with --backend {} (or write --backend dir:{})", flag, name, folder));
    }
  }
  if (f.backend == "llm") {
    o.backend = "dir:" + generate_for_run(f, argv);
  } else {
    for (const char* flag :
         {"--provider", "--model", "--base-url", "--max-attempts", "--language", "--run-id"})
      if (given(flag))
        usage_error(fmt::format("{} goes with --backend llm (it configures the generation)", flag));
  }
  o.sandbox = !f.no_sandbox;
  o.reference = f.reference;
  o.baseline = f.baseline;
  o.perf = f.perf;
  o.cold_cache = !f.warm_cache;
  o.workers = f.workers;
  o.gpus = f.gpus;
  o.threads = f.threads;
  o.timeout_s = f.timeout;
  o.memory_limit = f.memory_limit;
  o.out = f.out;
  o.history = f.history;
  o.resume = f.resume;
  o.p = f.p;
  o.single_op = f.op;
  o.single_case = f.case_text;
  o.single_inputs = f.inputs;
  o.shard = f.shard;
  o.progress = !f.quiet;
  o.profile = f.profile;
  o.sanitize = f.sanitize;
  return run(o);
}

}  // namespace crucible
