// End-to-end: `crucible run` refuses flag values that cannot mean anything, and flags that a
// resumed run or a single case would ignore, with a one-line error on stderr naming the flag and
// exit status 2, before any work; good values still run and reach the run's manifest.
#include <unistd.h>

#include <algorithm>

#include <gtest/gtest.h>

#include "e2e/cli_helpers.h"

namespace crucible::e2e {
namespace {

// `crucible <args>` with stderr captured apart from stdout.
Output crucible_stderr(const std::string& args) {
  const std::string cmd = std::string(CRUCIBLE_BINARY) + " " + args + " 2>&1 >/dev/null";
  Output o;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return o;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) o.out.append(buf.data(), n);
  int st = pclose(p);
  o.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return o;
}

// Refused as a usage error: exit status 2, one line on stderr that names `flag` (and `needle`).
void expect_refused(const std::string& args, const std::string& flag,
                    const std::string& needle = "") {
  SCOPED_TRACE("crucible " + args);
  const Output o = crucible_stderr(args);
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_EQ(o.out.rfind("crucible: error: ", 0), 0u) << o.out;
  EXPECT_EQ(std::count(o.out.begin(), o.out.end(), '\n'), 1) << o.out;
  EXPECT_NE(o.out.find(flag), std::string::npos) << o.out;
  if (!needle.empty()) {
    EXPECT_NE(o.out.find(needle), std::string::npos) << o.out;
  }
}

// A run folder that no bad flag value may create.
class FlagValues : public ::testing::Test {
 protected:
  void SetUp() override { out_ = temp_dir("flag-values") + "/run"; }
  void TearDown() override {
    EXPECT_FALSE(std::filesystem::exists(out_)) << "a refused command line created " << out_;
  }
  // `crucible run <flags> --out <folder>`, with a quick, valid suite unless `flags` names one.
  std::string run(const std::string& flags) const { return "run " + flags + " --out " + out_; }
  std::string out_;
};

int cores() { return static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN))); }

TEST_F(FlagValues, MemoryLimitThatIsNoSize) {
  for (const char* v : {"inf", "nan", "-1", "-4G", "4X", "4GG", "G", ".", "1e30", "0x10",
                        "99999999T", "''", "' 4G'"})
    expect_refused(run(std::string("--memory-limit ") + v), "--memory-limit");
}

TEST_F(FlagValues, TimeoutThatIsNoPositiveNumberOfSeconds) {
  for (const char* v :
       {"nan", "inf", "-inf", "1e999", "-3", "0", "-0", "0.0", "1e7", "30s", "0x10", "abc", "''"})
    expect_refused(run(std::string("--timeout ") + v), "--timeout");
  expect_refused(run("--timeout nan"), "--timeout", "not a number of seconds");
  expect_refused(run("--timeout 0"), "--timeout", "positive");
}

TEST_F(FlagValues, SeedThatIsNoUnsigned64BitInteger) {
  for (const char* v : {"-1", "1.5", "1e3", "abc", "0x10", "+1", "18446744073709551616",
                        "99999999999999999999999", "''"})
    expect_refused(run(std::string("--seed ") + v), "--seed");
}

TEST_F(FlagValues, EmptyOpsAndDtypesFiltersAndEmptyTerms) {
  for (const char* flag : {"--ops", "--dtypes"}) {
    expect_refused(run(std::string(flag) + " ''"), flag, "is empty");
    expect_refused(run(std::string(flag) + " ' , '"), flag, "is empty");
  }
  for (const char* v : {"relu,,add", "relu,", ",relu", "relu, ,add"})
    expect_refused(run(std::string("--ops ") + shell_quote(v)), "--ops", "is empty");
  expect_refused(run("--ops relu,,add"), "--ops", "term 2 of 3 is empty");
  for (const char* v : {"f32,,f16", "f32,", ",f32"})
    expect_refused(run(std::string("--dtypes ") + v), "--dtypes", "is empty");
  expect_refused(run("--dtypes f32,f99"), "--dtypes", "unknown dtype 'f99'");
}

