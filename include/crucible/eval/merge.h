// `crucible merge`: the run folders of the shards of one run (`crucible run --shard i/n`, see
// crucible/eval/shard.h) joined into one run folder whose results.jsonl (the cases in the
// suite's order, then the timings), summary.json, operator_summary.csv, SUMMARY.md and
// junit.xml are those the unsplit run would have written, apart from wall times and timing
// figures. The shards must be exactly shards 1..n of one split: one build, one suite with one
// case list, the same options (but --workers and --threads, which may follow each machine) and
// the same backends; every shard finished. A missing, duplicated, unfinished or foreign shard
// is a Usage or Input error naming the folders; nothing is written then.
#pragma once

#include <string>
#include <vector>

namespace crucible {

struct MergeOptions {
  std::vector<std::string> folders;  // the shards' run folders, in any order
  std::string out;                   // the merged run folder; empty: runs/<suite>-<backend>-...
  bool progress = true;              // print the summary table
  std::vector<std::string> argv;     // the merge's command line, for the manifest
};

// Merges and returns the exit status the unsplit run would have had: 0 when every case passed,
// 1 otherwise. Errors are thrown (exit status 2 in the CLI).
int merge_runs(const MergeOptions& o);

}  // namespace crucible
