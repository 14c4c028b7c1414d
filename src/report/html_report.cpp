// report.html (see html_report.h): the page's frame, scores and failing cases are written here;
// the table and charts are drawn in the browser by assets/report.js from the inlined data.
#include "crucible/report/html_report.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "crucible/report/atomic_file.h"

namespace crucible {

namespace report_assets {
extern const char* const k_chartjs;
extern const char* const k_report_js;
extern const char* const k_report_css;
}  // namespace report_assets

using nlohmann::json;

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string json_for_script(const json& j) {
  const std::string text = j.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '<')
      out += "\\u003c";
    else if (c == '>')
      out += "\\u003e";
    else if (c == '&')
      out += "\\u0026";
    else
      out += c;
  }
  return out;
}

namespace {

// A script's text inlined: a "</script" inside it (in a string or a comment) would end the
// element, so it is written "<\/script", which means the same in JavaScript.
std::string inline_script(std::string_view js) {
  std::string out;
  out.reserve(js.size());
  for (size_t i = 0; i < js.size(); ++i) {
    if (js[i] == '<' && i + 1 < js.size() && js[i + 1] == '/' && i + 8 <= js.size()) {
      std::string tag(js.substr(i + 2, 6));
      std::transform(tag.begin(), tag.end(), tag.begin(),
                     [](unsigned char c) { return std::tolower(c); });
      if (tag == "script") {
        out += "<\\/";
        ++i;
        continue;
      }
    }
    out += js[i];
  }
  return out;
}

std::string get_string(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

// A score cell: the value exactly as summary.json holds it (data-value) and as people read it.
std::string score_cell(const json& summary, const char* key, const char* label, bool percent,
                       bool times) {
  auto it = summary.find(key);
  std::string value = "", shown = "n/a";
  if (it != summary.end() && it->is_number()) {
    value = it->dump();
    const double v = it->get<double>();
    shown = percent                   ? fmt::format("{:.1f}%", 100 * v)
            : times                   ? fmt::format("{:.3g}\u00d7", v)
            : it->is_number_integer() ? it->dump()
                                      : fmt::format("{:.4g}", v);
  }
  return fmt::format(
      "<tr><th>{}</th><td id=\"score-{}\" class=\"num\" data-value=\"{}\">{}</td></tr>\n",
      html_escape(label), key, html_escape(value), html_escape(shown));
}

// "data/models/x.graph:12" -> ("x.graph", 12); line 0 when the source is not file:line.
std::pair<std::string, int> source_line(const std::string& source) {
  const auto colon = source.rfind(':');
  if (colon == std::string::npos || colon + 1 >= source.size()) return {"", 0};
  const std::string digits = source.substr(colon + 1);
  if (!std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c); }))
    return {"", 0};
  return {std::filesystem::path(source.substr(0, colon)).filename().string(),
          std::atoi(digits.c_str())};
}

