// `crucible compare`: what changed from one run to another -- ops newly failing or fixed, cases
// whose status changed, and speed-ups that moved beyond the noise of both runs -- as console
// text, Markdown or JSON, and whether anything regressed.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "crucible/report/run_data.h"

namespace crucible {

struct CompareOptions {
  // A speed-up counts as moved when the candidate's p10..p90 ranges of the two runs part by at
  // least this factor (the lower end of one range is this many times the upper end of the
  // other) and the median speed-ups differ by at least this factor too: the baseline is timed
  // in turn with the candidate, so a machine busier in one run than in the other moves both
  // times but far less their ratio, and more than one run's p10..p90 shows.
  double min_change = 2.0;
};

struct OpChange {
  std::string op;
  std::string before, after;  // verdicts: correct, wrong, unsupported, skipped, absent
  std::string detail;         // the op's first failure in the later run
};

struct CaseStatusChange {
  std::string case_id, op, call;
  std::string before, after;
  std::string detail;  // the later run's
};

struct SpeedChange {
  std::string case_id, op, call;
  double before = 0, after = 0;         // median speed-ups
  TimingStats time_before, time_after;  // the candidate's times
  double factor() const { return after / before; }
};

struct RunComparison {
  std::string before, after;  // what was compared: "run 12 (runs/...)", a folder
  std::vector<OpChange> newly_failing, fixed, other_ops;  // other: verdict changes of ops
                                                          // neither correct before nor after
  std::vector<CaseStatusChange> status_changes;
  std::vector<SpeedChange> slower, faster;
  int cases_compared = 0, timed_compared = 0;
  double min_change = 0;
  // Something got worse: an op no longer correct, a passing case no longer passing, a case
  // slower beyond the noise.
  bool regressed() const;
};

RunComparison compare_runs(const RunData& before, const RunData& after, const CompareOptions& o);

std::string comparison_text(const RunComparison& c);
std::string comparison_markdown(const RunComparison& c);
nlohmann::json comparison_json(const RunComparison& c);

}  // namespace crucible
