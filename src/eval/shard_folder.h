// One shard's run folder, read for `crucible merge` and checked on its own: its manifest (with
// the split, crucible/eval/shard.h), its results.jsonl (every line a record of one of its cases,
// every case recorded) and its summary.json (written when the shard finished).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "crucible/eval/calibrate.h"
#include "crucible/eval/shard.h"
#include "crucible/results/result.h"

namespace crucible {

struct ShardFolder {
  std::string dir;
  nlohmann::json manifest;
  ShardInfo shard;
  // Its records, each case once (the first record, as --resume counts them), in file order.
  std::vector<CaseResult> results;
  std::vector<TimingRecord> timings;
  nlohmann::json summary;  // summary.json
  MachinePeaks peaks;      // the machine's peaks from the manifest (--perf; zero otherwise)
};

// Reads and checks the shard folder `dir`: an Input error naming the folder (or file:line) when
// it is not a run folder of a shard, when a record is damaged or belongs to no case of the shard,
// or when the shard did not finish (a case without its record, no summary.json).
ShardFolder read_shard_folder(const std::string& dir);

}  // namespace crucible
