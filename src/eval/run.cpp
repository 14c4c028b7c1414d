// A run from start to finish: its plan (options, cases, run folder) -> correctness in isolated
// workers -> timing -> the reports in the run folder.
#include "crucible/eval/run.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "crucible/core/error.h"
#include "crucible/eval/calibrate.h"
#include "crucible/eval/run_plan.h"
#include "crucible/report/history.h"
#include "crucible/report/html_report.h"
#include "crucible/report/summary.h"
#include "eval/run_phases.h"

namespace crucible {

namespace {

// Records the finished run folder in the run history (--history). A history that cannot be
// written does not fail the run: its reports are written; a warning says why.
void record_in_history(const RunOptions& o) {
  if (o.history == "none") return;
  std::string path;
  try {
    path = o.history.empty() ? default_history_path() : o.history;
    History h(path, true);
    const int64_t id = h.record(read_run_folder(o.out));
    if (o.progress) fmt::print(stderr, "recorded as run {} in the history {}\n", id, path);
  } catch (const Error& e) {
    fmt::print(stderr, "crucible: warning: the run was not recorded in the history: {}\n",
               e.what());
  }
}

// Summarises the run and writes summary.json, operator_summary.csv, SUMMARY.md and junit.xml
// (and the console table); returns the exit status. `start`: when the run started.
int write_reports(const RunPlan& plan, const RunRecords& records, const TimingLoad& load,
                  std::chrono::steady_clock::time_point start) {
  const RunOptions& o = plan.options;
  // Only the cases of this suite count (a resumed folder holds exactly these).
  std::map<std::string, std::string> families;
  for (const OpDef* op : OpRegistry::catalog().all()) families[op->name] = op->family;
  RunSummary s = summarize(records.results, records.timings, families, o.p);
  s.suite = o.suite.suite;
  s.backend = o.backend;
  s.reference = o.reference;
  s.baseline = o.perf ? o.baseline : "";
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (o.perf) add_peak_fractions(s, records.timings, plan.peaks);
  s.cores = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  s.load_before = load.before.loadavg;
  s.load_after = load.after.loadavg;
  s.running_before = load.before.running;
  s.running_after = load.after.running;
  std::string command;
  for (const std::string& a : o.argv) command += (command.empty() ? "" : " ") + a;
  write_summary_json(o.out + "/summary.json", s);
  write_operator_csv(o.out + "/operator_summary.csv", s);
  write_summary_md(o.out + "/SUMMARY.md", s, records.results, command);
  write_junit(o.out + "/junit.xml", s, records.results);
  write_html_report(o.out);
  if (o.progress) fmt::print("{}", console_table(s, o.out));
  record_in_history(o);

  // A timing that failed fails the run as a case would.
  bool all_passed = s.count(Status::Passed) > 0 && s.timing_errors == 0;
  for (const auto& [st, n] : s.by_status)
    if (n > 0 && st != Status::Passed && st != Status::Skipped) all_passed = false;
  return all_passed ? 0 : 1;
}

}  // namespace

int run(const RunOptions& opts) {
  const auto t_start = std::chrono::steady_clock::now();
  RunPlan plan = make_run_plan(opts);  // everything refused is refused here
  RunRecords records{std::move(plan.previous_results), std::move(plan.previous_timings)};
  run_correctness(plan, records);
  const TimingLoad load = run_timing(plan, records);
  return write_reports(plan, records, load, t_start);
}

}  // namespace crucible
