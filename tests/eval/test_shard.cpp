// The split of a suite into shards (include/crucible/eval/shard.h): every case in exactly one
// shard, the same split computed by every shard on its own, balanced by estimated cost.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "crucible/core/error.h"
#include "crucible/eval/shard.h"
#include "crucible/ops/op.h"
#include "crucible/suites/suite.h"

namespace crucible {
namespace {

std::vector<SuiteCase> opinfo(const std::vector<std::string>& ops, bool perf = false) {
  SuiteOptions o;
  o.suite = "opinfo";
  o.ops = ops;
  o.perf = perf;
  o.seed = 3;
  return build_suite(o);
}

std::vector<std::string> ids_of(const std::vector<SuiteCase>& cases) {
  std::vector<std::string> ids;
  for (const SuiteCase& sc : cases) ids.push_back(sc.c.id());
  return ids;
}

// The distinct ids, in order of first occurrence (a suite may hold a case twice).
std::vector<std::string> distinct_ids(const std::vector<SuiteCase>& cases) {
  std::vector<std::string> ids;
  std::set<std::string> seen;
  for (const SuiteCase& sc : cases)
    if (seen.insert(sc.c.id()).second) ids.push_back(sc.c.id());
  return ids;
}

TEST(ShardSpec, ParsesIOfN) {
  const ShardSpec s = parse_shard("2/4", "--shard");
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.count, 4);
  EXPECT_EQ(s.text(), "2/4");
  EXPECT_TRUE(s.active());
  EXPECT_FALSE(ShardSpec{}.active());
  EXPECT_EQ(parse_shard("1/1", "--shard").count, 1);
  EXPECT_EQ(parse_shard("100000/100000", "--shard").index, 100000);
}

TEST(ShardSpec, RefusesValuesThatMeanNoShardNamingTheFlag) {
  for (const std::string bad :
       {"0/4", "5/4", "4", "", "/", "1/", "/4", "a/b", "1/0", "-1/4", "1/-4", "1/4/2", " 1/4",
        "1.0/4", "0x1/4", "1/100001", "99999999999999999999/4"}) {
    try {
      parse_shard(bad, "--shard");
      ADD_FAILURE() << "accepted --shard '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Usage) << bad;
      EXPECT_NE(std::string(e.what()).find("--shard"), std::string::npos) << e.what();
    }
  }
}

TEST(PartitionByCost, LongestFirstIntoTheLeastLoadedBinWithDeterministicTies) {
  // 5 -> bin 0; 4 -> bin 1; 3 (index 2) -> bin 1 (4 < 5); 3 (index 3) -> bin 0 (5 < 7);
  // 3 (index 4) -> bin 1 (7 < 8).
  EXPECT_EQ(partition_by_cost({5, 4, 3, 3, 3}, 2), (std::vector<int>{0, 1, 1, 0, 1}));
  // Equal costs: in order, round robin over the bins.
  EXPECT_EQ(partition_by_cost({1, 1, 1, 1, 1}, 2), (std::vector<int>{0, 1, 0, 1, 0}));
  // The order of the costs, not of the items, decides: the largest goes first.
  EXPECT_EQ(partition_by_cost({1, 9, 1, 1}, 2), (std::vector<int>{1, 0, 1, 1}));
  // More bins than items: the later bins stay empty.
  EXPECT_EQ(partition_by_cost({2, 7}, 4), (std::vector<int>{1, 0}));
  EXPECT_TRUE(partition_by_cost({}, 3).empty());
}

TEST(PartitionByCost, BalancesWithinTheLargestItem) {
  std::vector<double> costs;
  uint64_t x = 12345;
  for (int i = 0; i < 997; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    costs.push_back(static_cast<double>((x >> 33) % 100000) * ((i % 7 == 0) ? 50 : 1));
  }
  for (int n : {2, 3, 4, 16}) {
    const std::vector<int> bin = partition_by_cost(costs, n);
    std::vector<double> load(static_cast<size_t>(n), 0);
    for (size_t k = 0; k < costs.size(); ++k) {
      ASSERT_GE(bin[k], 0);
      ASSERT_LT(bin[k], n);
      load[static_cast<size_t>(bin[k])] += costs[k];
    }
    const double largest = *std::max_element(costs.begin(), costs.end());
    const auto [lo, hi] = std::minmax_element(load.begin(), load.end());
    EXPECT_LE(*hi - *lo, largest) << n << " bins";
    EXPECT_EQ(bin, partition_by_cost(costs, n)) << "the split is not deterministic";
  }
}

TEST(EstimatedCaseCost, GrowsWithTheCallAndItsTiming) {
  const OpDef& add = OpRegistry::catalog().get("aten.add.Tensor");
  const OpDef& mm = OpRegistry::catalog().get("aten.mm.default");
  auto sc = [](const OpDef& op, const std::string& call) {
    SuiteCase s;
    s.op = &op;
    s.c.op = op.name;
    s.c.call = cases::parse_call(call, "test");
    return s;
  };
  const SuiteCase small = sc(add, "((T([8], f32), T([8], f32)), {})");
  const SuiteCase large = sc(add, "((T([1024, 1024], f32), T([1024, 1024], f32)), {})");
  const SuiteCase matmul = sc(mm, "((T([256, 256], f32), T([256, 256], f32)), {})");
  const SuiteCase same_elements = sc(add, "((T([256, 256], f32), T([256, 256], f32)), {})");
  EXPECT_LT(estimated_case_cost(small, false), estimated_case_cost(large, false));
  // The cost model's FLOPs count: a product costs more than an add of the same elements.
  EXPECT_LT(estimated_case_cost(same_elements, false), estimated_case_cost(matmul, false));
  // A timed case costs its timing too; an untimed one does not.
  SuiteCase timed = small;
  timed.c.perf = true;
  EXPECT_GT(estimated_case_cost(timed, true), 10 * estimated_case_cost(small, true));
  EXPECT_EQ(estimated_case_cost(timed, false), estimated_case_cost(small, false));
  // Decided without running: almost free.
  SuiteCase skipped = large;
  skipped.skip_reason = "too large";
  EXPECT_LT(estimated_case_cost(skipped, false), estimated_case_cost(small, false));
  EXPECT_EQ(estimated_case_cost(large, false), estimated_case_cost(large, false));
}

TEST(SelectShard, EveryCaseInExactlyOneShardInSuiteOrderWithOneFingerprint) {
  const std::vector<SuiteCase> all = opinfo({"relu", "add.Tensor", "mm", "sum.dim_IntList"});
  const std::vector<std::string> all_ids = ids_of(all);
  std::set<std::string> distinct(all_ids.begin(), all_ids.end());
  ASSERT_GT(distinct.size(), 40u);
  for (int n : {1, 3, 4}) {
    std::map<std::string, int> shard_of;
    std::set<std::string> fingerprints;
    std::vector<int64_t> positions_seen;
    double total_estimate = 0, largest_share = 0, smallest_share = 1e300;
    for (int i = 1; i <= n; ++i) {
      std::vector<SuiteCase> cases = opinfo({"relu", "add.Tensor", "mm", "sum.dim_IntList"});
      const ShardInfo info = select_shard(cases, ShardSpec{i, n}, false);
      EXPECT_EQ(info.spec.index, i);
      EXPECT_EQ(info.cases_total, static_cast<int64_t>(distinct.size()));
      fingerprints.insert(info.fingerprint);
      const std::vector<std::string> ids = ids_of(cases);
      // In the suite's order: the kept ids are a subsequence of the whole list.
      size_t at = 0;
      for (const std::string& id : ids) {
        while (at < all_ids.size() && all_ids[at] != id) ++at;
        ASSERT_LT(at, all_ids.size()) << "case " << id << " out of the suite's order";
      }
      ASSERT_EQ(info.case_ids.size(), info.positions.size());
      EXPECT_EQ(info.case_ids, distinct_ids(cases));
      for (size_t k = 0; k < info.case_ids.size(); ++k) {
        EXPECT_TRUE(shard_of.emplace(info.case_ids[k], i).second)
            << info.case_ids[k] << " is in two shards";
        positions_seen.push_back(info.positions[k]);
      }
      total_estimate = info.estimated_total_s;
      largest_share = std::max(largest_share, info.estimated_cost_s);
      smallest_share = std::min(smallest_share, info.estimated_cost_s);
    }
    EXPECT_EQ(shard_of.size(), distinct.size()) << n << " shards miss a case";
    EXPECT_EQ(fingerprints.size(), 1u) << "the shards disagree on the suite's case list";
    std::sort(positions_seen.begin(), positions_seen.end());
    for (size_t k = 0; k < positions_seen.size(); ++k)
      EXPECT_EQ(positions_seen[k], static_cast<int64_t>(k));
    // Balanced: no shard more than the largest case above another.
    double largest_case = 0;
    for (const SuiteCase& sc : all)
      largest_case = std::max(largest_case, estimated_case_cost(sc, false) * 1e-9);
    EXPECT_LE(largest_share - smallest_share, largest_case * 1.000001) << n << " shards";
    EXPECT_GT(total_estimate, 0);
  }
  // The fingerprint is that of the whole ordered list of distinct ids.
  std::vector<SuiteCase> one = opinfo({"relu", "add.Tensor", "mm", "sum.dim_IntList"});
  const ShardInfo info = select_shard(one, ShardSpec{1, 1}, false);
  const std::vector<std::string> distinct_all = distinct_ids(all);
  EXPECT_EQ(info.fingerprint, case_list_fingerprint(distinct_all));
  std::vector<std::string> swapped = distinct_all;
  std::swap(swapped[0], swapped[1]);
  EXPECT_NE(info.fingerprint, case_list_fingerprint(swapped));
}

TEST(SelectShard, ACaseTheSuiteHoldsTwiceGoesToOneShardWithItsTwin) {
  std::vector<SuiteCase> base = opinfo({"relu"});
  ASSERT_GT(base.size(), 4u);
  auto with_twin = [&] {
    std::vector<SuiteCase> cases = base;
    cases.push_back(base[2]);  // the suite holds case 2 twice
    return cases;
  };
  int holders = 0;
  for (int i = 1; i <= 3; ++i) {
    std::vector<SuiteCase> cases = with_twin();
    const ShardInfo info = select_shard(cases, ShardSpec{i, 3}, false);
    EXPECT_EQ(info.cases_total, static_cast<int64_t>(base.size()));
    const auto n = std::count_if(cases.begin(), cases.end(),
                                 [&](const SuiteCase& sc) { return sc.c.id() == base[2].c.id(); });
    if (n > 0) {
      ++holders;
      EXPECT_EQ(n, 2);
    }
  }
  EXPECT_EQ(holders, 1);
}

TEST(SelectShard, PerfChangesTheCostsNotTheCaseList) {
  std::vector<SuiteCase> a = opinfo({"relu", "mm"}, true);
  std::vector<SuiteCase> b = opinfo({"relu", "mm"}, true);
  const ShardInfo timed = select_shard(a, ShardSpec{1, 2}, true);
  const ShardInfo untimed = select_shard(b, ShardSpec{1, 2}, false);
  EXPECT_EQ(timed.fingerprint, untimed.fingerprint);
  EXPECT_GT(timed.estimated_total_s, untimed.estimated_total_s);
}

TEST(ShardInfo, RoundTripsThroughJsonAndRefusesADamagedBlock) {
  std::vector<SuiteCase> cases = opinfo({"relu"});
  const ShardInfo info = select_shard(cases, ShardSpec{2, 3}, false);
  const nlohmann::json j = shard_info_json(info);
  const ShardInfo back = shard_info_from_json(j, "m.json");
  EXPECT_EQ(back.spec.text(), "2/3");
  EXPECT_EQ(back.cases_total, info.cases_total);
  EXPECT_EQ(back.fingerprint, info.fingerprint);
  EXPECT_EQ(back.case_ids, info.case_ids);
  EXPECT_EQ(back.positions, info.positions);
  auto refused = [](nlohmann::json bad, const std::string& what) {
    try {
      shard_info_from_json(bad, "m.json");
      ADD_FAILURE() << "accepted " << what;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Input) << what;
      EXPECT_NE(std::string(e.what()).find("m.json"), std::string::npos) << e.what();
    }
  };
  nlohmann::json bad = j;
  bad["index"] = 4;
  refused(bad, "shard 4/3");
  bad = j;
  bad["positions"].push_back(0);
  refused(bad, "lists of two lengths");
  bad = j;
  bad["positions"][0] = info.cases_total;
  refused(bad, "a place beyond the suite");
  bad = j;
  bad.erase("fingerprint");
  refused(bad, "no fingerprint");
  refused(nlohmann::json::array(), "not an object");
}

}  // namespace
}  // namespace crucible
