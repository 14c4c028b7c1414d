// The op-by-op flow's reports (see crucible/report/opbyop_report.h).
#include "crucible/report/opbyop_report.h"

#include <filesystem>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "crucible/report/atomic_file.h"
#include "crucible/report/xlsx.h"

namespace crucible {

using nlohmann::json;

const std::vector<std::string>& opbyop_statuses() {
  static const std::vector<std::string> s{"unsupported", "raised", "crashed",
                                          "timed_out",   "wrong",  "passed"};
  return s;
}

namespace {

json number_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

std::map<std::string, int64_t> counts(const OpByOpModel& m) {
  std::map<std::string, int64_t> c;
  for (const std::string& s : opbyop_statuses()) c[s] = 0;
  for (const OpByOpRow& r : m.rows) ++c[r.status];
  return c;
}

std::string md_cell(std::string s) {
  for (char& ch : s)
    if (ch == '|' || ch == '\n') ch = ch == '|' ? '/' : ' ';
  return s.size() > 160 ? s.substr(0, 157) + "..." : s;
}

std::string fmt_num(double v, const char* spec = "{:.6f}") {
  return std::isfinite(v) ? fmt::format(fmt::runtime(spec), v) : "";
}

json to_json(const OpByOpModel& m) {
  json rows = json::array();
  for (const OpByOpRow& r : m.rows)
    rows.push_back({{"op", r.op},
                    {"call", r.call},
                    {"lines", r.lines},
                    {"occurrences", r.occurrences},
                    {"status", r.status},
                    {"detail", r.detail},
                    {"pcc", number_or_null(r.pcc)},
                    {"max_abs_err", number_or_null(r.max_abs_err)},
                    {"max_rel_err", number_or_null(r.max_rel_err)},
                    {"speedup", number_or_null(r.speedup)},
                    {"reproducer", r.reproducer}});
  json c = json::object();
  for (const auto& [k, v] : counts(m)) c[k] = v;
  return {{"model", m.model},
          {"file", m.file},
          {"kind", m.kind},
          {"unique_nodes", m.rows.size()},
          {"statuses", c},
          {"chained",
           {{"status", m.chained_status},
            {"detail", m.chained_detail},
            {"first_divergence", m.first_divergence},
            {"first_divergence_line", m.first_divergence_line}}},
          {"nodes", rows}};
}

std::string markdown(const std::string& backend, const std::vector<OpByOpModel>& models) {
  std::string md = fmt::format("# Op by op on `{}`\n\n", backend);
  md += "| model | kind | unique nodes |";
  for (const std::string& s : opbyop_statuses()) md += " " + s + " |";
  md += " chained | first divergence |\n|---|---|---|";
  for (size_t i = 0; i < opbyop_statuses().size(); ++i) md += "---|";
  md += "---|---|\n";
  for (const OpByOpModel& m : models) {
    md += fmt::format("| {} | {} | {} |", m.model, m.kind, m.rows.size());
    auto c = counts(m);
    for (const std::string& s : opbyop_statuses()) md += fmt::format(" {} |", c[s]);
    md += fmt::format(
        " {} | {} |\n", m.chained_status,
        m.first_divergence.empty()
            ? ""
            : fmt::format("line {}: `{}`", m.first_divergence_line, md_cell(m.first_divergence)));
  }
  for (const OpByOpModel& m : models) {
    md += fmt::format("\n## {} ({})\n\n`{}`\n\n", m.model, m.kind, m.file);
    if (!m.chained_status.empty())
      md += fmt::format("Chained run: **{}**{}\n\n", m.chained_status,
                        m.chained_detail.empty() ? "" : " — " + md_cell(m.chained_detail));
    md += "| op | occurrences | lines | status | PCC | max abs err | speed-up | detail |\n";
    md += "|---|---|---|---|---|---|---|---|\n";
    for (const OpByOpRow& r : m.rows)
      md +=
          fmt::format("| `{}` | {} | {} | {} | {} | {} | {} | {} |\n", r.op, r.occurrences,
                      md_cell(r.lines), r.status, fmt_num(r.pcc), fmt_num(r.max_abs_err, "{:.3g}"),
                      fmt_num(r.speedup, "{:.2f}x"), md_cell(r.detail));
    bool any = false;
    for (const OpByOpRow& r : m.rows) {
      if (r.reproducer.empty()) continue;
      if (!any) md += "\nReproducers (each replays the node on its real inputs):\n\n```sh\n";
      any = true;
      md += r.reproducer + "\n";
    }
    if (any) md += "```\n";
  }
  return md;
}

// Cells are built in place (GCC 12 warns falsely about copies of the variant).
void add_text(std::vector<XlsxCell>& row, const std::string& s) {
  row.emplace_back(std::in_place_index<1>, s);
}
void add_number(std::vector<XlsxCell>& row, double v) {
  if (std::isfinite(v))
    row.emplace_back(std::in_place_index<2>, v);
  else
    row.emplace_back();
}

}  // namespace

void write_opbyop_reports(const std::string& dir, const std::string& backend,
                          const std::vector<OpByOpModel>& models) {
  json j = {{"backend", backend}, {"models", json::array()}};
  for (const OpByOpModel& m : models) j["models"].push_back(to_json(m));
  write_file_atomically(dir + "/opbyop.json", j.dump(2) + "\n");
  write_file_atomically(dir + "/opbyop.md", markdown(backend, models));

  std::vector<XlsxSheet> sheets;
  XlsxSheet summary{.name = "summary", .header = {"model", "kind", "file", "unique nodes"}};
  for (const std::string& s : opbyop_statuses()) summary.header.push_back(s);
  summary.header.insert(summary.header.end(),
                        {"chained", "first divergence line", "first divergence"});
  for (const OpByOpModel& m : models) {
    auto& row = summary.rows.emplace_back();
    add_text(row, m.model);
    add_text(row, m.kind);
    add_text(row, m.file);
    add_number(row, static_cast<double>(m.rows.size()));
    auto c = counts(m);
    for (const std::string& s : opbyop_statuses()) add_number(row, static_cast<double>(c[s]));
    add_text(row, m.chained_status);
    add_number(row, m.first_divergence_line > 0 ? m.first_divergence_line : std::nan(""));
    add_text(row, m.first_divergence);
  }
  sheets.push_back(std::move(summary));
  for (const OpByOpModel& m : models) {
    XlsxSheet& s = sheets.emplace_back();
    s.name = m.model;
    s.header = {"op",          "occurrences", "lines",  "status", "pcc",       "max abs err",
                "max rel err", "speed-up",    "detail", "call",   "reproducer"};
    for (const OpByOpRow& r : m.rows) {
      auto& row = s.rows.emplace_back();
      add_text(row, r.op);
      add_number(row, static_cast<double>(r.occurrences));
      add_text(row, r.lines);
      add_text(row, r.status);
      add_number(row, r.pcc);
      add_number(row, r.max_abs_err);
      add_number(row, r.max_rel_err);
      add_number(row, r.speedup);
      add_text(row, r.detail);
      add_text(row, r.call);
      add_text(row, r.reproducer);
    }
  }
  write_xlsx(std::filesystem::path(dir) / "opbyop.xlsx", sheets);
}

}  // namespace crucible
