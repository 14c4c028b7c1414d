// End-to-end: `crucible run --shard i/n` and `crucible merge`. The shards of a run merged give
// the reports of the unsplit run (apart from wall times and timing figures), verdict by verdict
// in the suite's order; a missing, duplicated, unfinished or foreign shard is an error naming
// the folders; a shard resumes as any run does.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "e2e/cli_helpers.h"
#include "sandbox/remove_tree.h"

namespace crucible::e2e {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Small runs: a few ops of opinfo, seconds each.
const std::string kCpuArgs =
    "--suite opinfo --backend cpu --ops relu,add.Tensor,mul.Tensor,sum.dim_IntList,mm,"
    "_softmax.default --seed 7 --quiet";
// The faulty backend's kernels fail in several ways (wrong values, shapes, dtypes, aliasing, a
// SIGSEGV): first failures, crashes and reproducers must merge as they ran.
const std::string kFaultyArgs =
    "--suite opinfo --backend faulty --ops relu.default,mul.Tensor,neg.default,sub.Tensor "
    "--seed 5 --timeout 20 --quiet";

// The reports of a run folder without what differs between two runs of the same cases: wall
// times (summary.json "seconds", each case's "seconds", junit's time attributes, SUMMARY.md's
// wall time) and SUMMARY.md's command line (the runs were started with different --out).
struct Reports {
  json summary;
  std::vector<json> cases, timings;
  std::string csv, junit, summary_md;
};

std::string without_lines(const std::string& text, const std::vector<std::string>& starts,
                          int skip_line) {
  std::istringstream in(text);
  std::string line, out;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (n == skip_line) continue;
    bool drop = false;
    for (const std::string& s : starts) drop = drop || line.rfind(s, 0) == 0;
    if (!drop) out += line + "\n";
  }
  return out;
}

std::string without_times(std::string xml) {
  for (size_t at = xml.find(" time=\""); at != std::string::npos; at = xml.find(" time=\"", at)) {
    const size_t end = xml.find('"', at + 7);
    xml.erase(at, end - at + 1);
  }
  return xml;
}

Reports reports(const std::string& dir) {
  Reports r;
  r.summary = read_json(dir + "/summary.json");
  r.summary.erase("seconds");
  for (json& line : read_jsonl(dir + "/results.jsonl")) {
    line.erase("seconds");
    (line["record"] == "case" ? r.cases : r.timings).push_back(line);
  }
  r.csv = read_text(dir + "/operator_summary.csv");
  r.junit = without_times(read_text(dir + "/junit.xml"));
  r.summary_md = without_lines(read_text(dir + "/SUMMARY.md"), {"| wall time |"}, 3);
  return r;
}

// `in_order`: the unsplit run's results.jsonl lists its cases in the suite's order (one worker,
// no crash: a crashed worker's remaining batch is queued again), so the merged file must list
// them in the same order; otherwise the same records in any order (junit.xml and SUMMARY.md,
// written in the suite's order by both, check the order then).
void expect_same_reports(const std::string& unsplit, const std::string& merged,
                         bool in_order = true) {
  Reports a = reports(unsplit), b = reports(merged);
  EXPECT_EQ(a.summary, b.summary) << "summary.json differs:\n"
                                  << json::diff(a.summary, b.summary).dump(1);
  ASSERT_EQ(a.cases.size(), b.cases.size());
  if (!in_order) {
    auto by_id = [](const json& x, const json& y) { return x["case_id"] < y["case_id"]; };
    std::sort(a.cases.begin(), a.cases.end(), by_id);
    std::sort(b.cases.begin(), b.cases.end(), by_id);
  }
  for (size_t k = 0; k < a.cases.size(); ++k)
    EXPECT_EQ(a.cases[k], b.cases[k]) << "case " << k << " of results.jsonl differs";
  EXPECT_EQ(a.csv, b.csv);
  EXPECT_EQ(a.junit, b.junit);
  EXPECT_EQ(a.summary_md, b.summary_md);
  EXPECT_EQ(static_cast<int>(b.cases.size()), b.summary["cases_total"].get<int>());
}

std::string shard_flag(const std::string& args, int i, int n, const std::string& out) {
  return "run " + args + " --shard " + std::to_string(i) + "/" + std::to_string(n) + " --out " +
         out;
}

