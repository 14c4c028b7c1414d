// The reports of a run folder, written once for `crucible run` and `crucible merge`.
#include "eval/run_reports.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "crucible/core/error.h"
#include "crucible/ops/op.h"
#include "crucible/report/history.h"
#include "crucible/report/html_report.h"

namespace crucible {

void order_records(std::vector<CaseResult>& results, std::vector<TimingRecord>& timings,
                   const std::map<std::string, size_t>& position) {
  auto at = [&](const std::string& id) {
    auto it = position.find(id);
    return it == position.end() ? std::numeric_limits<size_t>::max() : it->second;
  };
  std::stable_sort(results.begin(), results.end(), [&](const CaseResult& a, const CaseResult& b) {
    return at(a.case_id) < at(b.case_id);
  });
  std::stable_sort(
      timings.begin(), timings.end(),
      [&](const TimingRecord& a, const TimingRecord& b) { return at(a.case_id) < at(b.case_id); });
}

RunSummary summarize_run(const RunOptions& o, const std::vector<CaseResult>& results,
                         const std::vector<TimingRecord>& timings) {
  std::map<std::string, std::string> families;
  for (const OpDef* op : OpRegistry::catalog().all()) families[op->name] = op->family;
  RunSummary s = summarize(results, timings, families, o.p);
  s.suite = o.suite.suite;
  s.backend = o.backend;
  s.reference = o.reference;
  s.baseline = o.perf ? o.baseline : "";
  return s;
}

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

int write_run_reports(const RunOptions& o, const RunSummary& s,
                      const std::vector<CaseResult>& results, const std::string& command) {
  write_summary_json(o.out + "/summary.json", s);
  write_operator_csv(o.out + "/operator_summary.csv", s);
  write_summary_md(o.out + "/SUMMARY.md", s, results, command);
  write_junit(o.out + "/junit.xml", s, results);
  write_html_report(o.out);
  if (o.progress) fmt::print("{}", console_table(s, o.out));
  record_in_history(o);

  // A timing that failed fails the run as a case would.
  bool all_passed = s.count(Status::Passed) > 0 && s.timing_errors == 0;
  for (const auto& [st, n] : s.by_status)
    if (n > 0 && st != Status::Passed && st != Status::Skipped) all_passed = false;
  return all_passed ? 0 : 1;
}

}  // namespace crucible
