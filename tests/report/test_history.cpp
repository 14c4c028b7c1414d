// The run history in SQLite and the comparison of two runs, on runs built in memory.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "crucible/core/error.h"
#include "crucible/report/compare_runs.h"
#include "crucible/report/history.h"

namespace crucible {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string temp_path(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("crucible-history-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::remove(dir / name);
  return (dir / name).string();
}

json op_summary(bool passed, double speedup) {
  json o = {{"family", "pointwise"},
            {"cases", 1},
            {"supported", true},
            {"passed", passed},
            {"status", {{passed ? "passed" : "failed", 1}}}};
  if (speedup > 0) o["speedup"] = speedup;
  if (!passed) o["first_failure"] = "failed: wrong values";
  return o;
}

CaseRow timed_case(const std::string& id, const std::string& op, double cand_s, double spread) {
  CaseRow c;
  c.case_id = id;
  c.op = op;
  c.call = "((T([1024], f32),), {})";
  c.status = "passed";
  c.timed = true;
  c.candidate = {cand_s, cand_s * (1 - spread), cand_s * (1 + spread), 20};
  c.baseline = {1e-3, 0.95e-3, 1.05e-3, 20};
  c.speedup = c.baseline.median_s / cand_s;
  return c;
}

RunData run_of(const std::string& folder, double relu_s, bool neg_passes) {
  RunData r;
  r.folder = folder;
  r.summary = {{"suite", "opinfo"}, {"backend", "cpu"},
               {"ops_total", 2},    {"ops_passed", neg_passes ? 2 : 1},
               {"cases_total", 2},  {"correctness_score", neg_passes ? 1.0 : 0.5},
               {"coverage", 1.0},   {"perf_score", 2.0}};
  r.summary["ops"] = {{"aten.relu.default", op_summary(true, 1e-3 / relu_s)},
                      {"aten.neg.default", op_summary(neg_passes, 0)}};
  r.manifest = {{"started_at", "2026-11-27T00:00:00Z"},
                {"version", "0.1.0"},
                {"git_commit", "abc"},
                {"seed", 7},
                {"argv", {"crucible", "run"}},
                {"machine", {{"hostname", "h"}}}};
  r.cases.push_back(timed_case("relu-0", "aten.relu.default", relu_s, 0.05));
  CaseRow n;
  n.case_id = "neg-0";
  n.op = "aten.neg.default";
  n.status = neg_passes ? "passed" : "failed";
  n.detail = neg_passes ? "" : "wrong values in output 0";
  r.cases.push_back(n);
  return r;
}

TEST(History, RecordsListsAndLoadsRuns) {
  const std::string db = temp_path("h.db");
  int64_t a = 0, b = 0;
  {
    History h(db, true);
    a = h.record(run_of("/tmp/run-a", 1e-3, true));
    b = h.record(run_of("/tmp/run-b", 2e-3, false));
  }
  History h(db, false);
  const auto runs = h.list(0);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].id, b);  // newest first
  EXPECT_EQ(runs[1].id, a);
  EXPECT_EQ(runs[0].ops_passed, 1);
  EXPECT_DOUBLE_EQ(runs[0].correctness, 0.5);
  EXPECT_EQ(runs[0].git_commit, "abc");
  EXPECT_EQ(h.list(1).size(), 1u);

  RunData back = h.load(b);
  EXPECT_EQ(back.id, b);
  ASSERT_EQ(back.cases.size(), 2u);
  EXPECT_EQ(back.cases[0].case_id, "relu-0");
  EXPECT_TRUE(back.cases[0].timed);
  EXPECT_DOUBLE_EQ(back.cases[0].candidate.p90_s, 2e-3 * 1.05);
  EXPECT_EQ(back.cases[1].status, "failed");
  EXPECT_EQ(back.summary["ops"]["aten.neg.default"]["passed"], false);
  EXPECT_EQ(back.manifest["seed"], 7);

  // A folder recorded again (a resumed run) keeps its id and its new results.
  EXPECT_EQ(h.record(run_of("/tmp/run-b", 2e-3, true)), b);
  EXPECT_EQ(h.list(0).size(), 2u);
  EXPECT_EQ(h.load(b).cases[1].status, "passed");

  try {
    h.load(999);
    FAIL() << "no run 999";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no run 999"), std::string::npos) << e.what();
  }
}

