// `crucible merge <run folders...> [--out DIR]`: the shards of one run joined into one run
// folder (crucible/eval/merge.h).
#include <fmt/format.h>

#include "cli/commands.h"
#include "crucible/core/error.h"
#include "crucible/eval/merge.h"

namespace crucible {

CLI::App* add_merge_command(CLI::App& app, MergeFlags& f) {
  CLI::App* merge = app.add_subcommand(
      "merge",
      "join the run folders of the shards of one run (crucible run --shard i/n) into one run "
      "folder whose reports are those of the unsplit run");
  merge->add_option("folders", f.folders, "the shards' run folders, every shard once, any order")
      ->required();
  merge->add_option("--out", f.out,
                    "the merged run folder (default: runs/<suite>-<backend>-<timestamp>-merged)");
  merge->add_flag("-q,--quiet", f.quiet, "no summary table");
  return merge;
}

int command_merge(const MergeFlags& f, const std::vector<std::string>& argv) {
  if (f.out_given && f.out.empty()) usage_error("--out is empty; give the merged run's folder");
  MergeOptions o;
  o.folders = f.folders;
  o.out = f.out;
  o.progress = !f.quiet;
  o.argv = argv;
  return merge_runs(o);
}

}  // namespace crucible
