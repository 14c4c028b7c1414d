// `crucible compare <run|id> <run|id>`: what changed from one run to the other; exit status 1
// when something regressed (to gate a CI job), 2 on bad input.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "crucible/core/error.h"
#include "crucible/report/compare_runs.h"
#include "crucible/report/history.h"

namespace crucible {

namespace {

// A run folder when `what` names a folder, else a run id of the history.
RunData resolve(const std::string& what, const std::string& history,
                std::unique_ptr<History>& opened) {
  std::error_code ec;
  if (std::filesystem::is_directory(what, ec)) return read_run_folder(what);
  const bool digits =
      !what.empty() && what.size() < 18 &&
      std::all_of(what.begin(), what.end(), [](unsigned char c) { return std::isdigit(c); });
  if (!digits)
    usage_error(fmt::format(
        "'{}' is neither a run folder nor a run id of the history (crucible history lists them)",
        what));
  if (history == "none")
    usage_error(fmt::format("'{}' is a run id, but --history none names no history", what));
  if (!opened)
    opened = std::make_unique<History>(history.empty() ? default_history_path() : history, false);
  return opened->load(std::stoll(what));
}

}  // namespace

int command_compare(const CompareFlags& f) {
  if (f.markdown && f.json) usage_error("--markdown and --json: choose one");
  if (!(f.min_change >= 1))
    usage_error(
        fmt::format("--min-change {}: give a factor of at least 1, e.g. 1.5", f.min_change));
  std::unique_ptr<History> history;
  const RunData before = resolve(f.before, f.history, history);
  const RunData after = resolve(f.after, f.history, history);
  const RunComparison c = compare_runs(before, after, {.min_change = f.min_change});
  if (f.json)
    fmt::print("{}\n", comparison_json(c).dump(2));
  else if (f.markdown)
    fmt::print("{}", comparison_markdown(c));
  else
    fmt::print("{}", comparison_text(c));
  return c.regressed() ? 1 : 0;
}

}  // namespace crucible
