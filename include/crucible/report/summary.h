// Scores and per-op summaries of a run, and the files that report them.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "crucible/results/result.h"

namespace crucible {

struct OpSummary {
  std::string op;
  std::string family;
  int cases = 0;
  std::map<Status, int> by_status;
  bool supported = false;  // at least one case was not unsupported
  bool passed = false;     // every run case passed (and at least one ran)
  int timed = 0;
  double speedup = 0;             // geometric mean over timed cases (0 = not timed)
  double candidate_median_s = 0;  // median over timed cases of the candidate's median
  double baseline_median_s = 0;
  double gbps = 0;         // best over timed cases
  double gflops = 0;       // best over timed cases
  double pct_of_peak = 0;  // best over timed cases of the roofline fraction (calibrate.h), in %
  double max_abs_err = 0;
  double max_ulp_err = 0;
  double min_pcc = 1;
  std::string first_failure;      // detail of the first failing case
  std::string reproducer;         // of the first failing case
  std::string first_unsupported;  // detail of the first unsupported case (why)
  int unreliable = 0;             // timed cases whose speed-up is not reliable (assess_timing)
  int timing_errors = 0;          // cases whose timing failed: the op's timing is incomplete
  std::string first_timing_error;
  bool speedup_reliable() const { return unreliable == 0; }
};

// The speed-ups of one op family: the geometric mean over its correct, timed ops, and its
// slowest op (so a family average cannot hide one slow op).
struct FamilySpeed {
  std::string family;
  int ops = 0;
  double speedup = 0;
  double min_speedup = 0;
  std::string slowest_op;
};

struct RunSummary {
  std::string suite, backend, reference, baseline;
  int ops_total = 0, ops_supported = 0, ops_passed = 0;
  int cases_total = 0;
  std::map<Status, int> by_status;
  double correctness_score = 0;  // ops passed / ops total
  double coverage = 0;           // ops supported / ops total
  double perf_score = 0;         // geometric mean speed-up over correct, timed ops (0: none, "n/a")
  double perf_at_p = 0;          // fraction of all ops that are correct and faster than p
  double p = 1.0;
  bool timed = false;
  double seconds = 0;
  double peak_triad_gbps = 0, peak_gflops = 0;  // the machine's peaks (0: not measured)
  int timing_errors = 0;  // timing records with an error (a killed timing worker, ...)
  // The machine's load around the timing phase (-1: not measured): the 1-minute load average
  // and the runnable tasks of /proc/stat, before and after; `cores` to judge them by.
  double load_before = -1, load_after = -1;
  int running_before = -1, running_after = -1;
  int cores = 0;
  std::string blas_warning;  // the BLAS kernels were chosen narrower than the machine (empty: no)
  bool busy() const;         // the load exceeded the cores around the timing phase
  std::vector<OpSummary> ops;
  std::vector<FamilySpeed> families;  // with timings: per family, by family name

  int count(Status s) const;
};

// "passed 3, failed 1, ..." in one order for every output: every status, each counted apart
// (the counts add up to cases_total); `all` also lists the statuses no case has.
std::string status_counts_text(const RunSummary& s, bool all);

// `families` maps op name to family for the report (missing: "-").
RunSummary summarize(const std::vector<CaseResult>& results,
                     const std::vector<TimingRecord>& timings,
                     const std::map<std::string, std::string>& families, double p);

nlohmann::json summary_json(const RunSummary& s);
void write_summary_json(const std::string& path, const RunSummary& s);
void write_operator_csv(const std::string& path, const RunSummary& s);
void write_summary_md(const std::string& path, const RunSummary& s,
                      const std::vector<CaseResult>& results, const std::string& command);
void write_junit(const std::string& path, const RunSummary& s,
                 const std::vector<CaseResult>& results);

// The short table printed at the end of a run.
std::string console_table(const RunSummary& s, const std::string& out_dir);

}  // namespace crucible
