// Trace files: every line of every trace in data/traces parses and prints back to the same
// text; malformed files fail naming file:line:column.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "crucible/cases/trace.h"
#include "crucible/core/error.h"
#include "sandbox/remove_tree.h"

namespace crucible::cases {
namespace {

namespace fs = std::filesystem;

const std::string kTraceDir = std::string(CRUCIBLE_SOURCE_DIR) + "/data/traces";

std::vector<std::string> trace_files() {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(kTraceDir)) {
    if (e.is_regular_file() && e.path().extension() == ".txt") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string trace_error(const std::string& text) {
  try {
    parse_trace(text, "traces/foo.txt");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    return e.what();
  }
  return "";
}

TEST(Trace, EveryLineRoundTrips) {
  const std::vector<std::string> files = trace_files();
  ASSERT_GE(files.size(), 40u);
  size_t lines_checked = 0;
  for (const std::string& f : files) {
    const std::string text = read_file(f);
    const std::vector<TraceEntry> entries = parse_trace(text, f);
    // Index the file's lines to compare each entry with the line it came from.
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    size_t cnt_lines = 0;
    for (const std::string& line : lines) {
      if (line.starts_with("cnt:")) ++cnt_lines;
    }
    ASSERT_EQ(entries.size(), cnt_lines) << f;
    std::string op_line;
    for (const TraceEntry& e : entries) {
      ASSERT_GE(e.line, 1);
      const std::string& original = lines[static_cast<size_t>(e.line) - 1];
      const std::string printed = print_call(e.call);
      EXPECT_EQ(printed, e.call_text) << f << ":" << e.line;
      EXPECT_EQ("cnt: " + std::to_string(e.cnt) + ", " + printed, original) << f << ":" << e.line;
      // Reparsing the printed text gives the same structure.
      EXPECT_EQ(parse_call(printed), e.call) << f << ":" << e.line;
      EXPECT_EQ(e.file, f);
      ++lines_checked;
    }
    // Every Operator line: print it back from the entries' op_as_written.
    for (const std::string& line : lines) {
      if (!line.starts_with("Operator: ")) continue;
      const std::string name = line.substr(10);
      const bool used = std::any_of(entries.begin(), entries.end(),
                                    [&](const TraceEntry& e) { return e.op_as_written == name; });
      EXPECT_TRUE(used) << f << ": " << line;
    }
  }
  EXPECT_GT(lines_checked, 5000u);
}

TEST(Trace, ReadTracesReadsTheFolderSortedAndFast) {
  // The best of three runs, against noise from other processes.
  std::vector<TraceEntry> all;
  double ms = 1e9;
  for (int run = 0; run < 3; ++run) {
    const auto t0 = std::chrono::steady_clock::now();
    all = read_traces(kTraceDir);
    ms = std::min(
        ms,
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  EXPECT_GT(all.size(), 5000u);
  // Sorted by path, and lines ascending within a file.
  for (size_t k = 1; k < all.size(); ++k) {
    ASSERT_TRUE(all[k - 1].file < all[k].file ||
                (all[k - 1].file == all[k].file && all[k - 1].line < all[k].line))
        << all[k].file << ":" << all[k].line;
  }
  // An optimised build takes ~20 ms; debug and sanitised builds get a looser bound.
#if defined(NDEBUG) && !defined(__SANITIZE_ADDRESS__)
  EXPECT_LT(ms, 100.0);
#else
  EXPECT_LT(ms, 1000.0);
#endif
  RecordProperty("read_traces_ms", std::to_string(ms));
  // One file read directly gives the same entries as that file's part of the folder.
  const std::string one = trace_files().front();
  const std::vector<TraceEntry> single = read_traces(one);
  ASSERT_FALSE(single.empty());
  EXPECT_EQ(single.front().file, one);
  EXPECT_EQ(single.front().call, all.front().call);
}

TEST(Trace, SumSymIntIsNormalised) {
  const std::vector<TraceEntry> e = parse_trace(
      "Operator: aten.sum.SymInt\ncnt: 3, ((T([2, 3], f16), [0], True), {})\n"
      "Operator: aten.add.Tensor\ncnt: 0, ((T([2], f16), T([2], f16)), {})\n",
      "t.txt");
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].op, "aten.sum.dim_IntList");
  EXPECT_EQ(e[0].op_as_written, "aten.sum.SymInt");
  EXPECT_EQ(e[0].cnt, 3);
  EXPECT_EQ(e[0].line, 2);
  EXPECT_EQ(e[1].op, "aten.add.Tensor");
  EXPECT_EQ(e[1].op_as_written, "aten.add.Tensor");
  EXPECT_EQ(e[1].cnt, 0);
  EXPECT_EQ(normalise_op_name("aten.sum.SymInt"), "aten.sum.dim_IntList");
  EXPECT_EQ(normalise_op_name("aten.sum.default"), "aten.sum.default");
}

TEST(Trace, BlankLinesAndCrLf) {
  const std::vector<TraceEntry> e = parse_trace(
      "\n\nOperator: aten.relu.default\r\n\r\n   \ncnt: 2, ((T([4], f32),), {})\r\n\n", "t.txt");
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].line, 6);
  EXPECT_EQ(e[0].call_text, "((T([4], f32),), {})");
  EXPECT_TRUE(parse_trace("", "empty.txt").empty());
}

TEST(TraceErrors, CntBeforeOperator) {
  const std::string e = trace_error("\ncnt: 1, ((1,), {})\n");
  EXPECT_NE(e.find("traces/foo.txt:2:1: expected an 'Operator: <name>' line before"),
            std::string::npos)
      << e;
}

TEST(TraceErrors, NonIntegerCnt) {
  const std::string e = trace_error("Operator: aten.add.Tensor\ncnt: x1, ((1,), {})\n");
  EXPECT_NE(e.find("traces/foo.txt:2:6: expected a non-negative integer count after 'cnt:', "
                   "got 'x1,'"),
            std::string::npos)
      << e;
  EXPECT_NE(trace_error("Operator: aten.add.Tensor\ncnt: 1.5, ((1,), {})").find("2:6:"),
            std::string::npos);
  EXPECT_NE(trace_error("Operator: aten.add.Tensor\ncnt: -1, ((1,), {})").find("2:6:"),
            std::string::npos);
  EXPECT_NE(trace_error("Operator: aten.add.Tensor\ncnt: 1 ((1,), {})")
                .find("2:8: expected ',' after the count"),
            std::string::npos);
  EXPECT_NE(trace_error("Operator: aten.add.Tensor\ncnt: 99999999999999999999, ((1,), {})")
                .find("2:6: count 99999999999999999999 is out of range"),
            std::string::npos);
}

TEST(TraceErrors, MalformedOperatorLine) {
  for (const char* bad : {"Operator: aten.add Tensor", "Operator:", "Operator: aten.add",
                          "Operator: 1aten.add.Tensor", "Operator: aten..add"}) {
    const std::string e = trace_error(std::string("\n\n") + bad + "\n");
    EXPECT_NE(e.find("traces/foo.txt:3:"), std::string::npos) << bad << " -> " << e;
    EXPECT_NE(e.find("expected an operator name namespace.name.overload"), std::string::npos) << e;
  }
  const std::string junk = trace_error("Operator: aten.add.Tensor\nfoo bar\n");
  EXPECT_NE(junk.find("traces/foo.txt:2:1: expected 'Operator: <name>' or 'cnt: <N>, <call>', "
                      "got 'foo'"),
            std::string::npos)
      << junk;
}

TEST(TraceErrors, CallErrorsNameTheFileLineAndColumn) {
  const std::string e =
      trace_error("Operator: aten.add.Tensor\ncnt: 1, ((T([2], f16), T([2], f16) x), {})\n");
  EXPECT_NE(e.find("traces/foo.txt:2:36: expected ',' or ')' after tensor argument"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("got 'x'"), std::string::npos) << e;
  const std::string ovf =
      trace_error("Operator: aten.add.Tensor\ncnt: 1, ((99999999999999999999,), {})\n");
  EXPECT_NE(ovf.find("traces/foo.txt:2:11: integer literal 99999999999999999999 is out of range"),
            std::string::npos)
      << ovf;
  const std::string dtype =
      trace_error("Operator: aten.add.Tensor\ncnt: 1, ((T([2], f99),), {})\n");
  EXPECT_NE(dtype.find("traces/foo.txt:2:18: expected a dtype code, got unknown dtype 'f99'"),
            std::string::npos)
      << dtype;
}

TEST(TraceErrors, MissingPath) {
  try {
    read_traces("/nonexistent/crucible/traces");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_NE(std::string(e.what()).find("no such file or folder: /nonexistent/crucible/traces"),
              std::string::npos)
        << e.what();
  }
}

TEST(Trace, ReadTracesRecursesOverTxtOnly) {
  const fs::path dir =
      fs::temp_directory_path() /
      ("crucible_trace_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  crucible::remove_tree(std::filesystem::path(dir).string());
  fs::create_directories(dir / "b" / "c");
  std::ofstream(dir / "b" / "c" / "z.txt")
      << "Operator: aten.relu.default\ncnt: 1, ((T([1], f16),), {})\n";
  std::ofstream(dir / "a.txt") << "Operator: aten.neg.default\ncnt: 2, ((T([2], f16),), {})\n";
  std::ofstream(dir / "notes.md") << "not a trace\n";
  const std::vector<TraceEntry> e = read_traces(dir.string());
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].op, "aten.neg.default");
  EXPECT_EQ(e[1].op, "aten.relu.default");
  EXPECT_EQ(e[1].file, (dir / "b" / "c" / "z.txt").string());
  crucible::remove_tree(std::filesystem::path(dir).string());
}

}  // namespace
}  // namespace crucible::cases
