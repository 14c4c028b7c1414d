// Two runs compared (see compare_runs.h).
#include "crucible/report/compare_runs.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace crucible {

using nlohmann::json;

namespace {

std::string verdict(const json& summary, const std::string& op) {
  const json& ops = summary.contains("ops") ? summary["ops"] : json::object();
  auto it = ops.find(op);
  if (it == ops.end()) return "absent";
  const json& o = *it;
  if (o.value("passed", false)) return "correct";
  if (!o.value("supported", false)) return "unsupported";
  const json st = o.value("status", json::object());
  if (st.value("skipped", 0) == o.value("cases", 0)) return "skipped";
  return "wrong";
}

std::string first_failure(const json& summary, const std::string& op) {
  if (!summary.contains("ops") || !summary["ops"].contains(op)) return "";
  return summary["ops"][op].value("first_failure", "");
}

// The speed-ups the spreads of one run allow: baseline p10 / candidate p90 .. p90 / p10 (a
// statistic that is missing or zero falls back to the median).
std::pair<double, double> speedup_range(const CaseRow& c) {
  auto pick = [](double v, double median) { return v > 0 ? v : median; };
  const double b10 = pick(c.baseline.p10_s, c.baseline.median_s);
  const double b90 = pick(c.baseline.p90_s, c.baseline.median_s);
  const double c10 = pick(c.candidate.p10_s, c.candidate.median_s);
  const double c90 = pick(c.candidate.p90_s, c.candidate.median_s);
  const double lo = c90 > 0 ? b10 / c90 : c.speedup;
  const double hi = c10 > 0 ? b90 / c10 : c.speedup;
  return {std::min({lo, hi, c.speedup}), std::max({lo, hi, c.speedup})};
}

bool regression_status(const std::string& before, const std::string& after) {
  return before == "passed" && after != "passed" && after != "skipped";
}

std::string clip(const std::string& s, size_t n) {
  return s.size() <= n ? s : s.substr(0, n - 3) + "...";
}

}  // namespace

bool RunComparison::regressed() const {
  if (!newly_failing.empty() || !slower.empty()) return true;
  for (const CaseStatusChange& c : status_changes)
    if (regression_status(c.before, c.after)) return true;
  return false;
}

RunComparison compare_runs(const RunData& a, const RunData& b, const CompareOptions& o) {
  RunComparison r;
  r.min_change = o.min_change;
  auto label = [](const RunData& d) {
    return d.id > 0 ? fmt::format("run {} ({})", d.id, d.folder) : d.folder;
  };
  r.before = label(a);
  r.after = label(b);

  std::set<std::string> ops;
  for (const RunData* d : {&a, &b})
    if (d->summary.contains("ops"))
      for (auto it = d->summary["ops"].begin(); it != d->summary["ops"].end(); ++it)
        ops.insert(it.key());
  for (const std::string& op : ops) {
    OpChange c{op, verdict(a.summary, op), verdict(b.summary, op), first_failure(b.summary, op)};
    if (c.before == c.after) continue;
    if (c.before == "correct" && c.after != "absent")
      r.newly_failing.push_back(c);
    else if (c.after == "correct")
      r.fixed.push_back(c);
    else
      r.other_ops.push_back(c);
  }

  std::map<std::string, const CaseRow*> before;
  for (const CaseRow& c : a.cases) before.emplace(c.case_id, &c);
  for (const CaseRow& c : b.cases) {
    auto it = before.find(c.case_id);
    if (it == before.end()) continue;
    const CaseRow& p = *it->second;
    ++r.cases_compared;
    if (p.status != c.status)
      r.status_changes.push_back({c.case_id, c.op, c.call, p.status, c.status, c.detail});
    if (!p.timed || !c.timed || p.speedup <= 0 || c.speedup <= 0) continue;
    ++r.timed_compared;
    auto [plo, phi] = speedup_range(p);
    auto [clo, chi] = speedup_range(c);
    SpeedChange s{c.case_id, c.op, c.call, p.speedup, c.speedup, plo, phi, clo, chi};
    if (chi < plo && p.speedup >= o.min_change * c.speedup) r.slower.push_back(s);
    if (clo > phi && c.speedup >= o.min_change * p.speedup) r.faster.push_back(s);
  }
  auto by_factor = [](const SpeedChange& x, const SpeedChange& y) {
    return x.factor() < y.factor();
  };
  std::sort(r.slower.begin(), r.slower.end(), by_factor);
  std::sort(r.faster.begin(), r.faster.end(),
            [&](const SpeedChange& x, const SpeedChange& y) { return by_factor(y, x); });
  return r;
}

