// The performance cases of `--suite opinfo --perf`: an op that occurs in the shipped traces is
// timed on a handful of its distinct real-model calls (within the caps), the others on the
// catalog's synthetic large sizes.
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "crucible/cases/trace.h"
#include "crucible/suites/suite.h"
#include "suites/trace_shapes.h"

namespace crucible {
namespace {

const std::string kTraceDir = std::string(CRUCIBLE_SOURCE_DIR) + "/data/traces";

SuiteOptions perf_options(const std::string& op) {
  SuiteOptions o;
  o.suite = "opinfo";
  o.perf = true;
  o.ops = {op};
  o.max_numel = int64_t{1} << 24;
  o.max_flops = 2e9;
  return o;
}

std::vector<SuiteCase> perf_only(const std::vector<SuiteCase>& all) {
  std::vector<SuiteCase> out;
  for (const SuiteCase& sc : all)
    if (sc.c.perf) out.push_back(sc);
  return out;
}

// The printed calls of `op` in the shipped traces.
std::set<std::string> trace_calls_of(const std::string& op) {
  std::set<std::string> out;
  for (const cases::TraceEntry& e : cases::read_traces(kTraceDir))
    if (e.op == op) out.insert(cases::print_call(e.call));
  return out;
}

TEST(PerfCases, AnOpOfTheTracesIsTimedOnItsDistinctRealCallsWithinTheCaps) {
  const std::string op = "aten.mm.default";
  const std::set<std::string> real = trace_calls_of(op);
  ASSERT_GT(real.size(), 4u);
  const SuiteOptions o = perf_options(op);
  const std::vector<SuiteCase> perf = perf_only(build_suite(o));
  ASSERT_EQ(perf.size(), 4u);
  std::set<std::string> seen;
  double previous = 1e300;
  for (const SuiteCase& sc : perf) {
    const std::string text = cases::print_call(sc.c.call);
    EXPECT_TRUE(real.count(text)) << text << " is not a call of the traces";
    EXPECT_TRUE(seen.insert(text).second) << text << " is timed twice";
    EXPECT_EQ(sc.c.label, "perf: trace");
    EXPECT_NE(sc.c.source.find("traces/"), std::string::npos) << sc.c.source;
    EXPECT_LE(sc.c.total_elements(), o.max_numel);
    const double flops = call_size(&OpRegistry::catalog().get(op), sc.c.call).flops;
    EXPECT_LE(flops, o.max_flops);
    EXPECT_LE(flops, previous) << "ordered from the largest";
    previous = flops;
  }
  // The largest real call within the caps comes first.
  double largest = 0;
  for (const cases::TraceEntry& e : cases::read_traces(kTraceDir)) {
    if (e.op != op) continue;
    const double f = call_size(&OpRegistry::catalog().get(op), e.call).flops;
    Case c;
    c.call = e.call;
    if (f <= o.max_flops && c.total_elements() <= o.max_numel) largest = std::max(largest, f);
  }
  EXPECT_EQ(call_size(&OpRegistry::catalog().get(op), perf.front().c.call).flops, largest);
}

TEST(PerfCases, TighterCapsLeaveOutTheLargerCalls) {
  SuiteOptions o = perf_options("aten.mm.default");
  o.max_flops = 1e8;
  const std::vector<SuiteCase> perf = perf_only(build_suite(o));
  ASSERT_FALSE(perf.empty());
  for (const SuiteCase& sc : perf) {
    EXPECT_EQ(sc.c.label, "perf: trace");
    EXPECT_LE(call_size(&OpRegistry::catalog().get("aten.mm.default"), sc.c.call).flops, 1e8);
  }
}

TEST(PerfCases, TheDtypeFilterPicksAmongTheRealCallsOfThatDtype) {
  // add.Tensor occurs in the traces in f16, f32, i32 and i64 (and never in bf16).
  SuiteOptions o = perf_options("aten.add.Tensor");
  o.dtypes = {DType::Int64};
  std::vector<SuiteCase> perf = perf_only(build_suite(o));
  ASSERT_FALSE(perf.empty());
  for (const SuiteCase& sc : perf) {
    EXPECT_EQ(sc.c.label, "perf: trace");
    EXPECT_EQ(primary_dtype(sc.c.call), DType::Int64) << cases::print_call(sc.c.call);
  }
  // No real call in the selected dtype: the synthetic sizes stand in.
  o.dtypes = {DType::BFloat16};
  perf = perf_only(build_suite(o));
  ASSERT_FALSE(perf.empty());
  for (const SuiteCase& sc : perf) {
    EXPECT_EQ(sc.c.source, "opinfo-perf");
    EXPECT_EQ(primary_dtype(sc.c.call), DType::BFloat16) << cases::print_call(sc.c.call);
  }
}

TEST(PerfCases, AnOpAbsentFromTheTracesGetsLargeSyntheticCases) {
  const std::string op = "aten.cumprod.default";
  ASSERT_TRUE(trace_calls_of(op).empty());
  const std::vector<SuiteCase> perf = perf_only(build_suite(perf_options(op)));
  ASSERT_FALSE(perf.empty());
  for (const SuiteCase& sc : perf) {
    EXPECT_EQ(sc.c.source, "opinfo-perf");
    // Large enough to leave the caches: at least 1M elements (4 MiB in f32).
    EXPECT_GE(sc.c.total_elements(), int64_t{1} << 20) << cases::print_call(sc.c.call);
  }
}

TEST(PerfCases, PickSpreadsOverTheSizesAndSkipsUnsupportedDtypes) {
  const std::string text =
      "Operator: aten.relu.default\n"
      "cnt: 1, ((T([10], f32),), {})\n"
      "cnt: 1, ((T([1000], f32),), {})\n"
      "cnt: 1, ((T([100], f32),), {})\n"
      "cnt: 1, ((T([5000], b8),), {})\n"
      "cnt: 1, ((T([10000], f32),), {})\n"
      "cnt: 1, ((T([1], f32),), {})\n";
  const auto entries = cases::parse_trace(text, "t.txt");
  const OpDef& relu = OpRegistry::catalog().get("aten.relu.default");
  auto shapes = [](const std::vector<cases::TraceEntry>& es) {
    std::vector<int64_t> out;
    for (const auto& e : es) out.push_back(e.call.args.at(0).tensor.shape.at(0));
    return out;
  };
  // b8 is not a relu dtype; 10000 exceeds the cap; the rest spread from the largest down.
  EXPECT_EQ(shapes(pick_perf_calls(relu, entries, 5000, 0, 3)),
            (std::vector<int64_t>{1000, 100, 1}));
  EXPECT_EQ(shapes(pick_perf_calls(relu, entries, 0, 0, 2)), (std::vector<int64_t>{10000, 1}));
  EXPECT_EQ(shapes(pick_perf_calls(relu, entries, 0, 0, 1)), (std::vector<int64_t>{10000}));
  EXPECT_TRUE(pick_perf_calls(relu, entries, 0, 0, 0).empty());
}

TEST(PerfCases, DistinctCallsKeepTheFirstOccurrence) {
  const auto by_op = distinct_trace_calls(kTraceDir);
  size_t total = 0;
  for (const auto& [op, calls] : by_op) {
    std::set<std::string> texts;
    for (const auto& e : calls) {
      EXPECT_EQ(e.op, op);
      EXPECT_TRUE(texts.insert(e.call_text).second) << op << ": " << e.call_text;
    }
    total += calls.size();
  }
  EXPECT_GT(total, 1000u);
  EXPECT_LT(total, cases::read_traces(kTraceDir).size());
}

}  // namespace
}  // namespace crucible
