// Shards: `crucible run --shard i/n` runs a deterministic 1/n of a suite's cases, so that n
// machines share a run and `crucible merge` (crucible/eval/merge.h) joins their run folders
// into the folder the unsplit run would have written.
//
// The split is computed by every shard on its own, from the suite's case list alone: each
// distinct case (a suite may hold one twice; it runs once) gets an estimated cost from the op's
// cost model over the meta layer's outputs (estimated_case_cost), the cases are taken longest
// first (ties in suite order) and each goes to the bin with the least estimated cost so far
// (ties to the lowest bin). Shard i runs bin i-1, in suite order. The manifest of a shard
// records the split (ShardInfo): i/n, the suite's count of distinct cases, a fingerprint of
// their ordered ids, and the shard's cases with their places in the suite, so that merge can
// check that its shards belong together and put their results back in the suite's order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "crucible/suites/suite.h"

namespace crucible {

// "--shard i/n": 1 <= index <= count; count 0: not sharded.
struct ShardSpec {
  int index = 0;
  int count = 0;
  bool active() const { return count > 0; }
  std::string text() const;  // "2/4"
};

// Parses "i/n" (decimal, 1 <= i <= n <= kMaxShards); a Usage error naming `flag` otherwise.
inline constexpr int kMaxShards = 100000;
ShardSpec parse_shard(const std::string& text, const std::string& flag);

// The estimated cost of running a case, in nanoseconds of one core: a fixed cost per case
// (worker round trip, materialisation, comparison), the elements its tensors and fresh outputs
// hold, and the FLOPs the op's cost model gives over the meta layer's outputs (call_size); with
// `perf` a timed case adds its timing (at least twice 0.1 s of samples, more for large calls).
// Cases decided without running (skipped, not in the catalog) cost almost nothing; a case the
// suite judges itself (a whole model) costs a fixed few seconds. Deterministic: the same case
// gives the same cost on every machine.
double estimated_case_cost(const SuiteCase& sc, bool perf);

// The bin (0 .. n-1) of each item: greedy longest first into the bin with the least load, ties
// broken by the item's index (earlier first) and by the bin's index (lower first).
std::vector<int> partition_by_cost(const std::vector<double>& costs, int n);

// A fingerprint of an ordered list of case ids (16 hex digits).
std::string case_list_fingerprint(const std::vector<std::string>& ids);

// What a shard's manifest records.
struct ShardInfo {
  ShardSpec spec;
  int64_t cases_total = 0;       // distinct cases of the whole suite
  std::string fingerprint;       // of the whole suite's distinct case ids, in suite order
  double estimated_cost_s = 0;   // this shard's estimated share, in seconds of one core
  double estimated_total_s = 0;  // the whole suite's
  // This shard's distinct cases, in suite order: their ids and their places (0-based) among the
  // suite's distinct cases.
  std::vector<std::string> case_ids;
  std::vector<int64_t> positions;
};

nlohmann::json shard_info_json(const ShardInfo& s);
// Reads the "shard" block of a manifest; an Input error naming `where` when it is malformed.
ShardInfo shard_info_from_json(const nlohmann::json& j, const std::string& where);

// Keeps the cases of shard `spec` (in suite order, duplicates of a kept case kept too) and
// describes the split. `perf`: the run times its cases (their timing counts in the cost).
ShardInfo select_shard(std::vector<SuiteCase>& cases, ShardSpec spec, bool perf);

}  // namespace crucible