std::string comparison_text(const RunComparison& c) {
  std::string t = fmt::format("crucible compare\n  before: {}\n  after:  {}\n", c.before, c.after);
  t += fmt::format(
      "  {} cases in both runs, {} timed in both (speed-ups compared beyond both "
      "runs' p10..p90 and a factor of {})\n",
      c.cases_compared, c.timed_compared, c.min_change);
  auto ops = [&](const char* title, const std::vector<OpChange>& v) {
    if (v.empty()) return;
    t += fmt::format("\n{} ({}):\n", title, v.size());
    for (const OpChange& o : v) {
      t += fmt::format("  {:<36} {} -> {}", o.op, o.before, o.after);
      if (!o.detail.empty() && o.after != "correct") t += "  " + clip(o.detail, 100);
      t += "\n";
    }
  };
  ops("ops newly failing", c.newly_failing);
  ops("ops fixed", c.fixed);
  ops("ops whose verdict changed otherwise", c.other_ops);
  if (!c.status_changes.empty()) {
    t += fmt::format("\ncases whose status changed ({}):\n", c.status_changes.size());
    for (const CaseStatusChange& s : c.status_changes)
      t += fmt::format("  {} {:<28} {} -> {}  {}\n", s.case_id, s.op, s.before, s.after,
                       clip(s.detail, 80));
  }
  auto speeds = [&](const char* title, const std::vector<SpeedChange>& v) {
    if (v.empty()) return;
    t += fmt::format("\n{} ({}):\n", title, v.size());
    for (const SpeedChange& s : v)
      t += fmt::format(
          "  {} {:<28} speed-up {:.3g}x -> {:.3g}x ({:.3g}x)  [{:.3g}..{:.3g}] -> "
          "[{:.3g}..{:.3g}]\n",
          s.case_id, s.op, s.before, s.after, s.factor(), s.before_lo, s.before_hi, s.after_lo,
          s.after_hi);
  };
  speeds("cases slower beyond the noise", c.slower);
  speeds("cases faster beyond the noise", c.faster);
  t += c.regressed() ? "\nregressed\n" : "\nno regression\n";
  return t;
}

std::string comparison_markdown(const RunComparison& c) {
  auto cell = [](const std::string& s) {
    std::string o;
    for (char ch : s) {
      if (ch == '|')
        o += "\\|";
      else if (ch == '\n')
        o += ' ';
      else
        o += ch;
    }
    return o;
  };
  std::string m = "# crucible compare\n\n";
  m += fmt::format(
      "- before: `{}`\n- after: `{}`\n- {} cases in both runs, {} timed in both; "
      "speed-ups compared beyond both runs' p10..p90 and a factor of {}\n- **{}**\n",
      c.before, c.after, c.cases_compared, c.timed_compared, c.min_change,
      c.regressed() ? "regressed" : "no regression");
  auto ops = [&](const char* title, const std::vector<OpChange>& v) {
    if (v.empty()) return;
    m += fmt::format("\n## {} ({})\n\n| op | before | after | first failure |\n|---|---|---|---|\n",
                     title, v.size());
    for (const OpChange& o : v)
      m += fmt::format("| {} | {} | {} | {} |\n", cell(o.op), o.before, o.after,
                       cell(clip(o.detail, 160)));
  };
  ops("Ops newly failing", c.newly_failing);
  ops("Ops fixed", c.fixed);
  ops("Ops whose verdict changed otherwise", c.other_ops);
  if (!c.status_changes.empty()) {
    m += fmt::format(
        "\n## Cases whose status changed ({})\n\n| case | op | before | after | "
        "detail |\n|---|---|---|---|---|\n",
        c.status_changes.size());
    for (const CaseStatusChange& s : c.status_changes)
      m += fmt::format("| {} | {} | {} | {} | {} |\n", s.case_id, cell(s.op), s.before, s.after,
                       cell(clip(s.detail, 160)));
  }
  auto speeds = [&](const char* title, const std::vector<SpeedChange>& v) {
    if (v.empty()) return;
    m += fmt::format(
        "\n## {} ({})\n\n| case | op | speed-up before | after | factor |\n"
        "|---|---|---|---|---|\n",
        title, v.size());
    for (const SpeedChange& s : v)
      m += fmt::format(
          "| {} | {} | {:.3g}x [{:.3g}..{:.3g}] | {:.3g}x [{:.3g}..{:.3g}] | "
          "{:.3g}x |\n",
          s.case_id, cell(s.op), s.before, s.before_lo, s.before_hi, s.after, s.after_lo,
          s.after_hi, s.factor());
  };
  speeds("Cases slower beyond the noise", c.slower);
  speeds("Cases faster beyond the noise", c.faster);
  return m;
}

json comparison_json(const RunComparison& c) {
  auto ops = [](const std::vector<OpChange>& v) {
    json a = json::array();
    for (const OpChange& o : v)
      a.push_back({{"op", o.op}, {"before", o.before}, {"after", o.after}, {"detail", o.detail}});
    return a;
  };
  auto speeds = [](const std::vector<SpeedChange>& v) {
    json a = json::array();
    for (const SpeedChange& s : v)
      a.push_back({{"case_id", s.case_id},
                   {"op", s.op},
                   {"call", s.call},
                   {"speedup_before", s.before},
                   {"speedup_after", s.after},
                   {"range_before", {s.before_lo, s.before_hi}},
                   {"range_after", {s.after_lo, s.after_hi}},
                   {"factor", s.factor()}});
    return a;
  };
  json st = json::array();
  for (const CaseStatusChange& s : c.status_changes)
    st.push_back({{"case_id", s.case_id},
                  {"op", s.op},
                  {"call", s.call},
                  {"before", s.before},
                  {"after", s.after},
                  {"detail", s.detail}});
  return {{"before", c.before},
          {"after", c.after},
          {"regressed", c.regressed()},
          {"cases_compared", c.cases_compared},
          {"timed_compared", c.timed_compared},
          {"min_change", c.min_change},
          {"ops_newly_failing", ops(c.newly_failing)},
          {"ops_fixed", ops(c.fixed)},
          {"ops_changed_otherwise", ops(c.other_ops)},
          {"cases_status_changed", st},
          {"cases_slower", speeds(c.slower)},
          {"cases_faster", speeds(c.faster)}};
}

}  // namespace crucible
