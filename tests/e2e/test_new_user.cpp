// End-to-end: what a new user meets first. Impossible tensors and empty traces are refused with
// their place, flag values that cannot mean anything are refused with the flag's name, and the
// outputs of a run count its cases the same way.
#include <chrono>
#include <map>
#include <numeric>

#include <gtest/gtest.h>

#include "e2e/cli_helpers.h"

namespace crucible::e2e {
namespace {

void expect_refused(const Output& o, const std::string& needle) {
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_NE(o.out.find("crucible: error: "), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("internal error"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find(needle), std::string::npos) << o.out;
}

// "3 passed, 1 failed, ..." as status_counts_text prints the first four statuses.
std::string fmt_counts(std::map<std::string, int> n) {
  return std::to_string(n["passed"]) + " passed, " + std::to_string(n["failed"]) + " failed, " +
         std::to_string(n["crashed"]) + " crashed, " + std::to_string(n["timed_out"]) +
         " timed out";
}

Output single_case(const std::string& call, const std::string& extra = "") {
  return crucible("run --backend ref --op aten.relu.default --case " + shell_quote(call) +
                  " --out " + temp_dir("single") + " " + extra);
}

TEST(E2ENewUser, StridesPastAnyStorageAreRefusedWithThePlace) {
  Output o = single_case("((T([2, 3], f32, stride=(4611686018427387904, 1)),), {})");
  expect_refused(o, "--case:1:");
  EXPECT_NE(o.out.find("the strides [4611686018427387904, 1] of tensor [2, 3] reach past any "
                       "possible storage"),
            std::string::npos)
      << o.out;
}

TEST(E2ENewUser, ATensorOfTwoToTheSixtySixElementsIsRefusedNotPassedAsEmpty) {
  expect_refused(single_case("((T([4294967296, 4294967296, 4], f32),), {})"),
                 "more elements than a 64-bit count holds");
  // Elements that fit, bytes that do not.
  expect_refused(single_case("((T([4611686018427387904], f64),), {})"),
                 "more bytes than a 64-bit count holds");
  // The same in a trace file: named with file:line:column.
  std::string dir = temp_dir("huge-trace");
  std::ofstream(dir + "/t.txt") << "Operator: aten.relu.default\n"
                                   "cnt: 1, ((T([2], f32),), {})\n"
                                   "cnt: 1, ((T([4294967296, 4294967296, 4], f32),), {})\n";
  expect_refused(crucible("parse " + dir + "/t.txt"), dir + "/t.txt:3:");
}

TEST(E2ENewUser, MoreThanSixteenDimensionsAreRefused) {
  std::string shape = "[1";
  for (int i = 1; i < 17; ++i) shape += ", 1";
  shape += "]";
  expect_refused(single_case("((T(" + shape + ", f32),), {})"),
                 "tensor has 17 dimensions; at most 16 are supported");
  // Sixteen are fine.
  std::string ok = "[1";
  for (int i = 1; i < 16; ++i) ok += ", 1";
  ok += "]";
  Output o = single_case("((T(" + ok + ", f32),), {})");
  EXPECT_EQ(o.status, 0) << o.out;
}

TEST(E2ENewUser, AnEmptyTraceIsAnErrorNotAFilterMiss) {
  std::string dir = temp_dir("empty-trace");
  std::ofstream(dir + "/empty.txt") << "";
  std::filesystem::create_directories(dir + "/empty-folder");
  for (const std::string& path : {dir + "/empty.txt", dir + "/empty-folder"}) {
    Output p = crucible("parse " + path);
    expect_refused(p, "no cases in " + path);
    Output r = crucible("run --suite traces:" + path + " --out " + dir + "/run");
    expect_refused(r, "no cases in " + path);
    EXPECT_EQ(r.out.find("filters"), std::string::npos) << r.out;
  }
}

// Each flag value that cannot mean anything is refused with the flag's name (exit status 2).
TEST(E2ENewUser, FlagValuesThatCannotMeanAnythingAreRefusedByName) {
  std::string out = temp_dir("flags");
  auto run = [&](const std::string& flags) { return crucible("run " + flags + " --out " + out); };
  for (const char* v : {"inf", "nan", "1e30", "99999999T", "-1G", "0x10"})
    expect_refused(run(std::string("--memory-limit ") + v), std::string("--memory-limit '") + v);
  for (const char* v : {"nan", "inf", "0", "-3"})
    expect_refused(run(std::string("--timeout ") + v), "--timeout");
  expect_refused(run("--seed -1"), "--seed '-1'");
  expect_refused(run("--seed 18446744073709551616"), "--seed");
  expect_refused(run("--ops ''"), "--ops is empty");
  expect_refused(run("--ops ' , '"), "--ops is empty");
  expect_refused(run("--dtypes ''"), "--dtypes is empty");
  expect_refused(run("--workers 100000"), "--workers 100000: at most");
  expect_refused(run("--threads 100000"), "--threads 100000: at most");
  expect_refused(crucible("run --op aten.relu.default --case " +
                          shell_quote("((T([2], f32),), {})") + " --ops neg --out " + out),
                 "--ops selects the cases of a suite");
  expect_refused(crucible("run --op aten.relu.default --case " +
                          shell_quote("((T([2], f32),), {})") + " --suite opinfo --out " + out),
                 "--suite selects the cases of a suite");
}

TEST(E2ENewUser, ResumeRefusesTheFlagsItWouldIgnore) {
  std::string out = temp_dir("resume-flags");
  Output o = crucible("run --suite smoke --backend ref --ops relu.default -q --out " + out);
  ASSERT_EQ(o.status, 0) << o.out;
  o = crucible("run --resume " + out + " --ops neg --suite opinfo");
  expect_refused(o, "are not taken with it (only --workers, --quiet and --profile are)");
  EXPECT_NE(o.out.find("--ops"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("--suite"), std::string::npos) << o.out;
  expect_refused(crucible("run --resume " + out + " --out /tmp/elsewhere"), "--out is not taken");
  expect_refused(crucible("run --resume " + out + " --dtypes f32"), "--dtypes is not taken");
  o = crucible("run --resume " + out + " --workers 1 -q");
  EXPECT_EQ(o.status, 0) << o.out;
}

TEST(E2ENewUser, CalibrateRefusesThreadsFarBeyondTheCores) {
  auto t0 = std::chrono::steady_clock::now();
  expect_refused(crucible("calibrate --threads 256"), "--threads 256: at most");
  expect_refused(crucible("run --perf --threads 256 --out " + temp_dir("perf-threads")),
                 "--threads 256: at most");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10);
}

// The console, summary.json and SUMMARY.md count the statuses the same way, each apart, and
// the counts add up to the total.
TEST(E2ENewUser, EveryOutputCountsTheStatusesTheSameWay) {
  std::string out = temp_dir("counts");
  Output o = crucible(
      "run --suite smoke --backend faulty --ops relu.default,neg,mm,sigmoid --dtypes f32 "
      "--memory-limit 1G --timeout 5 --out " +
      out);
  ASSERT_EQ(o.status, 1) << o.out;
  std::map<std::string, int> lines;
  for (const auto& l : read_jsonl(out + "/results.jsonl")) ++lines[l["status"]];
  ASSERT_GT(lines["failed"], 0);
  ASSERT_GT(lines["crashed"], 0);
  ASSERT_GT(lines["unsupported"], 0);
  ASSERT_GT(lines["memory_limit"], 0);
  nlohmann::json s = read_json(out + "/summary.json");
  const std::map<std::string, std::string> field = {{"passed", "cases_passed"},
                                                    {"failed", "cases_failed"},
                                                    {"crashed", "cases_crashed"},
                                                    {"timed_out", "cases_timed_out"},
                                                    {"memory_limit", "cases_memory_limit"},
                                                    {"unsupported", "cases_unsupported"},
                                                    {"skipped", "cases_skipped"},
                                                    {"invalid_case", "cases_invalid"},
                                                    {"compile_error", "cases_compile_error"}};
  int sum = 0;
  for (const auto& [status, key] : field) {
    ASSERT_TRUE(s.contains(key)) << key;
    EXPECT_EQ(s[key].get<int>(), lines[status]) << key;
    sum += s[key].get<int>();
  }
  EXPECT_EQ(sum, s["cases_total"].get<int>()) << "the status counts must add up to the total";
  const std::string counts = fmt_counts(lines);
  EXPECT_NE(o.out.find(counts), std::string::npos) << counts << "\n" << o.out;
  EXPECT_NE(read_text(out + "/SUMMARY.md").find(counts), std::string::npos) << counts;
}

TEST(E2ENewUser, PerfScoreIsNotApplicableWhenNoOpIsCorrect) {
  // clone on the faulty backend is wrong only on NaN: some cases pass and are timed, the op is
  // not correct, so no op is correct and timed.
  std::string out = temp_dir("perf-na");
  Output o = crucible("run --suite smoke --backend faulty --ops clone --perf --out " + out);
  ASSERT_EQ(o.status, 1) << o.out;
  nlohmann::json s = read_json(out + "/summary.json");
  EXPECT_TRUE(s["perf_score"].is_null()) << s["perf_score"];
  EXPECT_NE(o.out.find("perf score n/a"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("0.000x"), std::string::npos) << o.out;
  EXPECT_NE(read_text(out + "/SUMMARY.md").find("| performance score | n/a"), std::string::npos);
}

// A run that fails only because of unsupported cases says which ops and why.
TEST(E2ENewUser, UnsupportedOpsAreListedWithTheReason) {
  std::string dir = temp_dir("unsupported");
  std::ofstream(dir + "/t.txt") << "Operator: aten.relu.default\n"
                                   "cnt: 1, ((T([4], f32),), {})\n"
                                   "Operator: aten.no_such_op.default\n"
                                   "cnt: 1, ((T([2], f32),), {})\n";
  Output o = crucible("run --suite traces:" + dir + "/t.txt --backend ref --out " + dir + "/run");
  EXPECT_EQ(o.status, 1) << o.out;
  EXPECT_NE(o.out.find("unsupported by ref: 1 op(s)"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("aten.no_such_op.default"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("not in crucible's catalog"), std::string::npos) << o.out;
  EXPECT_NE(read_text(dir + "/run/SUMMARY.md").find("## Unsupported ops"), std::string::npos);
}

}  // namespace
}  // namespace crucible::e2e