json page_data(const RunData& run) {
  const json& s = run.summary;
  json d = {{"summary", s}};
  if (s.contains("peaks"))
    d["peaks"] = s["peaks"];
  else if (run.manifest.contains("machine") && run.manifest["machine"].contains("peaks"))
    d["peaks"] = run.manifest["machine"]["peaks"];
  json timings = json::array();
  for (const CaseRow& c : run.cases)
    if (c.timed)
      timings.push_back({{"op", c.op},
                         {"case", c.case_id},
                         {"speedup", c.speedup},
                         {"seconds", c.candidate.median_s},
                         {"flops", c.flops},
                         {"bytes", c.bytes},
                         {"gflops", c.gflops},
                         {"gbps", c.gbps}});
  d["timings"] = timings;

  const std::string suite = get_string(s, "suite");
  if (suite.starts_with("opbyop")) {  // the graph's unique nodes, in graph order
    json nodes = json::array();
    std::vector<const CaseRow*> rows;
    for (const CaseRow& c : run.cases)
      if (source_line(c.source).second > 0) rows.push_back(&c);
    std::stable_sort(rows.begin(), rows.end(), [](const CaseRow* a, const CaseRow* b) {
      return source_line(a->source) < source_line(b->source);
    });
    for (const CaseRow* c : rows) {
      auto [file, line] = source_line(c->source);
      nodes.push_back({{"op", c->op},
                       {"file", file},
                       {"line", line},
                       {"cnt", c->cnt},
                       {"status", c->status},
                       {"seconds", c->timed ? c->candidate.median_s : 0.0}});
    }
    d["nodes"] = nodes;
  }
  if (suite == "model" || suite.starts_with("model:")) {  // each model's outputs, in order
    json models = json::array();
    for (const CaseRow& c : run.cases) {
      json outputs = json::array();
      for (const TensorCheck& t : c.checks)
        if (t.rmse >= 0 && t.allowed_rmse > 0)
          outputs.push_back({{"name", t.what}, {"ratio", std::max(t.rmse / t.allowed_rmse, 1e-6)}});
      if (!outputs.empty())
        models.push_back({{"model", c.op}, {"status", c.status}, {"outputs", outputs}});
    }
    d["models"] = models;
  }
  return d;
}

bool failing(const std::string& status) {
  return status != "passed" && status != "skipped" && status != "unsupported";
}

}  // namespace