TEST_F(FlagValues, WorkersAndThreadsOutsideOneToFourTimesTheCores) {
  const std::string too_many = std::to_string(4 * cores() + 1);
  for (const char* flag : {"--workers", "--threads"}) {
    for (const std::string& v :
         {std::string("0"), std::string("-1"), std::string("nan"), std::string("2.5"),
          std::string("0x4"), too_many, std::string("100000"), std::string("99999999999999999999")})
      expect_refused(run(std::string(flag) + " " + v), flag);
    expect_refused(run(std::string(flag) + " " + too_many), flag,
                   "at most " + std::to_string(4 * cores()));
    expect_refused(run(std::string(flag) + " 0"), flag, "at least 1");
  }
}

TEST_F(FlagValues, CountsAndCapsThatAreNegativeOrNotNumbers) {
  const std::string traces = "--suite traces:" + std::string(CRUCIBLE_SOURCE_DIR) + "/data/traces";
  for (const char* v : {"-1", "nan", "1.5", "99999999999", "''"})
    expect_refused(run(traces + " --calls-per-op " + v), "--calls-per-op");
  for (const char* v : {"-1", "-5", "nan", "inf", "1.5", "1e6", "''"})
    expect_refused(run(traces + " --max-numel " + v), "--max-numel");
  for (const char* v : {"-1", "nan", "inf", "-inf", "1e999", "''"})
    expect_refused(run(traces + " --max-flops " + v), "--max-flops");
  for (const char* v : {"0", "-1", "nan", "inf", "''"})
    expect_refused(run(std::string("--perf --p ") + v), "--p ");
  expect_refused(run("--perf --perf-dtype i32"), "--perf-dtype");
}

TEST_F(FlagValues, EmptyTextFlags) {
  for (const char* flag : {"--suite", "--backend", "--reference", "--resume"})
    expect_refused(run(std::string(flag) + " ''"), flag, "is empty");
  expect_refused("run --out ''", "--out", "is empty");
  expect_refused(run("--perf --baseline ''"), "--baseline", "is empty");
  expect_refused(run("--op '' --case " + shell_quote("((T([2], f32),), {})")), "--op", "is empty");
  expect_refused(run("--op aten.relu.default --case ''"), "--case", "is empty");
  expect_refused(run("--backend directory --ops-directory ''"), "--ops-directory", "is empty");
  expect_refused(run("--backend pregenerated --kernels-dir ''"), "--kernels-dir", "is empty");
}

TEST_F(FlagValues, TimingFlagsWithoutPerf) {
  for (const char* flags : {"--baseline ref", "--warm-cache", "--p 1.5", "--perf-dtype f32"})
    expect_refused(run(flags), std::string(flags).substr(0, std::string(flags).find(' ')),
                   "only matters with --perf");
}

TEST_F(FlagValues, FlagsThatASingleCaseWouldIgnore) {
  const std::string one = "--op aten.relu.default --case " + shell_quote("((T([2], f32),), {})");
  for (const char* flags : {"--suite opinfo", "--ops relu", "--dtypes f32", "--calls-per-op 2",
                            "--max-numel 100", "--max-flops 1e6", "--perf --perf-dtype f32"}) {
    std::string flag = std::string(flags);
    if (flag.starts_with("--perf ")) flag = flag.substr(7);
    flag = flag.substr(0, flag.find(' '));
    expect_refused(run(one + " " + flags), flag, "--op/--case run one case");
  }
  expect_refused(run("--op aten.relu.default"), "--case", "go together");
  expect_refused(run("--case " + shell_quote("((T([2], f32),), {})")), "--op", "go together");
}