TEST(History, RefusesWhatIsNotAHistory) {
  EXPECT_THROW(History(temp_path("missing.db"), false), Error);
  const std::string text = temp_path("text.db");
  std::ofstream(text) << "not a database at all, just some text that is long enough\n";
  EXPECT_THROW(History(text, true), Error);
}

TEST(CompareRuns, NamesTheWrongAndTheSlowerOp) {
  const RunComparison c =
      compare_runs(run_of("a", 1e-3, true), run_of("b", 20e-3, false), CompareOptions{});
  ASSERT_EQ(c.newly_failing.size(), 1u);
  EXPECT_EQ(c.newly_failing[0].op, "aten.neg.default");
  ASSERT_EQ(c.slower.size(), 1u);
  EXPECT_EQ(c.slower[0].op, "aten.relu.default");
  EXPECT_NEAR(c.slower[0].factor(), 1.0 / 20, 1e-9);
  ASSERT_EQ(c.status_changes.size(), 1u);
  EXPECT_EQ(c.status_changes[0].after, "failed");
  EXPECT_TRUE(c.faster.empty());
  EXPECT_TRUE(c.regressed());
  const json j = comparison_json(c);
  EXPECT_EQ(j["regressed"], true);
  EXPECT_EQ(j["ops_newly_failing"][0]["op"], "aten.neg.default");

  // And back: fixed and faster, nothing regressed.
  const RunComparison back =
      compare_runs(run_of("b", 20e-3, false), run_of("a", 1e-3, true), CompareOptions{});
  EXPECT_EQ(back.fixed.size(), 1u);
  EXPECT_EQ(back.faster.size(), 1u);
  EXPECT_FALSE(back.regressed());
}

TEST(CompareRuns, MovesWithinTheNoiseAreNotChanges) {
  // 30% slower, but the spreads overlap: noise.
  RunData a = run_of("a", 1e-3, true), b = run_of("b", 1.3e-3, true);
  a.cases[0].candidate.p90_s = 1.2e-3;
  b.cases[0].candidate.p10_s = 1.1e-3;
  EXPECT_TRUE(compare_runs(a, b, CompareOptions{}).slower.empty());
  // 30% slower with tight spreads: moved beyond the noise, yet under the minimum change.
  const RunComparison tight = compare_runs(run_of("a", 1e-3, true), run_of("b", 1.3e-3, true),
                                           CompareOptions{.min_change = 1.5});
  EXPECT_TRUE(tight.slower.empty());
  EXPECT_FALSE(tight.regressed());
  // At 1.2 the ranges (0.95..1.05 ms, 1.235..1.365 ms) part, but not by 1.2x; at 1.15 they do.
  EXPECT_TRUE(compare_runs(run_of("a", 1e-3, true), run_of("b", 1.3e-3, true),
                           CompareOptions{.min_change = 1.2})
                  .slower.empty());
  EXPECT_EQ(compare_runs(run_of("a", 1e-3, true), run_of("b", 1.3e-3, true),
                         CompareOptions{.min_change = 1.15})
                .slower.size(),
            1u);
}

TEST(CompareRuns, RangesThatPartByLessThanTheFactorAreNotChanges) {
  // Two runs of one build on a loaded 2-core machine: a call dominated by the round trip to the
  // candidate process timed 104..168 us, then 48..64 us, while its baseline (1.5 us, then
  // 7.9 us) moved the other way: an 11x move in the speed-up, from noise alone.
  RunData a = run_of("a", 141e-6, true), b = run_of("b", 50e-6, true);
  a.cases[0].candidate = {141e-6, 104e-6, 168e-6, 30};
  b.cases[0].candidate = {50e-6, 48e-6, 64e-6, 30};
  a.cases[0].speedup = 0.015;
  b.cases[0].speedup = 0.165;
  const RunComparison c = compare_runs(a, b, CompareOptions{});
  EXPECT_TRUE(c.faster.empty());
  EXPECT_TRUE(c.slower.empty());
  // The same move seen the other way is no regression either.
  const RunComparison back = compare_runs(b, a, CompareOptions{});
  EXPECT_TRUE(back.slower.empty());
  EXPECT_FALSE(back.regressed());
}

}  // namespace
}  // namespace crucible
