// End-to-end: report.html of real runs (opinfo --perf on cpu, a model run, an op-by-op run)
// loaded in headless Chromium: no console output, no script error, the table sorts and filters
// through the URL fragment, the plots are drawn, and the numbers are summary.json's.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "crucible/report/html_report.h"
#include "e2e/browser.h"
#include "e2e/cli_helpers.h"

namespace crucible::e2e {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A real opinfo --perf run on cpu, made once for the tests of this file.
const std::string& opinfo_run() {
  static const std::string dir = [] {
    const std::string d = temp_dir("report-opinfo");
    Output o = crucible(
        "run --suite opinfo --backend cpu --baseline cpu --perf --quiet --ops "
        "relu.default,add.Tensor,sum.default --dtypes f32 --max-numel 65536 "
        "--history none --out " +
        d + "/run");
    EXPECT_TRUE(o.status == 0 || o.status == 1) << o.out;
    return d + "/run";
  }();
  return dir;
}

void expect_clean(const Page& p) {
  EXPECT_EQ(p.status, 0);
  EXPECT_TRUE(p.console.empty()) << "console: " << p.console.front();
  EXPECT_NE(p.dom.find("data-ready=\"1\""), std::string::npos)
      << "the page's script did not finish";
  EXPECT_NE(p.dom.find("<div id=\"js-errors\" role=\"alert\"></div>"), std::string::npos)
      << "a script error was caught";
}

double number(const std::string& s) { return std::stod(s); }

void check_page_numbers_and_plots() {
  CRUCIBLE_REQUIRE_CHROMIUM();
  const std::string run = opinfo_run();
  ASSERT_TRUE(fs::exists(run + "/report.html"));
  const json s = read_json(run + "/summary.json");
  ASSERT_TRUE(s["perf_score"].is_number()) << "the run was timed";
  const Page p = load_page(file_url(run + "/report.html"));
  expect_clean(p);

  // The scores and counts are summary.json's, exactly.
  for (const char* key : {"correctness_score", "coverage", "perf_score", "perf_at_p", "ops_total",
                          "ops_passed", "cases_total", "cases_passed", "cases_failed"}) {
    const std::string v = attribute_of(p.dom, std::string("score-") + key, "data-value");
    ASSERT_FALSE(v.empty()) << key;
    EXPECT_EQ(number(v), s[key].get<double>()) << key;
  }
  // One row per op, each with summary.json's speed-up.
  const std::vector<std::string> ops = table_ops(p.dom);
  EXPECT_EQ(ops.size(), s["ops"].size());
  int timed = 0;
  for (auto it = s["ops"].begin(); it != s["ops"].end(); ++it) {
    const size_t row = p.dom.find("<tr data-op=\"" + it.key() + "\"");
    ASSERT_NE(row, std::string::npos) << it.key();
    const std::string cells = p.dom.substr(row, p.dom.find("</tr>", row) - row);
    std::smatch m;
    ASSERT_TRUE(
        std::regex_search(cells, m, std::regex(R"re(data-key="speedup" data-value="([^"]*)")re")));
    if (it->contains("speedup")) {
      ++timed;
      EXPECT_EQ(number(m[1].str()), (*it)["speedup"].get<double>()) << it.key();
    } else {
      EXPECT_EQ(m[1].str(), "") << it.key();
    }
  }
  EXPECT_GT(timed, 0);

  // The plots are drawn: each canvas painted, with the run's points.
  int timed_cases = 0, roofline_cases = 0;
  for (const json& r : read_jsonl(run + "/results.jsonl"))
    if (r["record"] == "timing" && r.value("error", "").empty()) {
      ++timed_cases;
      if (r.value("flops", 0.0) > 0 && r.value("bytes", 0.0) > 0) ++roofline_cases;
    }
  EXPECT_EQ(attribute_of(p.dom, "chart-speedups", "data-points"), std::to_string(timed_cases));
  EXPECT_EQ(attribute_of(p.dom, "chart-roofline", "data-points"), std::to_string(roofline_cases));
  EXPECT_EQ(attribute_of(p.dom, "chart-families", "data-points"),
            std::to_string(s["families"].size()));
  for (const char* chart : {"chart-speedups", "chart-roofline", "chart-families"}) {
    const std::string painted = attribute_of(p.dom, chart, "data-painted");
    ASSERT_FALSE(painted.empty()) << chart;
    EXPECT_GT(std::stoi(painted), 1000) << chart << " drew (almost) nothing";
  }

  // A screenshot of the page.
  const std::string png = run + "/report.png";
  const Page shot = load_page(file_url(run + "/report.html"), png);
  EXPECT_EQ(shot.status, 0);
  ASSERT_TRUE(fs::exists(png));
  EXPECT_GT(fs::file_size(png), 20000u);
  EXPECT_EQ(read_text(png).substr(1, 3), "PNG");
}

void check_sort_and_filter() {
  CRUCIBLE_REQUIRE_CHROMIUM();
  const std::string run = opinfo_run();
  const json s = read_json(run + "/summary.json");
  // Sorted by speed-up, fastest first; ops without one last (by name).
  std::vector<std::pair<double, std::string>> timed;
  std::vector<std::string> untimed;
  for (auto it = s["ops"].begin(); it != s["ops"].end(); ++it)
    if (it->contains("speedup"))
      timed.push_back({(*it)["speedup"].get<double>(), it.key()});
    else
      untimed.push_back(it.key());
  std::sort(timed.begin(), timed.end(), [](auto& a, auto& b) { return a.first > b.first; });
  std::sort(untimed.begin(), untimed.end());
  std::vector<std::string> want;
  for (auto& [v, op] : timed) want.push_back(op);
  want.insert(want.end(), untimed.begin(), untimed.end());
  const Page sorted = load_page(file_url(run + "/report.html", "sort=speedup&order=desc"));
  expect_clean(sorted);
  EXPECT_EQ(table_ops(sorted.dom), want);

  // By name, descending.
  std::vector<std::string> names;
  for (auto it = s["ops"].begin(); it != s["ops"].end(); ++it) names.push_back(it.key());
  std::sort(names.rbegin(), names.rend());
  EXPECT_EQ(table_ops(load_page(file_url(run + "/report.html", "sort=op&order=desc")).dom), names);

  // Filtered by text, and by verdict.
  const Page filtered = load_page(file_url(run + "/report.html", "q=relu"));
  expect_clean(filtered);
  EXPECT_EQ(table_ops(filtered.dom), std::vector<std::string>{"aten.relu.default"});
  std::vector<std::string> correct;
  for (auto it = s["ops"].begin(); it != s["ops"].end(); ++it)
    if ((*it)["passed"].get<bool>()) correct.push_back(it.key());
  std::sort(correct.begin(), correct.end());
  EXPECT_EQ(table_ops(load_page(file_url(run + "/report.html", "verdict=correct")).dom), correct);
}

void check_report_command() {
  const std::string run = opinfo_run();
  const std::string before = read_text(run + "/report.html");
  fs::remove(run + "/report.html");
  Output o = crucible("report " + run);
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_NE(o.out.find("report.html"), std::string::npos);
  EXPECT_EQ(read_text(run + "/report.html"), before);

  Output missing = crucible("report /nonexistent/run-folder");
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.out.find("/nonexistent/run-folder"), std::string::npos) << missing.out;
  const std::string empty = temp_dir("report-empty");
  Output unfinished = crucible("report " + empty);
  EXPECT_EQ(unfinished.status, 2);
  EXPECT_NE(unfinished.out.find("no summary.json"), std::string::npos) << unfinished.out;
}

// One opinfo --perf run (the slow part) for the three checks.
TEST(ReportHtml, OpinfoPerfRunInChromium) {
  check_page_numbers_and_plots();
  check_sort_and_filter();
  check_report_command();
}

TEST(ReportHtml, ModelAndOpByOpRunsHaveTheirTimeline) {
  CRUCIBLE_REQUIRE_CHROMIUM();
  const std::string d = temp_dir("report-models");
  Output m = crucible(
      "run --suite model --model-filter gpt2-tiny-fwd,vit-tiny-fwd --backend cpu "
      "--quiet --history none --out " +
      d + "/model");
  ASSERT_EQ(m.status, 0) << m.out;
  const Page mp = load_page(file_url(d + "/model/report.html"));
  expect_clean(mp);
  int outputs = 0;
  for (const json& r : read_jsonl(d + "/model/results.jsonl"))
    if (r["record"] == "case")
      for (const json& c : r["checks"])
        if (c.value("rmse", -1.0) >= 0 && c.value("allowed_rmse", -1.0) > 0) ++outputs;
  EXPECT_GT(outputs, 0);
  EXPECT_EQ(attribute_of(mp.dom, "chart-timeline", "data-points"), std::to_string(outputs));
  EXPECT_GT(std::stoi(attribute_of(mp.dom, "chart-timeline", "data-painted")), 1000);
  const json ms = read_json(d + "/model/summary.json");
  EXPECT_EQ(number(attribute_of(mp.dom, "score-correctness_score", "data-value")),
            ms["correctness_score"].get<double>());

  Output o = crucible(
      "run --suite opbyop:tests/fixtures/graphs/gpt2-tiny-fwd.graph --backend cpu "
      "--quiet --history none --out " +
      d + "/opbyop");
  ASSERT_TRUE(o.status == 0 || o.status == 1) << o.out;
  const Page op = load_page(file_url(d + "/opbyop/report.html"));
  expect_clean(op);
  int nodes = 0;
  for (const json& r : read_jsonl(d + "/opbyop/results.jsonl")) nodes += r["record"] == "case";
  EXPECT_GT(nodes, 10);
  EXPECT_EQ(attribute_of(op.dom, "chart-timeline", "data-points"), std::to_string(nodes));
  EXPECT_GT(std::stoi(attribute_of(op.dom, "chart-timeline", "data-painted")), 1000);
}

TEST(ReportHtml, HostileTextFromKernelsStaysInert) {
  CRUCIBLE_REQUIRE_CHROMIUM();
  RunData r;
  r.folder = "x";
  const std::string evil = "</script><script>document.title='pwned'</script>";
  const std::string op = "aten.<img src=x onerror=\"document.title='pwned'\">";
  r.summary = {{"suite", "opinfo"},
               {"backend", "dir:k"},
               {"reference", "ref"},
               {"ops_total", 1},
               {"ops_passed", 0},
               {"cases_total", 1},
               {"correctness_score", 0.0},
               {"coverage", 1.0},
               {"perf_score", nullptr},
               {"ops",
                {{op,
                  {{"family", evil},
                   {"cases", 1},
                   {"supported", true},
                   {"passed", false},
                   {"status", {{"failed", 1}}},
                   {"first_failure", "failed: " + evil}}}}}};
  CaseRow c;
  c.case_id = "c1";
  c.op = op;
  c.status = "failed";
  c.detail = evil;
  c.reproducer = evil;
  r.cases.push_back(c);
  const std::string dir = temp_dir("report-hostile");
  {
    std::ofstream f(dir + "/report.html");
    f << render_html_report(r);
  }
  const Page p = load_page(file_url(dir + "/report.html", "q=pwned"));
  expect_clean(p);
  EXPECT_NE(p.dom.find("<title>crucible: opinfo on dir:k</title>"), std::string::npos);
  EXPECT_EQ(p.dom.find("<img"), std::string::npos);
  // The texts are on the page as text, in the table (the filter found them) and the failures.
  EXPECT_EQ(table_ops(p.dom).size(), 1u);
  EXPECT_NE(p.dom.find("&lt;/script&gt;&lt;script&gt;document.title='pwned'"), std::string::npos);
}

}  // namespace
}  // namespace crucible::e2e