// A resumed run takes its options from its run folder: any other flag is refused by name.
TEST(FlagValuesResume, FlagsThatAResumedRunWouldIgnore) {
  const std::string dir = temp_dir("flag-values-resume") + "/run";
  Output o =
      crucible("run --suite smoke --backend ref --ops relu.default --dtypes f32 -q --out " + dir);
  ASSERT_EQ(o.status, 0) << o.out;
  const std::string results = read_text(dir + "/results.jsonl");
  for (const char* flags :
       {"--suite opinfo", "--suite smoke", "--backend ref", "--reference ref", "--ops relu",
        "--dtypes f32", "--seed 1", "--timeout 30", "--memory-limit 1G", "--threads 1", "--perf",
        "--no-sandbox", "--out /tmp/elsewhere", "--max-numel 100", "--calls-per-op 2",
        "--op aten.relu.default"}) {
    const std::string flag = std::string(flags).substr(0, std::string(flags).find(' '));
    expect_refused("run --resume " + dir + " " + flags, flag,
                   "the options in its run folder (" + dir + "/manifest.json)");
  }
  expect_refused("run --resume " + dir + " --ops neg --seed 3", "--ops, --seed", "are not taken");
  // Nothing above touched the run folder.
  EXPECT_EQ(read_text(dir + "/results.jsonl"), results);
  // --workers and --quiet are the resumed run's own; a bad --workers is still refused.
  expect_refused("run --resume " + dir + " --workers 0", "--workers", "at least 1");
  o = crucible("run --resume " + dir + " --workers 1 -q");
  EXPECT_EQ(o.status, 0) << o.out;
  EXPECT_EQ(read_json(dir + "/manifest.json")["resumed"].size(), 1u);
}

// Good values still run, and reach the run as given.
TEST(FlagValuesAccepted, GoodValuesRunAndReachTheManifest) {
  const std::string dir = temp_dir("flag-values-good") + "/run";
  Output o = crucible(
      "run --suite smoke --backend ref --ops ' relu.default , neg' --dtypes f32,f64 "
      "--seed 18446744073709551615 --timeout 30.5 --memory-limit 1.5G --workers 1 --threads 1 "
      "--max-numel 0 --max-flops 2e9 --calls-per-op 0 -q --out " +
      dir);
  ASSERT_EQ(o.status, 0) << o.out;
  const nlohmann::json m = read_json(dir + "/manifest.json")["options"];
  EXPECT_EQ(m["ops"], nlohmann::json::array({"relu.default", "neg"}));
  EXPECT_EQ(m["dtypes"].size(), 2u);
  for (const char* d : {"f32", "f64"})
    EXPECT_NE(std::find(m["dtypes"].begin(), m["dtypes"].end(), d), m["dtypes"].end()) << m;
  EXPECT_EQ(m["seed"].get<uint64_t>(), 18446744073709551615ull);
  EXPECT_EQ(m["timeout_s"].get<double>(), 30.5);
  EXPECT_EQ(m["memory_limit"].get<uint64_t>(), uint64_t{3} << 29);
  EXPECT_EQ(m["workers"], 1);
  EXPECT_EQ(m["threads"], 1);
  EXPECT_EQ(m["max_numel"], 0);
  EXPECT_EQ(m["max_flops"].get<double>(), 2e9);

  // 0 is "no limit" for --memory-limit; the largest worker count; --perf with its own flags.
  const std::string dir2 = temp_dir("flag-values-good2") + "/run";
  o = crucible(
      "run --suite smoke --backend ref --ops relu.default --dtypes f32 --memory-limit 0 "
      "--workers " +
      std::to_string(4 * cores()) +
      " --perf --p 1.5 --warm-cache --perf-dtype f32 --timeout 1e6 -q --out " + dir2);
  EXPECT_TRUE(o.status == 0 || o.status == 1) << o.out;
  ASSERT_TRUE(std::filesystem::exists(dir2 + "/manifest.json")) << o.out;
  const nlohmann::json m2 = read_json(dir2 + "/manifest.json")["options"];
  EXPECT_EQ(m2["memory_limit"], 0);
  EXPECT_EQ(m2["workers"], 4 * cores());
  EXPECT_EQ(m2["p"].get<double>(), 1.5);
  EXPECT_EQ(m2["cold_cache"], false);
  EXPECT_EQ(m2["perf_dtype"], "f32");
  EXPECT_EQ(m2["timeout_s"].get<double>(), 1e6);
}

}  // namespace
}  // namespace crucible::e2e
