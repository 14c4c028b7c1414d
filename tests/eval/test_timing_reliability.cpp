// Speed-ups whose timings spread too much are marked unreliable, timing errors make an op's
// timing incomplete, and the reports say both.
#include <cmath>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "crucible/report/summary.h"
#include "crucible/results/result.h"

namespace crucible {
namespace {

TimingStats stats(double p10, double median, double p90) {
  TimingStats s;
  s.p10_s = p10;
  s.median_s = median;
  s.p90_s = p90;
  s.samples = 20;
  return s;
}

TimingRecord record(const std::string& op, TimingStats cand, TimingStats base) {
  TimingRecord t;
  t.case_id = op + "-1";
  t.op = op;
  t.candidate = cand;
  t.baseline = base;
  t.speedup = base.median_s / cand.median_s;
  assess_timing(t);
  return t;
}

TEST(TimingReliability, TightDistinctRangesAreReliable) {
  TimingRecord t = record("a", stats(0.95, 1.0, 1.05), stats(1.9, 2.0, 2.1));
  EXPECT_TRUE(t.reliable) << t.unreliable_reason;
  // Equal medians with overlapping ranges claim no difference: nothing to distrust.
  t = record("a", stats(0.95, 1.0, 1.05), stats(0.96, 1.01, 1.06));
  EXPECT_TRUE(t.reliable) << t.unreliable_reason;
}

TEST(TimingReliability, AWideSpreadIsUnreliable) {
  TimingRecord t = record("a", stats(0.8, 1.0, 1.3), stats(1.9, 2.0, 2.1));
  EXPECT_FALSE(t.reliable);
  EXPECT_NE(t.unreliable_reason.find("candidate's times spread 50%"), std::string::npos)
      << t.unreliable_reason;
  nlohmann::json j = to_json(t);
  EXPECT_EQ(j["reliable"], false);
  EXPECT_NEAR(j["candidate_spread"].get<double>(), 0.5, 1e-12);
  EXPECT_FALSE(timing_record_from_json(j).reliable);
}

TEST(TimingReliability, RangesThatPutTheRatioAcrossOneAreUnreliable) {
  // Median speed-up 1.3x, but the baseline's p10 is below the candidate's p90.
  TimingRecord t = record("a", stats(0.9, 1.0, 1.1), stats(1.05, 1.3, 1.35));
  EXPECT_FALSE(t.reliable);
  EXPECT_NE(t.unreliable_reason.find("overlap"), std::string::npos) << t.unreliable_reason;
}

TEST(TimingReliability, ReportsMarkUnreliableSpeedupsTimingErrorsAndABusyMachine) {
  auto passed = [](const std::string& op) {
    CaseResult r;
    r.case_id = op + "-1";
    r.op = op;
    r.status = Status::Passed;
    return r;
  };
  std::vector<CaseResult> results = {passed("aten.a"), passed("aten.b"), passed("aten.c")};
  results.push_back(passed("aten.c"));
  results.back().case_id = "aten.c-2";
  std::vector<TimingRecord> timings = {
      record("aten.a", stats(0.95, 1.0, 1.05), stats(1.9, 2.0, 2.1)),
      record("aten.b", stats(0.9, 1.0, 1.1), stats(1.05, 1.3, 1.35)),
      record("aten.c", stats(0.95, 1.0, 1.05), stats(3.8, 4.0, 4.2))};
  TimingRecord failed;
  failed.case_id = "aten.c-2";
  failed.op = "aten.c";
  failed.error = "the worker was killed by SIGKILL while running the case";
  assess_timing(failed);
  timings.push_back(failed);
  RunSummary s = summarize(results, timings, {}, 1.0);
  s.cores = 2;
  s.load_before = 9.5;
  s.load_after = 7.0;
  s.running_before = 12;
  s.running_after = 3;
  EXPECT_EQ(s.timing_errors, 1);
  // c's timing is incomplete: the score is a's and b's speed-ups only.
  EXPECT_NEAR(s.perf_score, std::sqrt(2.0 * 1.3), 1e-9);
  nlohmann::json j = summary_json(s);
  EXPECT_EQ(j["ops"]["aten.c"]["timing_incomplete"], true);
  EXPECT_EQ(j["ops"]["aten.b"]["speedup_reliable"], false);
  EXPECT_EQ(j["ops"]["aten.a"]["speedup_reliable"], true);
  EXPECT_EQ(j["timing_load"]["busy"], true);
  std::string table = console_table(s, "runs/x");
  EXPECT_NE(table.find("~1.300x?"), std::string::npos) << table;
  EXPECT_NE(table.find("2.000x"), std::string::npos) << table;
  EXPECT_NE(table.find("timing errors: 1 case(s)"), std::string::npos) << table;
  EXPECT_NE(table.find("killed by SIGKILL"), std::string::npos) << table;
  EXPECT_NE(table.find("warning: the machine was busy"), std::string::npos) << table;
  s.load_before = s.load_after = 0.5;
  s.running_before = s.running_after = 1;
  EXPECT_EQ(console_table(s, "runs/x").find("busy"), std::string::npos);
}

}  // namespace
}  // namespace crucible
