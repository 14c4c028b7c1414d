// The plan of a run: options resolved, backends and sandbox checked, cases built, the run folder
// taken and its manifest written, before any case runs.
#include "crucible/eval/run_plan.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "crucible/backends/backend.h"
#include "crucible/cases/trace.h"
#include "crucible/core/error.h"
#include "crucible/eval/gpus.h"
#include "crucible/eval/saved_inputs.h"
#include "crucible/report/atomic_file.h"
#include "eval/run_folder.h"
#include "eval/sanitize.h"
#include "sandbox/sandbox.h"

namespace crucible {

namespace fs = std::filesystem;
using nlohmann::json;

RunPlan::RunPlan() = default;
RunPlan::~RunPlan() = default;
RunPlan::RunPlan(RunPlan&&) noexcept = default;
RunPlan& RunPlan::operator=(RunPlan&&) noexcept = default;

int online_cores() { return static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN))); }

int default_workers(int cores, bool on_cuda, size_t gpus) {
  if (!on_cuda) return cores;
  // Each worker creates a CUDA context, and the host creates them one at a time (about 0.27 s
  // each on an H100 host): past a few workers per GPU, more workers make a run slower. 8 per GPU
  // and 16 at most were the fastest counts measured on one and on four H100s (docs/gpu.md,
  // "Several GPUs").
  constexpr int kPerGpu = 8, kMost = 16;
  return std::min({cores, kPerGpu * static_cast<int>(std::max<size_t>(1, gpus)), kMost});
}

size_t default_memory_limit(int workers, size_t memory) {
  constexpr size_t kGiB = size_t{1} << 30;
  const size_t share = memory / 4 * 3 / static_cast<size_t>(std::max(1, workers));
  return std::max(kGiB, share / (kGiB / 4) * (kGiB / 4));  // in quarters of a GiB
}

size_t usable_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  size_t memory = pages > 0 && page > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page)
                                        : size_t{4} << 30;
  std::ifstream cgroup("/sys/fs/cgroup/memory.max");  // "max" or a number of bytes
  unsigned long long limit = 0;
  if (cgroup >> limit && limit > 0 && limit < memory) memory = static_cast<size_t>(limit);
  return memory;
}

int correctness_threads(int threads, int cores, int workers) {
  return std::max(1, std::min(threads, cores / std::max(1, workers)));
}

int timing_workers(bool on_cuda, size_t gpus) {
  // A GPU's timing is its device's events around its own calls: one worker per GPU times side
  // by side without disturbing another's samples. On the CPU the cores are what is measured:
  // one worker, nothing else running.
  return on_cuda && gpus > 1 ? static_cast<int>(gpus) : 1;
}

