// End-to-end: the run history and `crucible compare` on real runs of two kernel folders
// (tests/fixtures/compare): one kernel made wrong and one made slower between the runs.
#include <algorithm>
#include <set>

#include <gtest/gtest.h>

#include "e2e/cli_helpers.h"

namespace crucible::e2e {
namespace {

using nlohmann::json;

struct Runs {
  std::string dir, history;
  std::string before, after, again;  // run folders: before/, after/, before/ once more
  Output before_out, after_out, again_out;
};

// Three --perf runs of the same cases and seed: the `before` kernels, the `after` kernels and
// the `before` kernels again, each recorded in one history.
const Runs& runs() {
  static const Runs r = [] {
    Runs x;
    x.dir = temp_dir("compare");
    x.history = x.dir + "/history.db";
    auto run = [&](const std::string& kernels, const std::string& name) {
      return crucible(
          "run --suite opinfo --ops add.Tensor,sum.default --dtypes f32 --perf "
          "--baseline cpu --max-numel 65536 --quiet --seed 3 --backend dir:" +
          std::string(CRUCIBLE_SOURCE_DIR) + "/tests/fixtures/compare/" + kernels + " --history " +
          x.history + " --out " + x.dir + "/" + name);
    };
    x.before_out = run("before", "before");
    x.after_out = run("after", "after");
    x.again_out = run("before", "again");
    x.before = x.dir + "/before";
    x.after = x.dir + "/after";
    x.again = x.dir + "/again";
    return x;
  }();
  return r;
}

std::set<std::string> ops_of(const json& list) {
  std::set<std::string> ops;
  for (const json& e : list) ops.insert(e["op"].get<std::string>());
  return ops;
}

json compare_json(const std::string& args, int want_status) {
  Output o = crucible("compare " + args + " --json");
  EXPECT_EQ(o.status, want_status) << o.out;
  const size_t brace = o.out.find('{');
  if (brace == std::string::npos) return json::object();
  return json::parse(o.out.substr(brace));
}

void check_wrong_and_slower() {
  const Runs& r = runs();
  ASSERT_EQ(r.before_out.status, 0) << r.before_out.out;
  ASSERT_EQ(r.after_out.status, 1) << r.after_out.out;  // neg is wrong
  const json c = compare_json(r.before + " " + r.after, 1);
  EXPECT_EQ(c["regressed"], true);
  EXPECT_EQ(ops_of(c["ops_newly_failing"]), std::set<std::string>{"aten.sum.default"});
  EXPECT_EQ(ops_of(c["cases_slower"]), std::set<std::string>{"aten.add.Tensor"});
  EXPECT_EQ(ops_of(c["cases_status_changed"]), std::set<std::string>{"aten.sum.default"});
  EXPECT_TRUE(c["ops_fixed"].empty());
  EXPECT_TRUE(c["ops_changed_otherwise"].empty());
  EXPECT_TRUE(c["cases_faster"].empty()) << c["cases_faster"].dump();
  for (const json& s : c["cases_slower"]) EXPECT_LT(s["factor"].get<double>(), 0.2) << s.dump();

  // The console and Markdown name the same two.
  Output text = crucible("compare " + r.before + " " + r.after);
  EXPECT_EQ(text.status, 1);
  EXPECT_NE(text.out.find("ops newly failing (1)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("cases slower beyond the noise"), std::string::npos) << text.out;
  Output md = crucible("compare " + r.before + " " + r.after + " --markdown");
  EXPECT_EQ(md.status, 1);
  EXPECT_NE(md.out.find("## Ops newly failing (1)"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("| aten.add.Tensor |"), std::string::npos) << md.out;
}

// The factor two runs of one build are compared with (see check_rerun_clean).
const std::string kRerunFactor = " --min-change 10";

void check_rerun_clean() {
  const Runs& r = runs();
  ASSERT_EQ(r.again_out.status, 0) << r.again_out.out;
  // The planted slowdown is about 2000x; reruns of the same build on two cores that ctest keeps
  // busy moved a 10 us call up to 5x for two runs in a row (10 us, then 53 us and 53 us). The
  // reruns are compared with a factor of 10: noise stays below it, any real change is far above.
  Output o = crucible("compare " + r.before + " " + r.again + " --json" + kRerunFactor);
  json c = json::parse(o.out.substr(std::min(o.out.find('{'), o.out.size() - 1)));
  // Verdicts never move between two runs of one build and seed.
  for (const char* key :
       {"ops_newly_failing", "ops_fixed", "ops_changed_otherwise", "cases_status_changed"})
    EXPECT_TRUE(c[key].empty()) << key << ": " << c[key].dump();
  EXPECT_GT(c["timed_compared"].get<int>(), 0);
  // Timings can: these calls take tens of microseconds, and ctest runs other tests on the same
  // two cores, so a load spike over a whole run can move one beyond any fixed factor. A real
  // change stays when the run is made again; a spike does not. One more rerun decides.
  if (!c["cases_slower"].empty() || !c["cases_faster"].empty()) {
    const std::string third = r.dir + "/third";
    Output rerun = crucible(
        "run --suite opinfo --ops add.Tensor,sum.default --dtypes f32 --perf --baseline cpu "
        "--max-numel 65536 --quiet --seed 3 --history none --backend dir:" +
        std::string(CRUCIBLE_SOURCE_DIR) + "/tests/fixtures/compare/before --out " + third);
    ASSERT_EQ(rerun.status, 0) << rerun.out;
    o = crucible("compare " + r.before + " " + third + " --json" + kRerunFactor);
    c = json::parse(o.out.substr(std::min(o.out.find('{'), o.out.size() - 1)));
  }
  EXPECT_EQ(o.status, 0) << o.out;
  EXPECT_EQ(c["regressed"], false);
  for (const char* key : {"cases_slower", "cases_faster"})
    EXPECT_TRUE(c[key].empty()) << key << ": " << c[key].dump();
}

void check_history_ids() {
  const Runs& r = runs();
  Output list = crucible("history --json --history " + r.history);
  ASSERT_EQ(list.status, 0) << list.out;
  const json runs_json = json::parse(list.out);
  ASSERT_EQ(runs_json.size(), 3u);
  // Newest first: again, after, before.
  EXPECT_NE(runs_json[0]["folder"].get<std::string>().find("/again"), std::string::npos);
  EXPECT_NE(runs_json[2]["folder"].get<std::string>().find("/before"), std::string::npos);
  EXPECT_EQ(runs_json[1]["ops_passed"], 1);
  EXPECT_EQ(runs_json[1]["backend"].get<std::string>().rfind("dir:", 0), 0u);
  const std::string before_id = std::to_string(runs_json[2]["id"].get<int>());
  const std::string after_id = std::to_string(runs_json[1]["id"].get<int>());

  const json c = compare_json(before_id + " " + after_id + " --history " + r.history, 1);
  EXPECT_EQ(ops_of(c["ops_newly_failing"]), std::set<std::string>{"aten.sum.default"});
  EXPECT_EQ(ops_of(c["cases_slower"]), std::set<std::string>{"aten.add.Tensor"});
  // A run id against a run folder.
  EXPECT_EQ(compare_json(before_id + " " + r.again + " --history " + r.history + kRerunFactor,
                         0)["regressed"],
            false);

  Output table = crucible("history --history " + r.history);
  EXPECT_EQ(table.status, 0);
  EXPECT_NE(table.out.find("3 run(s)"), std::string::npos) << table.out;
}

// The three runs (the slow part) for the three checks.
TEST(E2ECompare, NamesTheWrongAndTheSlowerKernelAndARerunComparesClean) {
  check_wrong_and_slower();
  check_rerun_clean();
  check_history_ids();
}

TEST(E2ECompare, BadInputExitsTwoNamingIt) {
  Runs r;  // two quick runs of the reference
  r.dir = temp_dir("compare-bad");
  r.history = r.dir + "/history.db";
  r.before = r.dir + "/a";
  r.after = r.dir + "/b";
  for (const std::string& out : {r.before, r.after})
    ASSERT_EQ(crucible("run --suite smoke --ops relu.default --backend ref --quiet --history " +
                       r.history + " --out " + out)
                  .status,
              0);
  EXPECT_EQ(crucible("compare 1 2 --history " + r.history).status, 0);  // the two, by id
  Output o = crucible("compare " + r.before + " no-such-run");
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.out.find("'no-such-run' is neither a run folder nor a run id"), std::string::npos)
      << o.out;
  Output id = crucible("compare 999 " + r.before + " --history " + r.history);
  EXPECT_EQ(id.status, 2);
  EXPECT_NE(id.out.find("no run 999"), std::string::npos) << id.out;
  Output nohist = crucible("compare 1 2 --history " + r.dir + "/none.db");
  EXPECT_EQ(nohist.status, 2);
  EXPECT_NE(nohist.out.find("none.db"), std::string::npos) << nohist.out;
  Output both = crucible("compare " + r.before + " " + r.after + " --json --markdown");
  EXPECT_EQ(both.status, 2);
  Output factor = crucible("compare " + r.before + " " + r.after + " --min-change 0.5");
  EXPECT_EQ(factor.status, 2);
  EXPECT_NE(factor.out.find("--min-change"), std::string::npos) << factor.out;
}

TEST(E2ECompare, RunsRecordIntoTheDataDirectoryUnlessTold) {
  const std::string dir = temp_dir("history-default");
  const std::string env = "XDG_DATA_HOME=" + shell_quote(dir + "/data");
  Output o = crucible_env(
      env, "run --suite smoke --ops relu.default --backend ref --quiet --out " + dir + "/r1");
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_TRUE(std::filesystem::exists(dir + "/data/crucible/history.db"));
  Output none = crucible_env(env,
                             "run --suite smoke --ops relu.default --backend ref --quiet "
                             "--history none --out " +
                                 dir + "/r2");
  ASSERT_EQ(none.status, 0) << none.out;
  Output list = crucible_env(env, "history --json");
  ASSERT_EQ(list.status, 0) << list.out;
  const json runs_json = json::parse(list.out);
  ASSERT_EQ(runs_json.size(), 1u);  // r2 was not recorded
  EXPECT_NE(runs_json[0]["folder"].get<std::string>().find("/r1"), std::string::npos);
}

}  // namespace
}  // namespace crucible::e2e