std::string render_html_report(const RunData& run) {
  const json& s = run.summary;
  const json& m = run.manifest;
  const std::string suite = get_string(s, "suite"), backend = get_string(s, "backend");
  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  h += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  h += fmt::format("<title>crucible: {} on {}</title>\n", html_escape(suite), html_escape(backend));
  h += fmt::format("<style>\n{}</style>\n</head>\n<body>\n", report_assets::k_report_css);
  // Errors of the page's scripts are shown (and so seen by a test reading the page).
  h += "<div id=\"js-errors\" role=\"alert\"></div>\n<script>\nwindow.addEventListener(\"error\", "
       "function (e) { document.getElementById(\"js-errors\").textContent += \"script error: \" + "
       "e.message + \"\\n\"; });\n</script>\n";
  h += fmt::format(
      "<h1>crucible run: <span id=\"suite\">{}</span> on <span id=\"backend\">{}</span></h1>\n",
      html_escape(suite), html_escape(backend));
  std::string meta = "reference " + html_escape(get_string(s, "reference"));
  if (!get_string(s, "baseline").empty())
    meta += " &middot; baseline " + html_escape(get_string(s, "baseline"));
  if (!get_string(m, "started_at").empty())
    meta += " &middot; started " + html_escape(get_string(m, "started_at"));
  if (s.contains("seconds") && s["seconds"].is_number())
    meta += fmt::format(" &middot; {:.1f} s", s["seconds"].get<double>());
  if (!get_string(m, "version").empty())
    meta += " &middot; crucible " + html_escape(get_string(m, "version")) + " (" +
            html_escape(get_string(m, "git_commit")) + ")";
  if (m.contains("machine") && m["machine"].is_object())
    meta += " &middot; " + html_escape(get_string(m["machine"], "hostname")) + ", " +
            html_escape(get_string(m["machine"], "cpu_model"));
  if (m.contains("seed") && m["seed"].is_number()) meta += " &middot; seed " + m["seed"].dump();
  h += "<p class=\"meta\">" + meta + "</p>\n";
  if (m.contains("argv") && m["argv"].is_array()) {
    std::string cmd;
    for (const json& a : m["argv"])
      if (a.is_string()) cmd += (cmd.empty() ? "" : " ") + a.get<std::string>();
    h += "<p class=\"meta\">command: <code>" + html_escape(cmd) + "</code></p>\n";
  }

  h += "<h2>Scores</h2>\n<table id=\"scores\">\n";
  h += score_cell(s, "correctness_score", "correctness (ops correct / ops)", true, false);
  h += score_cell(s, "coverage", "coverage (ops supported / ops)", true, false);
  h += score_cell(s, "perf_score", "performance (geometric mean speed-up, correct timed ops)",
                  false, true);
  h += score_cell(
      s, "perf_at_p",
      fmt::format("perf@p (ops correct and faster than p = {})", s.value("p", 1.0)).c_str(), true,
      false);
  h += "</table>\n<table id=\"counts\">\n";
  for (auto [key, label] : std::initializer_list<std::pair<const char*, const char*>>{
           {"ops_total", "ops"},
           {"ops_supported", "ops supported"},
           {"ops_passed", "ops correct"},
           {"cases_total", "cases"},
           {"cases_passed", "passed"},
           {"cases_failed", "failed"},
           {"cases_crashed", "crashed"},
           {"cases_timed_out", "timed out"},
           {"cases_memory_limit", "memory limit"},
           {"cases_unsupported", "unsupported"},
           {"cases_skipped", "skipped"},
           {"cases_invalid", "invalid"},
           {"cases_compile_error", "compile error"}})
    h += score_cell(s, key, label, false, false);
  h += "</table>\n";

  h += "<h2>Operators</h2>\n<div class=\"controls\"><input id=\"filter\" type=\"search\" "
       "placeholder=\"filter: op, family or error\" aria-label=\"filter\"><select "
       "id=\"verdict-filter\" aria-label=\"verdict\"><option value=\"\">every verdict</option>"
       "<option value=\"correct\">correct</option><option value=\"wrong\">wrong</option>"
       "<option value=\"unsupported\">unsupported</option><option value=\"skipped\">skipped"
       "</option></select><span id=\"op-count\"></span></div>\n"
       "<table id=\"op-table\"><thead></thead><tbody></tbody></table>\n"
       "<noscript><p class=\"note\">The table and charts need JavaScript; summary.json and "
       "operator_summary.csv hold the same numbers.</p></noscript>\n";

  h += "<h2>Plots</h2>\n<div id=\"chart-notes\"></div>\n<div class=\"charts\" "
       "id=\"charts\"></div>\n";

  h += "<h2>Failing cases</h2>\n<div id=\"failures\">\n";
  size_t shown = 0, total = 0;
  constexpr size_t kMaxShown = 200;
  for (const CaseRow& c : run.cases) {
    if (!failing(c.status)) continue;
    if (++total > kMaxShown) continue;
    ++shown;
    h += fmt::format(
        "<div class=\"failure\" data-case=\"{}\" data-op=\"{}\"><span class=\"status\">{}</span> "
        "<code>{}</code> <code>{}</code>\n<pre class=\"detail\">{}</pre>\n",
        html_escape(c.case_id), html_escape(c.op), html_escape(c.status), html_escape(c.op),
        html_escape(c.call), html_escape(c.detail));
    if (!c.reproducer.empty())
      h += "reproduce: <pre class=\"reproducer\"><code>" + html_escape(c.reproducer) +
           "</code></pre>\n";
    h += "</div>\n";
  }
  if (total == 0) h += "<p class=\"note\" id=\"no-failures\">No case failed.</p>\n";
  if (total > shown)
    h += fmt::format("<p class=\"note\">{} more failing cases are in results.jsonl.</p>\n",
                     total - shown);
  h += "</div>\n";

  h += "<script type=\"application/json\" id=\"crucible-data\">" + json_for_script(page_data(run)) +
       "</script>\n";
  h += "<script>\n" + inline_script(report_assets::k_chartjs) + "\n</script>\n";
  h += "<script>\n" + inline_script(report_assets::k_report_js) + "\n</script>\n";
  h += "</body>\n</html>\n";
  return h;
}

std::string write_html_report(const std::string& dir) {
  const std::string path = dir + "/report.html";
  write_file_atomically(path, render_html_report(read_run_folder(dir)));
  return path;
}

}  // namespace crucible