// One unsplit run (one worker: its results.jsonl lists the cases in the suite's order) and its
// four shards, made once for the tests of a backend.
struct Split {
  std::string dir, unsplit;
  int unsplit_status = -1;
  std::vector<std::string> shards;  // shards[i - 1] holds shard i/4
  std::string merge_args() const {
    std::string a;
    for (const std::string& s : shards) a += " " + s;
    return a;
  }
};

Split make_split(const std::string& name, const std::string& args) {
  Split s;
  s.dir = temp_dir("shard-" + name);
  s.unsplit = s.dir + "/unsplit";
  const Output u = crucible("run " + args + " --workers 1 --out " + s.unsplit);
  s.unsplit_status = u.status;
  EXPECT_TRUE(u.status == 0 || u.status == 1) << u.out;
  for (int i = 1; i <= 4; ++i) {
    s.shards.push_back(s.dir + "/shard-" + std::to_string(i));
    const Output o = crucible(shard_flag(args, i, 4, s.shards.back()));
    EXPECT_TRUE(o.status == 0 || o.status == 1) << o.out;
  }
  return s;
}

const Split& cpu_split() {
  static const Split s = make_split("cpu", kCpuArgs);
  return s;
}
const Split& faulty_split() {
  static const Split s = make_split("faulty", kFaultyArgs);
  return s;
}

void copy_folder(const std::string& from, const std::string& to) {
  crucible::remove_tree(std::filesystem::path(to).string());
  fs::copy(from, to, fs::copy_options::recursive);
}

TEST(ShardMerge, FourCpuShardsMergedEqualTheUnsplitRunVerdictByVerdict) {
  const Split& s = cpu_split();
  ASSERT_EQ(s.unsplit_status, 0);
  // The shards split the suite: each case in one shard, about a quarter each.
  std::set<std::string> seen;
  std::set<std::string> fingerprints;
  int total = 0;
  for (int i = 1; i <= 4; ++i) {
    const json shard = read_json(s.shards[i - 1] + "/manifest.json")["shard"];
    EXPECT_EQ(shard["index"], i);
    EXPECT_EQ(shard["count"], 4);
    fingerprints.insert(shard["fingerprint"].get<std::string>());
    total = shard["cases_total"].get<int>();
    const auto lines = read_jsonl(s.shards[i - 1] + "/results.jsonl");
    EXPECT_EQ(lines.size(), shard["case_ids"].size());
    EXPECT_GT(lines.size(), static_cast<size_t>(total / 8)) << "shard " << i << " is too small";
    for (const json& l : lines) EXPECT_TRUE(seen.insert(l["case_id"]).second) << l["case_id"];
  }
  EXPECT_EQ(fingerprints.size(), 1u);
  EXPECT_EQ(static_cast<int>(seen.size()), total);
  EXPECT_EQ(total, read_json(s.unsplit + "/summary.json")["cases_total"].get<int>());

  const std::string merged = s.dir + "/merged";
  const Output m = crucible("merge" + s.merge_args() + " --out " + merged);
  ASSERT_EQ(m.status, s.unsplit_status) << m.out;
  EXPECT_NE(m.out.find("merged 4 shards"), std::string::npos) << m.out;
  expect_same_reports(s.unsplit, merged);
  // The merged manifest is the unsplit run's, with each shard's part.
  const json man = read_json(merged + "/manifest.json");
  EXPECT_FALSE(man.contains("shard"));
  EXPECT_EQ(man["merged"]["shards"].size(), 4u);
  EXPECT_EQ(man["options"]["suite"], "opinfo");
  for (const json& a : man["argv"]) EXPECT_NE(a, "--shard");
  // The shards were given in any order.
  const std::string again = s.dir + "/merged-reversed";
  const Output r = crucible("merge " + s.shards[3] + " " + s.shards[1] + " " + s.shards[0] + " " +
                            s.shards[2] + " --out " + again + " --quiet");
  ASSERT_EQ(r.status, s.unsplit_status) << r.out;
  expect_same_reports(s.unsplit, again);
}

TEST(ShardMerge, FailuresCrashesAndFirstFailuresMergeAsTheyRan) {
  const Split& s = faulty_split();
  ASSERT_EQ(s.unsplit_status, 1);
  const json summary = read_json(s.unsplit + "/summary.json");
  ASSERT_GT(summary["cases_failed"].get<int>(), 0);
  ASSERT_GT(summary["cases_crashed"].get<int>(), 0);
  const std::string merged = s.dir + "/merged";
  const Output m = crucible("merge" + s.merge_args() + " --out " + merged + " --quiet");
  EXPECT_EQ(m.status, 1) << m.out;  // the unsplit run's status: some case failed
  expect_same_reports(s.unsplit, merged, /*in_order=*/false);
}

