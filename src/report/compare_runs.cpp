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

bool regression_status(const std::string& before, const std::string& after) {
  return before == "passed" && after != "passed" && after != "skipped";
}

// "1.2 ms..1.4 ms": a candidate's p10..p90.
std::string range(const TimingStats& t) {
  auto one = [](double v) {
    return v >= 1      ? fmt::format("{:.3g} s", v)
           : v >= 1e-3 ? fmt::format("{:.3g} ms", v * 1e3)
                       : fmt::format("{:.3g} us", v * 1e6);
  };
  return one(t.p10_s) + ".." + one(t.p90_s);
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
    // Beyond the noise: the candidate's p10..p90 ranges of the two runs part by at least the
    // minimum change (even the readings of the two runs' noise most favourable to "no change"
    // differ by that factor), and so do the median speed-ups (each against a baseline timed in
    // turn with it, so a machine busier in one whole run moves both times but not their ratio).
    SpeedChange s{c.case_id, c.op, c.call, p.speedup, c.speedup, p.candidate, c.candidate};
    const double m = o.min_change;
    if (c.candidate.p10_s >= m * p.candidate.p90_s && p.speedup >= m * c.speedup)
      r.slower.push_back(s);
    if (p.candidate.p10_s >= m * c.candidate.p90_s && c.speedup >= m * p.speedup)
      r.faster.push_back(s);
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
      "  {} cases in both runs, {} timed in both (a change counts when the candidate's "
      "p10..p90 times and the median speed-ups of the two runs part by a factor of {})\n",
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
          "  {} {:<28} speed-up {:.3g}x -> {:.3g}x ({:.3g}x); time p10..p90 {} -> {}\n", s.case_id,
          s.op, s.before, s.after, s.factor(), range(s.time_before), range(s.time_after));
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
      "a change counts when the candidate's p10..p90 times and the median speed-ups of the two "
      "runs "
      "part by a factor of {}\n- **{}**\n",
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
        "\n## {} ({})\n\n| case | op | speed-up before (time p10..p90) | after | factor |\n"
        "|---|---|---|---|---|\n",
        title, v.size());
    for (const SpeedChange& s : v)
      m += fmt::format("| {} | {} | {:.3g}x ({}) | {:.3g}x ({}) | {:.3g}x |\n", s.case_id,
                       cell(s.op), s.before, range(s.time_before), s.after, range(s.time_after),
                       s.factor());
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
      a.push_back(
          {{"case_id", s.case_id},
           {"op", s.op},
           {"call", s.call},
           {"speedup_before", s.before},
           {"speedup_after", s.after},
           {"time_before_s", {s.time_before.p10_s, s.time_before.median_s, s.time_before.p90_s}},
           {"time_after_s", {s.time_after.p10_s, s.time_after.median_s, s.time_after.p90_s}},
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
