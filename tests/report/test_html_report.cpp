// report.html as text: escaping of every text from the run, the inlined data and scripts.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "crucible/report/html_report.h"

namespace crucible {
namespace {

using nlohmann::json;

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

RunData hostile_run() {
  RunData r;
  r.folder = "runs/x";
  const std::string evil = "</script><script>document.title='pwned'</script><!--";
  r.summary = {{"suite", "opinfo</title>"},
               {"backend", "dir:<b>k</b>"},
               {"reference", "ref"},
               {"ops_total", 1},
               {"ops_passed", 0},
               {"cases_total", 1},
               {"correctness_score", 0.0},
               {"coverage", 1.0},
               {"perf_score", nullptr},
               {"ops",
                {{"aten.<img src=x onerror=alert(1)>",
                  {{"family", "x"},
                   {"cases", 1},
                   {"supported", true},
                   {"passed", false},
                   {"status", {{"failed", 1}}},
                   {"first_failure", evil}}}}}};
  r.manifest = {{"argv", {"crucible", "run", "--backend", "dir:</script>"}}};
  CaseRow c;
  c.case_id = "c1\"><script>";
  c.op = "aten.<img src=x onerror=alert(1)>";
  c.call = "((T([2], f32),), {})";
  c.status = "failed";
  c.detail = evil;
  c.reproducer = "crucible run --op '<x>' && rm -rf /";
  r.cases.push_back(c);
  return r;
}

TEST(HtmlReport, EscapesTextAndAttributes) {
  EXPECT_EQ(html_escape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
}

TEST(HtmlReport, InlineJsonCannotEndItsScriptElement) {
  const std::string s = json_for_script({{"k", "</script><!-- & >"}});
  EXPECT_EQ(s.find('<'), std::string::npos);
  EXPECT_EQ(s.find('>'), std::string::npos);
  EXPECT_EQ(s.find('&'), std::string::npos);
  EXPECT_EQ(json::parse(s)["k"], "</script><!-- & >");  // the same data once parsed
}

TEST(HtmlReport, HostileTextFromTheRunStaysText) {
  const std::string page = render_html_report(hostile_run());
  // Exactly the page's own four script elements: the error catcher, the data, Chart.js and
  // the page's script; the run's "</script><script>" opened none.
  EXPECT_EQ(count(page, "<script"), 4u);
  EXPECT_EQ(count(page, "</script>"), 4u);
  EXPECT_EQ(page.find("<img"), std::string::npos);
  EXPECT_EQ(page.find("<b>"), std::string::npos);
  EXPECT_EQ(page.find("<!--"), std::string::npos);
  // The failing case is shown, escaped, with its reproducer.
  EXPECT_NE(page.find("&lt;/script&gt;&lt;script&gt;document.title=&#39;pwned&#39;"),
            std::string::npos);
  EXPECT_NE(page.find("crucible run --op &#39;&lt;x&gt;&#39; &amp;&amp; rm -rf /"),
            std::string::npos);
  EXPECT_NE(page.find("<title>crucible: opinfo&lt;/title&gt; on dir:&lt;b&gt;k&lt;/b&gt;</title>"),
            std::string::npos);
}

TEST(HtmlReport, ScoresCarrySummaryValuesExactly) {
  RunData r = hostile_run();
  r.summary["correctness_score"] = 0.1 + 0.2;  // not a short decimal
  r.summary["perf_score"] = 1.2345678901234567;
  const std::string page = render_html_report(r);
  EXPECT_NE(page.find("id=\"score-correctness_score\" class=\"num\" data-value=\"" +
                      json(0.1 + 0.2).dump() + "\">30.0%<"),
            std::string::npos);
  EXPECT_NE(page.find("id=\"score-perf_score\" class=\"num\" data-value=\"" +
                      json(1.2345678901234567).dump() + "\">1.23"),
            std::string::npos);
  // A score the summary has as null reads n/a, with no value.
  r.summary["perf_score"] = nullptr;
  EXPECT_NE(
      render_html_report(r).find("id=\"score-perf_score\" class=\"num\" data-value=\"\">n/a<"),
      std::string::npos);
}

TEST(HtmlReport, OpensOffline) {
  const std::string page = render_html_report(hostile_run());
  EXPECT_EQ(page.find("src=\"http"), std::string::npos);
  EXPECT_EQ(page.find("href=\"http"), std::string::npos);
  EXPECT_EQ(page.find("<script src"), std::string::npos);
  EXPECT_NE(page.find("Chart.js v"), std::string::npos);  // inlined from libjs-chart.js
}

}  // namespace
}  // namespace crucible
