// `crucible history`: the runs recorded in the run history, newest first.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "crucible/core/error.h"
#include "crucible/report/history.h"

namespace crucible {

int command_history(const std::string& history, int limit, bool json) {
  if (limit < 0)
    usage_error(fmt::format("--limit {}: give 0 (every run) or a positive count", limit));
  if (history == "none") usage_error("--history none: there is no history to list");
  const History h(history.empty() ? default_history_path() : history, false);
  const std::vector<HistoryEntry> runs = h.list(limit);
  if (json) {
    nlohmann::json a = nlohmann::json::array();
    for (const HistoryEntry& e : runs)
      a.push_back({{"id", e.id},
                   {"started_at", e.started_at},
                   {"suite", e.suite},
                   {"backend", e.backend},
                   {"version", e.version},
                   {"git_commit", e.git_commit},
                   {"host", e.host},
                   {"folder", e.folder},
                   {"ops_total", e.ops_total},
                   {"ops_passed", e.ops_passed},
                   {"cases_total", e.cases_total},
                   {"correctness", e.correctness},
                   {"perf_score",
                    e.perf_score >= 0 ? nlohmann::json(e.perf_score) : nlohmann::json(nullptr)}});
    fmt::print("{}\n", a.dump(2));
    return 0;
  }
  fmt::print("{} run(s) in {}\n", runs.size(), h.path());
  if (runs.empty()) return 0;
  fmt::print("{:>5}  {:<20}  {:<20}  {:<20}  {:>9}  {:>11}  {:>6}  {}\n", "id", "started (UTC)",
             "suite", "backend", "correct", "correctness", "perf", "folder");
  for (const HistoryEntry& e : runs)
    fmt::print(
        "{:>5}  {:<20}  {:<20}  {:<20}  {:>9}  {:>10.1f}%  {:>6}  {}\n", e.id, e.started_at,
        e.suite, e.backend, fmt::format("{}/{}", e.ops_passed, e.ops_total), 100 * e.correctness,
        e.perf_score >= 0 ? fmt::format("{:.3g}x", e.perf_score) : std::string("n/a"), e.folder);
  return 0;
}

}  // namespace crucible
