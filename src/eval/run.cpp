// A run from start to finish: its plan (options, cases, run folder) -> correctness in isolated
// workers -> timing -> the reports in the run folder.
#include "crucible/eval/run.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "crucible/backends/blas_core.h"
#include "crucible/cases/literal.h"
#include "crucible/core/error.h"
#include "crucible/eval/calibrate.h"
#include "crucible/eval/run_plan.h"
#include "crucible/eval/run_profile.h"
#include "crucible/report/atomic_file.h"
#include "eval/run_phases.h"
#include "eval/run_reports.h"
#include "eval/sanitize.h"

namespace crucible {

namespace {

using json = nlohmann::json;

// Records the finished run folder in the run history (--history). A history that cannot be
// written does not fail the run: its reports are written; a warning says why.
// Summarises the run and writes summary.json, operator_summary.csv, SUMMARY.md and junit.xml
// (and the console table); returns the exit status. `start`: when the run started.
int write_reports(const RunPlan& plan, RunRecords& records, const TimingLoad& load,
                  std::chrono::steady_clock::time_point start) {
  const RunOptions& o = plan.options;
  // The records in the suite's order, whatever order the workers finished in. Only the cases
  // of this suite count (a resumed folder holds exactly these).
  std::map<std::string, size_t> position;
  for (const SuiteCase& sc : plan.cases) position.emplace(sc.c.id(), position.size());
  order_records(records.results, records.timings, position);
  RunSummary s = summarize_run(o, records.results, records.timings);
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (o.perf) add_peak_fractions(s, records.timings, plan.peaks);
  s.cores = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  s.load_before = load.before.loadavg;
  s.load_after = load.after.loadavg;
  s.running_before = load.before.running;
  s.running_after = load.after.running;
  s.blas_warning = cpu::blas_core_narrowed_by_user();
  std::string command;
  for (const std::string& a : o.argv) command += (command.empty() ? "" : " ") + a;
  const int status = write_run_reports(o, s, records.results, command);
  // A shard that got no case (more shards than cases) ran nothing and failed nothing: its
  // share of the run is complete; merge judges the whole.
  if (plan.shard.spec.active() && plan.cases.empty()) {
    if (o.progress)
      fmt::print("shard {}: the split gave this shard no case ({} cases over {} shards)\n",
                 plan.shard.spec.text(), plan.shard.cases_total, plan.shard.spec.count);
    return 0;
  }
  return status;
}

// --profile: profile.json in the run folder (each job named by its op, with its case, label and
// verdict) and the summary on the console.
void write_profile(const RunPlan& plan, const RunRecords& records, const RunProfile& profile) {
  std::map<std::string, const CaseResult*> verdicts;
  for (const CaseResult& r : records.results) verdicts[r.case_id] = &r;
  const json trace = profile.chrome_trace([&](const std::string&, size_t job) {
    if (job >= plan.cases.size()) return json::object();
    const SuiteCase& sc = plan.cases[job];
    json args = {{"case", cases::print_call(sc.c.call)}, {"label", sc.c.label}};
    if (auto it = verdicts.find(sc.c.id()); it != verdicts.end())
      args["status"] = status_name(it->second->status);
    return json{{"name", sc.c.op}, {"args", std::move(args)}};
  });
  const std::string path = (std::filesystem::path(plan.options.out) / "profile.json").string();
  write_file_atomically(path, trace.dump());
  for (const std::string& line : profile.summary()) fmt::print("profile: {}\n", line);
  fmt::print("profile: the timeline is in {} (ui.perfetto.dev or chrome://tracing open it)\n",
             path);
}

}  // namespace

int run(const RunOptions& opts) {
  const auto t_start = std::chrono::steady_clock::now();
  RunProfile profile(t_start);
  const bool profiled = opts.profile;
  profile.begin("plan");
  RunPlan plan = make_run_plan(opts);  // everything refused is refused here
  RunRecords records{std::move(plan.previous_results), std::move(plan.previous_timings)};
  profile.begin("correctness");
  run_correctness(plan, records, profiled ? profile.pool_trace() : nullptr);
  if (!plan.options.sanitize.empty()) profile.begin("memory checker");
  run_sanitize(plan, records);
  PoolTrace* timing_trace = nullptr;
  if (plan.options.perf) {
    profile.begin("timing");
    if (profiled) timing_trace = profile.pool_trace();
  }
  const TimingLoad load = run_timing(plan, records, timing_trace);
  profile.begin("reports");
  const int status = write_reports(plan, records, load, t_start);
  profile.end();
  if (profiled) write_profile(plan, records, profile);
  return status;
}

}  // namespace crucible