namespace {

// The defaults that depend on the machine or on other options (--workers: once the backends'
// devices and the GPUs are known, in make_run_plan).
void fill_defaults(RunOptions& o) {
  if (o.backend.empty()) o.backend = BackendRegistry::instance().default_backend();
  if (o.baseline.empty()) o.baseline = o.reference;
  if (o.threads <= 0) o.threads = online_cores();
}

// Validates backend names before any work (creating a built-in backend has no side effects) and
// tells whether one of them runs untrusted kernels.
bool check_backends(RunPlan& plan) {
  const RunOptions& o = plan.options;
  bool untrusted = false;
  for (auto [role, spec] : {std::pair<std::string, std::string>{"candidate", o.backend},
                            {"reference", o.reference},
                            {"baseline", o.baseline},
                            {"fallback", o.suite.fallback}}) {
    if (role == "baseline" && !o.perf) continue;
    if (role == "fallback" && spec.empty()) continue;
    auto b = BackendRegistry::instance().create(spec);
    plan.backends.push_back({role, b->name(), b->version(), b->device().str()});
    untrusted = untrusted || b->untrusted() || spec.starts_with("plugin:");
  }
  return untrusted;
}

// Untrusted kernels run in sandboxed workers; check here that the sandbox can be entered.
void set_up_sandbox(RunPlan& plan) {
  plan.scratch = std::make_unique<ScratchRoot>();
  plan.sandbox = std::make_unique<SandboxOptions>();
  plan.sandbox->scratch_root = plan.scratch->path();
  plan.sandbox->cpu_seconds_per_job = 4 * plan.options.timeout_s * online_cores() + 1;
  std::string why = probe_sandbox(*plan.sandbox);
  if (!why.empty())
    usage_error("the sandbox for untrusted kernels cannot be set up on this machine: " + why +
                "; --no-sandbox runs them without it (only for kernels you trust)");
}

// The cases: the single --op/--case (the suite is then "case"), or the suite's.
std::vector<SuiteCase> plan_cases(RunOptions& o) {
  std::vector<SuiteCase> cases;
  if (!o.single_op.empty() || !o.single_case.empty()) {
    SuiteCase sc;
    sc.op = &OpRegistry::catalog().get(o.single_op);
    sc.c.op = sc.op->name;
    sc.c.call = cases::parse_call(o.single_case, "--case");
    sc.c.seed = o.suite.seed;
    sc.c.label = "single";
    sc.c.source = "--case";
    sc.c.perf = o.perf;
    if (!o.single_inputs.empty()) {
      sc.inputs = std::make_shared<const Values>(
          inputs_from_file(*sc.op, sc.c.call, sc.c.seed, o.single_inputs));
      sc.c.label = "saved inputs";
      sc.c.source = o.single_inputs;
      const Case c = sc.c;
      const std::string file = o.single_inputs;
      sc.reproducer = [c, file](const std::string& backend) {
        return c.reproducer(backend) + " --inputs " + file;
      };
    }
    cases.push_back(std::move(sc));
    o.suite.suite = "case";
    return cases;
  }
  o.suite.perf = o.perf;
  try {
    return build_suite(o.suite);
  } catch (const Error& e) {
    // A trace file or folder without a single case is that, whatever the filters.
    if (o.suite.suite.starts_with("traces:") &&
        std::string(e.what()).find("no case matches") != std::string::npos) {
      const std::string path = o.suite.suite.substr(7);
      if (cases::read_traces(path).empty())
        input_error("--suite " + o.suite.suite, "no cases in " + path);
    }
    throw;
  }
}

// The run folder, locked for the whole run; on --resume, what its results.jsonl already holds.
// A fresh run refuses a folder that holds results.
void take_run_folder(RunPlan& plan) {
  RunOptions& o = plan.options;
  if (!o.resume.empty()) o.out = o.resume;
  if (o.out.empty()) o.out = default_out_dir(o);
  prepare_out_dir(o.out);
  plan.lock = std::make_unique<RunFolderLock>(o.out);
  plan.results_path = o.out + "/results.jsonl";
  if (!o.resume.empty()) {
    std::map<std::string, std::string> ops_of_case;
    for (const SuiteCase& sc : plan.cases) ops_of_case.emplace(sc.c.id(), sc.c.op);
    load_previous(plan.results_path, ops_of_case, plan.previous_results, plan.previous_timings);
  } else if (std::error_code ec; fs::exists(plan.results_path, ec)) {
    if (!fs::is_regular_file(plan.results_path, ec))
      input_error(plan.results_path, "not a regular file; choose another --out");
    if (fs::file_size(plan.results_path, ec) > 0)
      usage_error("--out " + o.out + " already holds results.jsonl; use --resume " + o.out +
                  " to continue that run, or choose another --out");
  }
}

// The resolved options, as manifest.json records them.
json options_json(const RunOptions& o) {
  json dtypes = json::array();
  for (DType d : o.suite.dtypes) dtypes.push_back(std::string(dtype_code(d)));
  return {{"suite", o.suite.suite},
          {"backend", o.backend},
          {"reference", o.reference},
          {"baseline", o.baseline},
          {"perf", o.perf},
          {"cold_cache", o.cold_cache},
          {"ops", o.suite.ops},
          {"dtypes", dtypes},
          {"seed", o.suite.seed},
          {"workers", o.workers},
          {"threads", o.threads},
          {"timeout_s", o.timeout_s},
          {"memory_limit", o.memory_limit},
          {"max_numel", o.suite.max_numel},
          {"max_flops", o.suite.max_flops},
          {"perf_dtype",
           o.suite.perf_dtype ? json(std::string(dtype_code(*o.suite.perf_dtype))) : json(nullptr)},
          {"calls_per_op", o.suite.calls_per_op},
          {"model_filter", o.suite.model_filter},
          {"model_k", o.suite.model_k},
          {"p", o.p}};
}

// A resumed shard must split the suite as it did when it started: the same cases, the same
// share (else its results.jsonl would belong to another split and merge would refuse it).
void check_same_split(const ShardInfo& now, const json& old, const std::string& mpath) {
  if (!old.contains("shard"))
    input_error(mpath, "this run folder was not started with --shard; its manifest has no split");
  const ShardInfo then = shard_info_from_json(old["shard"], mpath);
  if (then.fingerprint != now.fingerprint || then.cases_total != now.cases_total)
    input_error(mpath, fmt::format("the suite's cases changed since shard {} started ({} cases, "
                                   "fingerprint {}; now {} cases, fingerprint {}): the shards "
                                   "of one run must split one case list; start this shard "
                                   "afresh, with every other shard",
                                   then.spec.text(), then.cases_total, then.fingerprint,
                                   now.cases_total, now.fingerprint));
  if (then.case_ids != now.case_ids)
    input_error(mpath, fmt::format("shard {} now gets other cases than when it started (was "
                                   "crucible changed?); start every shard afresh",
                                   now.spec.text()));
}

// manifest.json: the command, the options, the backends, the sandbox and (--perf) the machine's
// peaks. A resumed run keeps the first manifest and adds its start to "resumed".
void write_manifest(RunPlan& plan) {
  const RunOptions& o = plan.options;
  json manifest = make_manifest(o.argv, o.suite.seed, options_json(o), plan.backends);
  manifest["sandbox"] = plan.sandboxed ? sandbox_description() : "off";
  if (o.perf && !plan.on_cuda) {
    plan.peaks = machine_peaks(o.threads);
    manifest["machine"]["peaks"] = peaks_json(plan.peaks);
  } else if (o.perf) {
    manifest["machine"]["peaks"] = nullptr;
    manifest["machine"]["peaks_note"] =
        "not measured: a backend of the run is on CUDA, and the host's peaks are not its";
  }
  if (plan.shard.spec.active()) manifest["shard"] = shard_info_json(plan.shard);
  std::string mpath = o.out + "/manifest.json";
  if (!o.resume.empty() && fs::exists(mpath)) {
    std::ifstream mf(mpath);
    json old = json::parse(mf, nullptr, false);
    if (!old.is_discarded()) {
      if (!old.is_object()) input_error(mpath, "not a crucible manifest (not a JSON object)");
      if (old.contains("resumed") && !old["resumed"].is_array())
        input_error(mpath, "the field \"resumed\" is not a list");
      if (plan.shard.spec.active()) check_same_split(plan.shard, old, mpath);
      old["resumed"].push_back(manifest["started_at"]);
      manifest = old;
    }
  }
  write_file_atomically(mpath, manifest.dump(2) + "\n");
}

}  // namespace

