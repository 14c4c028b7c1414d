// End-to-end: bad input gets a clear one-line error naming the place, and exit status 2.
#include <gtest/gtest.h>

#include "e2e/cli_helpers.h"

namespace crucible::e2e {
namespace {

int count_lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

void expect_clean_error(const Output& o, const std::string& needle) {
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_NE(o.out.find("crucible: error: "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find(needle), std::string::npos) << o.out;
  EXPECT_EQ(count_lines(o.out), 1) << o.out;
}

TEST(E2EBadInput, MalformedTraceLineNamesFileLineAndColumn) {
  std::string dir = temp_dir("badtrace");
  std::string file = dir + "/bad.txt";
  std::ofstream(file) << "Operator: aten.add.Tensor\n"
                         "cnt: 1, ((T([2, 3], f32), T([2, 3], f32)), {})\n"
                         "cnt: 2, ((T([2, 3], f32), T([2, 3] f32)), {})\n";
  expect_clean_error(crucible("parse " + file), file + ":3:");
  expect_clean_error(crucible("run --suite traces:" + file + " --out " + dir + "/run"),
                     file + ":3:");
}

TEST(E2EBadInput, UnknownDtypeInTraceIsNamed) {
  std::string dir = temp_dir("baddtype");
  std::string file = dir + "/bad.txt";
  std::ofstream(file) << "Operator: aten.relu.default\ncnt: 1, ((T([2], f17),), {})\n";
  expect_clean_error(crucible("parse " + file), "f17");
}

TEST(E2EBadInput, UnknownOpSuggestsTheClosest) {
  Output o = crucible("run --suite smoke --ops relux --out " + temp_dir("badop"));
  expect_clean_error(o, "relux");
  EXPECT_NE(o.out.find("did you mean"), std::string::npos) << o.out;
}

TEST(E2EBadInput, UnknownDtypeFlagListsTheValidOnes) {
  expect_clean_error(crucible("run --dtypes f32,f99 --out " + temp_dir("baddt")), "f99");
}

TEST(E2EBadInput, MissingTraceFile) {
  expect_clean_error(crucible("run --suite traces:/no/such/trace.txt --out " + temp_dir("miss")),
                     "/no/such/trace.txt");
  expect_clean_error(crucible("parse /no/such/trace.txt"), "/no/such/trace.txt");
}

TEST(E2EBadInput, NonWritableOut) {
  expect_clean_error(crucible("run --out /proc/crucible-cannot-write-here"), "--out");
}

TEST(E2EBadInput, UnknownBackendAndSuite) {
  expect_clean_error(crucible("run --backend nosuch --out " + temp_dir("badb")), "nosuch");
  expect_clean_error(crucible("run --suite nosuch --out " + temp_dir("bads")), "nosuch");
}

TEST(E2EBadInput, MalformedSingleCase) {
  expect_clean_error(
      crucible("run --op aten.add.Tensor --case " + shell_quote("((T([2], f32), T([2], f32)), {}") +
               " --out " + temp_dir("badcase")),
      "--case:1:");
}

TEST(E2EBadInput, UnknownFlagIsAUsageError) {
  Output o = crucible("run --no-such-flag");
  EXPECT_EQ(o.status, 2) << o.out;
}

TEST(E2EParse, EveryShippedTraceParses) {
  Output o = crucible(std::string("parse -q ") + CRUCIBLE_SOURCE_DIR + "/data/traces");
  EXPECT_EQ(o.status, 0) << o.out;
  EXPECT_NE(o.out.find("parsed"), std::string::npos);
}

TEST(E2EOps, ListsTheCatalogAndBackendSupport) {
  Output o = crucible("ops --backend ref");
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_NE(o.out.find("aten.add.Tensor"), std::string::npos);
  EXPECT_NE(o.out.find("aten.native_layer_norm.default"), std::string::npos);
  EXPECT_NE(o.out.find("overloads in the catalog"), std::string::npos);
}

TEST(E2ETraces, TraceCasesRunAndUnknownOpsAreUnsupported) {
  std::string dir = temp_dir("traces");
  std::string file = dir + "/t.txt";
  std::ofstream(file) << "Operator: aten.add.Tensor\n"
                         "cnt: 3, ((T([4, 8], f16), T([8], f16)), {})\n"
                         "Operator: aten.sum.SymInt\n"
                         "cnt: 1, ((T([4, 8], f32), [1], True), {})\n"
                         "Operator: aten.mm.default\n"
                         "cnt: 1, ((T([6, 5], f32), T([5, 7], f32, stride=(1, 5))), {})\n"
                         "Operator: aten.no_such_op.default\n"
                         "cnt: 1, ((T([2], f32),), {})\n";
  Output o = crucible("run --suite traces:" + file + " --backend ref --out " + dir + "/run");
  EXPECT_EQ(o.status, 1) << o.out;  // one op is unsupported: not everything passed
  nlohmann::json s = read_json(dir + "/run/summary.json");
  EXPECT_EQ(s["cases_total"], 4);
  EXPECT_EQ(s["cases_passed"], 3);
  EXPECT_EQ(s["cases_unsupported"], 1);
  EXPECT_EQ(s["cases_failed"], 0);
}

}  // namespace
}  // namespace crucible::e2e
