// --max-numel caps the elements a trace call makes, outputs included where the arguments give
// their size: a 256k-row embedding gradient from a [2, 128, 1024] grad is skipped, not run.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "cli/commands.h"
#include "crucible/suites/suite.h"
#include "sandbox/remove_tree.h"

namespace crucible {
namespace {

TEST(TraceCaps, OutputsSizedByTheArgumentsCountAgainstMaxNumel) {
  const auto dir = std::filesystem::temp_directory_path() / "crucible_trace_caps";
  std::filesystem::create_directories(dir);
  {
    std::ofstream f(dir / "t.txt");
    f << "Operator: aten.embedding_dense_backward.default\n"
         "cnt: 1, ((T([2, 128, 1024], f16), T([2, 128], i64), 256008, 1, False), {})\n"
         "cnt: 1, ((T([2, 128, 1024], f16), T([2, 128], i64), 2, 1, False), {})\n"
         "Operator: aten.new_zeros.default\n"
         "cnt: 1, ((T([4], f16), [8192, 8192]), {})\n"
         "cnt: 1, ((T([4], f16), [64, 64]), {})\n";
  }
  SuiteOptions o;
  o.suite = "traces:" + (dir / "t.txt").string();
  o.max_numel = int64_t{1} << 24;
  const std::vector<SuiteCase> cases = build_suite(o);
  ASSERT_EQ(cases.size(), 4u);
  EXPECT_NE(cases[0].skip_reason.find("--max-numel"), std::string::npos);
  EXPECT_EQ(cases[1].skip_reason, "");
  EXPECT_NE(cases[2].skip_reason.find("--max-numel"), std::string::npos);
  EXPECT_EQ(cases[3].skip_reason, "");
  EXPECT_EQ(call_size(cases[0].op, cases[0].c.call).elements, 2 * 128 * 1024 + 256 + 256008 * 1024);
  EXPECT_EQ(call_size(cases[3].op, cases[3].c.call).elements, 4 + 64 * 64);
  crucible::remove_tree(std::filesystem::path(dir).string());
}

// `crucible run`'s default caps are a safety net above every shipped call: the shipped traces
// run whole (the reference is fast enough for the largest of them).
TEST(TraceCaps, DefaultCapsSkipNoShippedCall) {
  SuiteOptions o;
  o.suite = "traces:" + std::string(CRUCIBLE_SOURCE_DIR) + "/data/traces";
  o.max_numel = kDefaultTraceMaxNumel;
  o.max_flops = kDefaultTraceMaxFlops;
  const std::vector<SuiteCase> cases = build_suite(o);
  EXPECT_GT(cases.size(), 1000u);
  for (const SuiteCase& sc : cases)
    EXPECT_EQ(sc.skip_reason, "") << sc.c.op << " at " << sc.c.source;
  // The same calls under caps of a thousandth are skipped in part (the caps still apply).
  o.max_numel = kDefaultTraceMaxNumel / 1000;
  o.max_flops = kDefaultTraceMaxFlops / 1000;
  const std::vector<SuiteCase> capped = build_suite(o);
  EXPECT_TRUE(std::any_of(capped.begin(), capped.end(),
                          [](const SuiteCase& sc) { return !sc.skip_reason.empty(); }));
}

// --calls-per-op keeps an op whose calls are all over the caps: its smallest call is recorded
// skipped with the reason, so the op stays in the scores' denominators.
TEST(TraceCaps, CallsPerOpKeepsAnOpWhoseCallsAreAllOverTheCaps) {
  const auto dir = std::filesystem::temp_directory_path() / "crucible_trace_caps_per_op";
  std::filesystem::create_directories(dir);
  {
    std::ofstream f(dir / "t.txt");
    f << "Operator: aten.new_zeros.default\n"
         "cnt: 1, ((T([4], f16), [8192, 8192]), {})\n"
         "cnt: 1, ((T([4], f16), [4096, 8192]), {})\n"
         "Operator: aten.relu.default\n"
         "cnt: 1, ((T([64, 64], f32),), {})\n"
         "cnt: 1, ((T([32, 64], f32),), {})\n";
  }
  SuiteOptions o;
  o.suite = "traces:" + (dir / "t.txt").string();
  o.max_numel = int64_t{1} << 24;
  o.calls_per_op = 1;
  const std::vector<SuiteCase> cases = build_suite(o);
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0].c.op, "aten.new_zeros.default");
  EXPECT_NE(cases[0].skip_reason.find("--max-numel"), std::string::npos);
  // The smallest of its calls is the one recorded.
  EXPECT_EQ(call_size(cases[0].op, cases[0].c.call).elements, 4 + 4096 * 8192);
  EXPECT_EQ(cases[1].c.op, "aten.relu.default");
  EXPECT_EQ(cases[1].skip_reason, "");
  crucible::remove_tree(std::filesystem::path(dir).string());
}

}  // namespace
}  // namespace crucible