TEST(ShardMerge, AMissingShardIsAnErrorNamingTheFoldersGiven) {
  const Split& s = cpu_split();
  const std::string out = s.dir + "/missing";
  const Output o =
      crucible("merge " + s.shards[0] + " " + s.shards[1] + " " + s.shards[3] + " --out " + out);
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_NE(o.out.find("shard 3/4 of the run is missing"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find(s.shards[3]), std::string::npos) << o.out;
  EXPECT_FALSE(fs::exists(out + "/summary.json"));
}

TEST(ShardMerge, ADuplicatedShardIsAnError) {
  const Split& s = cpu_split();
  const std::string copy = s.dir + "/shard-2-copy";
  copy_folder(s.shards[1], copy);
  Output o = crucible("merge" + s.merge_args() + " " + copy + " --out " + s.dir + "/dup");
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_NE(o.out.find("are both shard 2/4"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find(copy), std::string::npos) << o.out;
  o = crucible("merge" + s.merge_args() + " " + s.shards[0] + " --out " + s.dir + "/dup");
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_NE(o.out.find("same folder"), std::string::npos) << o.out;
  EXPECT_FALSE(fs::exists(s.dir + "/dup/summary.json"));
}

TEST(ShardMerge, ShardsOfAnotherSeedBackendSplitOrBuildAreRefused) {
  const Split& s = cpu_split();
  struct Foreign {
    std::string args, expected;
  };
  const std::string base = kCpuArgs;
  std::string other_seed = base;
  other_seed.replace(other_seed.find("--seed 7"), 8, "--seed 8");
  std::string other_backend = base;
  other_backend.replace(other_backend.find("--backend cpu"), 13, "--backend ref");
  std::string other_ops = base;
  other_ops.replace(other_ops.find("relu,"), 5, "");
  for (const auto& [args, expected] :
       {Foreign{other_seed, "different options (seed 7 and 8)"},
        Foreign{other_backend, "different options (backend cpu and ref)"},
        Foreign{other_ops, "different options (ops"}}) {
    const std::string foreign = s.dir + "/foreign";
    crucible::remove_tree(std::filesystem::path(foreign).string());
    const Output r = crucible(shard_flag(args, 2, 4, foreign));
    ASSERT_TRUE(r.status == 0 || r.status == 1) << r.out;
    const Output o = crucible("merge " + s.shards[0] + " " + foreign + " " + s.shards[2] + " " +
                              s.shards[3] + " --out " + s.dir + "/foreign-merged");
    EXPECT_EQ(o.status, 2) << o.out;
    EXPECT_NE(o.out.find("are not shards of one run"), std::string::npos) << o.out;
    EXPECT_NE(o.out.find(expected), std::string::npos) << o.out;
    EXPECT_NE(o.out.find(foreign), std::string::npos) << o.out;
  }
  // Shard 2 of a split in three.
  const std::string thirds = s.dir + "/thirds";
  crucible::remove_tree(std::filesystem::path(thirds).string());
  ASSERT_LE(crucible(shard_flag(kCpuArgs, 2, 3, thirds)).status, 1);
  Output o = crucible("merge " + s.shards[0] + " " + thirds + " --out " + s.dir + "/x");
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_NE(o.out.find("different splits (1/4 and 2/3)"), std::string::npos) << o.out;
  // Another build of crucible (its commit in the manifest).
  const std::string rebuilt = s.dir + "/rebuilt";
  copy_folder(s.shards[1], rebuilt);
  json man = read_json(rebuilt + "/manifest.json");
  man["git_commit"] = "0123456789ab";
  std::ofstream(rebuilt + "/manifest.json") << man.dump(2);
  o = crucible("merge " + s.shards[0] + " " + rebuilt + " " + s.shards[2] + " " + s.shards[3] +
               " --out " + s.dir + "/x");
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_NE(o.out.find("different builds of crucible (git_commit"), std::string::npos) << o.out;
  // A case list that is not the split's (the manifest's ids edited).
  const std::string edited = s.dir + "/edited";
  copy_folder(s.shards[1], edited);
  man = read_json(edited + "/manifest.json");
  man["shard"]["fingerprint"] = "0000000000000000";
  std::ofstream(edited + "/manifest.json") << man.dump(2);
  o = crucible("merge " + s.shards[0] + " " + edited + " " + s.shards[2] + " " + s.shards[3] +
               " --out " + s.dir + "/x");
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_NE(o.out.find("split different case lists"), std::string::npos) << o.out;
  // An unsplit run is no shard.
  o = crucible("merge " + s.unsplit + " --out " + s.dir + "/x");
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_NE(o.out.find(s.unsplit + ": not a shard"), std::string::npos) << o.out;
  EXPECT_FALSE(fs::exists(s.dir + "/x/summary.json"));
}

TEST(ShardMerge, AnUnfinishedShardIsRefusedAndFinishesWithResume) {
  const Split& s = cpu_split();
  const std::string part = s.dir + "/shard-3-part";
  copy_folder(s.shards[2], part);
  // Killed mid-way: half of its lines, the last one torn, no summary.
  const std::string text = read_text(part + "/results.jsonl");
  size_t cut = 0;
  for (int k = 0, lines = static_cast<int>(read_jsonl(part + "/results.jsonl").size());
       k < lines / 2; ++k)
    cut = text.find('\n', cut) + 1;
  std::ofstream(part + "/results.jsonl", std::ios::trunc) << text.substr(0, cut) + "{\"record\":";
  fs::remove(part + "/summary.json");
  const std::string merge =
      "merge " + s.shards[0] + " " + s.shards[1] + " " + part + " " + s.shards[3] + " --out ";
  Output o = crucible(merge + s.dir + "/early");
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_NE(o.out.find("shard 3/4 did not finish"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find(part), std::string::npos) << o.out;
  // Without the torn line: the cases without a result are counted.
  std::ofstream(part + "/results.jsonl", std::ios::trunc) << text.substr(0, cut);
  o = crucible(merge + s.dir + "/early");
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_NE(o.out.find("have no result"), std::string::npos) << o.out;
  EXPECT_FALSE(fs::exists(s.dir + "/early/summary.json"));

  // --resume finishes the shard (its split re-computed and checked), then the merge is whole.
  const Output r = crucible("run --resume " + part + " --quiet");
  ASSERT_LE(r.status, 1) << r.out;
  EXPECT_TRUE(read_json(part + "/manifest.json").contains("resumed"));
  o = crucible(merge + s.dir + "/resumed-merged --quiet");
  ASSERT_EQ(o.status, s.unsplit_status) << o.out;
  expect_same_reports(s.unsplit, s.dir + "/resumed-merged");

  // A shard whose recorded split is not the one the suite gives now is not resumed.
  const std::string changed = s.dir + "/shard-3-changed";
  copy_folder(s.shards[2], changed);
  json man = read_json(changed + "/manifest.json");
  man["shard"]["fingerprint"] = "0000000000000000";
  std::ofstream(changed + "/manifest.json") << man.dump(2);
  o = crucible("run --resume " + changed + " --quiet");
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_NE(o.out.find("the suite's cases changed since shard 3/4 started"), std::string::npos)
      << o.out;
}

TEST(ShardMerge, ShardFlagValuesThatMeanNoShardAreRefused) {
  const std::string dir = temp_dir("shard-flags");
  // (Every refused form is in tests/eval/test_shard.cpp; here, that the CLI refuses them.)
  for (const std::string bad : {"0/4", "5/4", "a/b"}) {
    const Output o = crucible("run --suite smoke --backend ref --ops relu.default --shard " + bad +
                              " --out " + dir + "/never");
    EXPECT_EQ(o.status, 2) << bad << ": " << o.out;
    EXPECT_NE(o.out.find("--shard"), std::string::npos) << o.out;
  }
  Output o =
      crucible("run --op aten.relu.default --case '((T([4], f32),), {})' --shard 1/2 --out " + dir +
               "/never");
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_NE(o.out.find("--shard"), std::string::npos) << o.out;
  EXPECT_FALSE(fs::exists(dir + "/never"));
  // --resume takes the shard from the run folder: giving it again is refused.
  const std::string one = dir + "/one";
  ASSERT_EQ(crucible("run --suite smoke --backend ref --ops relu.default --shard 1/2 --quiet "
                     "--out " +
                     one)
                .status,
            0);
  o = crucible("run --resume " + one + " --shard 2/2");
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_NE(o.out.find("--shard"), std::string::npos) << o.out;
  // merge without folders, or with an empty --out.
  o = crucible("merge");
  EXPECT_EQ(o.status, 2) << o.out;
  o = crucible("merge " + one + " --out ''");
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_NE(o.out.find("--out"), std::string::npos) << o.out;
}

TEST(ShardMerge, AShardWithoutCasesSucceedsAndMergesWithTheOthers) {
  // smoke: 16 cases of relu.default, in 20 shards: shards 17..20 get none.
  const std::string dir = temp_dir("shard-empty");
  const std::string args = "--suite smoke --backend ref --ops relu.default --quiet";
  const Output o = crucible(shard_flag(args, 20, 20, dir + "/s20"));
  EXPECT_EQ(o.status, 0) << o.out;
  const json shard = read_json(dir + "/s20/manifest.json")["shard"];
  EXPECT_EQ(shard["cases"], 0);
  EXPECT_EQ(shard["cases_total"], 16);
  EXPECT_TRUE(read_jsonl(dir + "/s20/results.jsonl").empty());
  // Two shards of 1/2 and 2/2 cover the 16 cases; merged they equal the unsplit run.
  ASSERT_LE(crucible("run " + args + " --workers 1 --out " + dir + "/unsplit").status, 1);
  ASSERT_LE(crucible(shard_flag(args, 1, 2, dir + "/a")).status, 1);
  ASSERT_LE(crucible(shard_flag(args, 2, 2, dir + "/b")).status, 1);
  const Output m = crucible("merge " + dir + "/b " + dir + "/a --quiet --out " + dir + "/m");
  EXPECT_EQ(m.status, 0) << m.out;
  expect_same_reports(dir + "/unsplit", dir + "/m");
}

TEST(ShardMerge, TimedShardsMergeWithTheirTimings) {
  // --perf: every case of the shards timed; the merged run has the unsplit run's verdicts and
  // timed ops, each timing from its shard (the figures themselves differ between two runs).
  const std::string dir = temp_dir("shard-perf");
  const std::string args = "--suite smoke --backend cpu --ops relu.default --perf --quiet";
  ASSERT_LE(crucible("run " + args + " --workers 1 --out " + dir + "/unsplit").status, 1);
  ASSERT_LE(crucible(shard_flag(args, 1, 2, dir + "/a")).status, 1);
  ASSERT_LE(crucible(shard_flag(args, 2, 2, dir + "/b")).status, 1);
  const Output m = crucible("merge " + dir + "/a " + dir + "/b --quiet --out " + dir + "/m");
  ASSERT_LE(m.status, 1) << m.out;
  const Reports a = reports(dir + "/unsplit"), b = reports(dir + "/m");
  ASSERT_EQ(a.cases, b.cases);
  ASSERT_EQ(a.timings.size(), b.timings.size());
  ASSERT_FALSE(b.timings.empty());
  std::set<std::string> timed_a, timed_b;
  for (const json& t : a.timings) timed_a.insert(t["case_id"]);
  for (const json& t : b.timings) timed_b.insert(t["case_id"]);
  EXPECT_EQ(timed_a, timed_b);
  // The timings of the merged run are those of its shards.
  std::set<std::string> in_shards;
  for (const std::string& sh : {dir + "/a", dir + "/b"})
    for (const json& l : read_jsonl(sh + "/results.jsonl"))
      if (l["record"] == "timing") in_shards.insert(l.dump());
  for (const json& l : read_jsonl(dir + "/m/results.jsonl"))
    if (l["record"] == "timing") {
      EXPECT_TRUE(in_shards.count(l.dump())) << l.dump();
    }
  for (const char* key : {"cases_total", "cases_passed", "ops_passed", "correctness_score"})
    EXPECT_EQ(a.summary[key], b.summary[key]) << key;
  const json op_a = a.summary["ops"]["aten.relu.default"],
             op_b = b.summary["ops"]["aten.relu.default"];
  EXPECT_EQ(op_a["timed"], op_b["timed"]);
  EXPECT_EQ(op_a["status"], op_b["status"]);
  EXPECT_TRUE(op_b.contains("speedup")) << b.summary.dump(1);
  EXPECT_TRUE(b.summary["perf_score"].is_number()) << b.summary.dump(1);
  EXPECT_EQ(read_json(dir + "/m/manifest.json")["options"]["perf"], true);
}

}  // namespace
}  // namespace crucible::e2e
