// The reports of a run folder: summary.json, operator_summary.csv, SUMMARY.md, junit.xml and the
// console table, from the run's case and timing records. One writer for `crucible run` and for
// `crucible merge` (crucible/eval/merge.h), so that a merged run reports exactly as the unsplit
// run would.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "crucible/eval/run.h"
#include "crucible/report/summary.h"
#include "crucible/results/result.h"

namespace crucible {

// Puts the records in the suite's order: `position` maps a case id to its place in the suite
// (records of other ids go last, in their order). Reports then read the same whatever order the
// workers finished in, and a merged run reads as the unsplit one.
void order_records(std::vector<CaseResult>& results, std::vector<TimingRecord>& timings,
                   const std::map<std::string, size_t>& position);

// The summary of the records, with the run's suite, backends and perf@p threshold from `o`.
// The caller adds what it measured: wall time, load, peaks.
RunSummary summarize_run(const RunOptions& o, const std::vector<CaseResult>& results,
                         const std::vector<TimingRecord>& timings);

// Records the finished run folder o.out in the run history (o.history: "" the default, "none"
// none); a history that cannot be written is a warning, never the run's failure.
void record_in_history(const RunOptions& o);

// Writes summary.json, operator_summary.csv, SUMMARY.md, junit.xml and report.html into o.out
// (and prints the console table when o.progress), then records the run in the history;
// `command` heads SUMMARY.md. Returns the run's exit status:
// 0 when every case that ran passed and every timing succeeded, 1 otherwise (also when nothing
// passed: a run that ran nothing is a failure).
int write_run_reports(const RunOptions& o, const RunSummary& s,
                      const std::vector<CaseResult>& results, const std::string& command);

}  // namespace crucible