RunPlan make_run_plan(const RunOptions& opts) {
  RunPlan plan;
  plan.options = opts;
  fill_defaults(plan.options);
  require_checkers(plan.options);  // before any kernel is compiled
  const bool untrusted = check_backends(plan);
  plan.sandboxed = untrusted && plan.options.sandbox;
  if (plan.sandboxed) set_up_sandbox(plan);
  std::string named;  // a backend that names its CUDA device
  for (const std::string& spec : {plan.options.backend, plan.options.reference,
                                  plan.options.perf ? plan.options.baseline : std::string()})
    if (names_cuda_index(spec)) named = spec;
  plan.gpus = plan_gpus(plan.options.gpus, named);
  bool& on_cuda = plan.on_cuda;
  for (const BackendInfo& b : plan.backends) on_cuda = on_cuda || b.device.rfind("cuda", 0) == 0;
  if (plan.options.workers <= 0)
    plan.options.workers = default_workers(online_cores(), on_cuda, plan.gpus.size());
  if (plan.options.memory_limit == kMemoryLimitAuto)
    plan.options.memory_limit = default_memory_limit(plan.options.workers, usable_memory());
  plan.timing_workers = timing_workers(on_cuda, plan.gpus.size());
  if (!plan.gpus.empty() && plan.options.progress) {
    std::string list;
    for (const std::string& g : plan.gpus) list += (list.empty() ? "" : ", ") + g;
    std::fprintf(stderr, "crucible: %d workers over %zu GPUs (CUDA_VISIBLE_DEVICES %s, in turn)\n",
                 plan.options.workers, plan.gpus.size(), list.c_str());
  }
  plan.cases = plan_cases(plan.options);
  if (plan.options.shard.active()) {
    if (plan.options.suite.suite == "case")
      usage_error("--shard splits a suite's cases; --op/--case run a single case");
    plan.shard = select_shard(plan.cases, plan.options.shard, plan.options.perf);
  }
  take_run_folder(plan);
  write_manifest(plan);
  for (const CaseResult& r : plan.previous_results) plan.done_cases.insert(r.case_id);
  for (const TimingRecord& t : plan.previous_timings) plan.done_timings.insert(t.case_id);
  plan.results_file = std::make_unique<ResultsFile>(plan.results_path);
  return plan;
}

}  // namespace crucible
