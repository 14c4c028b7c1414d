// End-to-end: `crucible run` refuses flag values that cannot mean anything, and flags that a
// resumed run or a single case would ignore, with a one-line error on stderr naming the flag and
// exit status 2, before any work; good values still run and reach the run's manifest.
#include <unistd.h>

#include <algorithm>

#include <gtest/gtest.h>

#include "crucible/eval/run_plan.h"
#include "e2e/cli_helpers.h"

namespace crucible::e2e {
namespace {

// A command line that must be refused: `crucible <args>`, whose error names `flag` (and holds
// `needle` when given).
struct Refusal {
  std::string args;
  std::string flag;
  std::string needle;
};

// Runs the command lines (a few at a time: each start of the binary takes a while) and checks
// each is a usage error: exit status 2 and one line on stderr, "crucible: error: ...", naming
// the flag.
void expect_refused(const std::vector<Refusal>& all) {
  constexpr size_t kAtOnce = 6;
  for (size_t first = 0; first < all.size(); first += kAtOnce) {
    const size_t last = std::min(all.size(), first + kAtOnce);
    std::vector<FILE*> pipes;
    for (size_t i = first; i < last; ++i) {
      // stderr alone: stdout goes nowhere.
      const std::string cmd = std::string(CRUCIBLE_BINARY) + " " + all[i].args + " 2>&1 >/dev/null";
      pipes.push_back(popen(cmd.c_str(), "r"));
    }
    for (size_t i = first; i < last; ++i) {
      const Refusal& r = all[i];
      SCOPED_TRACE("crucible " + r.args);
      FILE* p = pipes[i - first];
      ASSERT_NE(p, nullptr);
      std::string err;
      std::array<char, 4096> buf;
      size_t n;
      while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) err.append(buf.data(), n);
      const int st = pclose(p);
      EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 2) << err;
      EXPECT_EQ(err.rfind("crucible: error: ", 0), 0u) << err;
      EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
      EXPECT_NE(err.find(r.flag), std::string::npos) << err;
      if (!r.needle.empty()) {
        EXPECT_NE(err.find(r.needle), std::string::npos) << err;
      }
    }
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
  std::vector<Refusal> r;
  for (const char* v : {"inf", "nan", "-4G", "4X", "4GG", "0x10", "1e30"})
    r.push_back({run(std::string("--memory-limit ") + v), std::string("--memory-limit '") + v,
                 "is not a size"});
  for (const char* v : {"99999999T", "2000T"})
    r.push_back({run(std::string("--memory-limit ") + v), std::string("--memory-limit '") + v,
                 "beyond any machine's memory"});
  r.push_back({run("--memory-limit ''"), "--memory-limit is empty"});
  expect_refused(r);
}

TEST_F(FlagValues, TimeoutThatIsNoPositiveNumberOfSeconds) {
  std::vector<Refusal> r;
  for (const char* v : {"nan", "inf", "-inf", "1e999", "30s", "0x10", "''"})
    r.push_back({run(std::string("--timeout ") + v), "--timeout", "not a number of seconds"});
  // 0 is no "none": every case has a timeout.
  for (const char* v : {"0", "-0", "-3", "1e7"})
    r.push_back({run(std::string("--timeout ") + v), "--timeout", "positive number of seconds"});
  expect_refused(r);
}

TEST_F(FlagValues, SeedThatIsNoUnsigned64BitInteger) {
  std::vector<Refusal> r;
  for (const char* v : {"-1", "1.5", "1e3", "abc", "0x10", "+1", "18446744073709551616", "''"})
    r.push_back({run(std::string("--seed ") + v), "--seed", "below 2^64"});
  expect_refused(r);
}

TEST_F(FlagValues, EmptyOpsAndDtypesFiltersAndEmptyTerms) {
  std::vector<Refusal> r;
  for (const char* flag : {"--ops", "--dtypes"}) {
    r.push_back({run(std::string(flag) + " ''"), flag, std::string(flag) + " is empty"});
    r.push_back({run(std::string(flag) + " ' , '"), flag, std::string(flag) + " is empty"});
  }
  r.push_back({run("--ops relu,,add"), "--ops", "term 2 of 3 is empty"});
  r.push_back({run("--ops relu,"), "--ops", "term 2 of 2 is empty"});
  r.push_back({run("--ops ' ,relu'"), "--ops", "term 1 of 2 is empty"});
  r.push_back({run("--dtypes f32,,f16"), "--dtypes", "term 2 of 3 is empty"});
  r.push_back({run("--dtypes f32,f99"), "--dtypes", "unknown dtype 'f99'"});
  expect_refused(r);
}

TEST_F(FlagValues, WorkersAndThreadsOutsideOneToFourTimesTheCores) {
  const std::string most = std::to_string(4 * cores());
  const std::string too_many = std::to_string(4 * cores() + 1);
  std::vector<Refusal> r;
  for (const std::string flag : {"--workers", "--threads"}) {
    r.push_back({run(flag + " 0"), flag + " 0", "at least 1"});
    r.push_back({run(flag + " -2"), flag + " -2", "at least 1"});
    r.push_back({run(flag + " " + too_many), flag + " " + too_many, "at most " + most});
    r.push_back({run(flag + " 99999999999999999999"), flag, "at most " + most});
    r.push_back({run(flag + " 2.5"), flag, "not a whole number"});
    r.push_back({run(flag + " nan"), flag, "not a whole number"});
  }
  expect_refused(r);
}

TEST_F(FlagValues, CountsCapsAndThresholdsThatAreNegativeOrNotNumbers) {
  const std::string traces = "--suite traces:" + std::string(CRUCIBLE_SOURCE_DIR) + "/data/traces";
  std::vector<Refusal> r;
  for (const char* v : {"-1", "nan", "1.5", "99999999999"})
    r.push_back({run(traces + " --calls-per-op " + v), "--calls-per-op", "expected 0"});
  for (const char* v : {"-5", "inf", "1e6"})
    r.push_back({run(traces + " --max-numel " + v), "--max-numel", "or 0 for no cap"});
  for (const char* v : {"-1", "nan", "inf", "1e999"})
    r.push_back({run(traces + " --max-flops " + v), "--max-flops", "or 0 for no cap"});
  for (const char* v : {"0", "-1", "nan", "inf"})
    r.push_back({run(std::string("--perf --p ") + v), "--p ", "positive speed-up"});
  r.push_back({run("--perf --perf-dtype i32"), "--perf-dtype", "expected one of"});
  expect_refused(r);
}

TEST_F(FlagValues, EmptyTextFlags) {
  std::vector<Refusal> r;
  for (const char* flag : {"--suite", "--backend", "--reference", "--resume"})
    r.push_back({run(std::string(flag) + " ''"), flag, std::string(flag) + " is empty"});
  r.push_back({"run --out ''", "--out", "--out is empty"});
  r.push_back({run("--perf --baseline ''"), "--baseline", "--baseline is empty"});
  r.push_back(
      {run("--op '' --case " + shell_quote("((T([2], f32),), {})")), "--op", "--op is empty"});
  r.push_back({run("--op aten.relu.default --case ''"), "--case", "--case is empty"});
  r.push_back({run("--backend directory --ops-directory ''"), "--ops-directory",
               "--ops-directory is empty"});
  expect_refused(r);
}

// CLI11's own errors are usage errors too, on one line: a missing value, a flag given twice, a
// value given to a switch, an unknown flag.
TEST_F(FlagValues, ParserErrors) {
  expect_refused({{"run --timeout", "--timeout", "missing"},
                  {run("--timeout 5 --timeout 6"), "--timeout"},
                  {run("--perf=2"), "--perf is a switch"},
                  {run("--no-sandbox=false"), "--no-sandbox is a switch"},
                  {run("-q -q"), "--quiet is a switch"},
                  {run("--no-such-flag"), "--no-such-flag"},
                  // The next flag taken as a value.
                  {"run --out --quiet", "--out --quiet", "a flag, not a value"},
                  {run("--timeout --quiet"), "--timeout --quiet", "not a number"}});
}

TEST_F(FlagValues, TimingFlagsWithoutPerf) {
  std::vector<Refusal> r;
  for (const char* flag : {"--baseline ref", "--warm-cache", "--p 1.5", "--perf-dtype f32"}) {
    const std::string name = std::string(flag).substr(0, std::string(flag).find(' '));
    r.push_back({run(flag), name, name + " only matters with --perf"});
  }
  expect_refused(r);
}

TEST_F(FlagValues, FlagsThatASingleCaseWouldIgnore) {
  const std::string one = "--op aten.relu.default --case " + shell_quote("((T([2], f32),), {})");
  std::vector<Refusal> r;
  for (const char* flags : {"--suite opinfo", "--ops relu", "--dtypes f32", "--calls-per-op 2",
                            "--max-numel 100", "--max-flops 1e6", "--perf-dtype f32 --perf"}) {
    const std::string flag = std::string(flags).substr(0, std::string(flags).find(' '));
    r.push_back({run(one + " " + flags), "--op/--case run one case; " + flag});
  }
  r.push_back({run("--op aten.relu.default"), "--case", "--op and --case go together"});
  r.push_back({run("--case " + shell_quote("((T([2], f32),), {})")), "--op",
               "--op and --case go together"});
  expect_refused(r);
}

// A resumed run takes its options from its run folder: any other flag is refused by name.
TEST(FlagValuesResume, FlagsThatAResumedRunWouldIgnore) {
  const std::string dir = temp_dir("flag-values-resume") + "/run";
  Output o =
      crucible("run --suite smoke --backend ref --ops relu.default --dtypes f32 -q --out " + dir);
  ASSERT_EQ(o.status, 0) << o.out;
  const std::string results = read_text(dir + "/results.jsonl");
  const std::string folder = "the options in its run folder (" + dir + "/manifest.json)";
  std::vector<Refusal> r;
  // Different values, and the very values the run was started with.
  for (const char* flags :
       {"--suite opinfo", "--suite smoke", "--backend ref", "--dtypes f32", "--seed 1",
        "--timeout 30", "--memory-limit 1G", "--threads 1", "--perf", "--no-sandbox",
        "--out /tmp/elsewhere", "--op aten.relu.default"}) {
    const std::string flag = std::string(flags).substr(0, std::string(flags).find(' '));
    r.push_back({"run --resume " + dir + " " + flags, "; " + flag + " is not taken", folder});
  }
  r.push_back(
      {"run --resume " + dir + " --ops neg --seed 3", "; --ops, --seed are not taken", folder});
  // --workers and --quiet are the resumed run's own; a bad --workers is still refused.
  r.push_back({"run --resume " + dir + " --workers 0", "--workers 0", "at least 1"});
  expect_refused(r);
  // Nothing above touched the run folder.
  EXPECT_EQ(read_text(dir + "/results.jsonl"), results);
  EXPECT_FALSE(read_json(dir + "/manifest.json").contains("resumed"));
  // A run started with more workers than this machine allows is resumed with --workers.
  nlohmann::json m = read_json(dir + "/manifest.json");
  m["argv"].insert(m["argv"].begin() + 2, {"--workers", std::to_string(4 * cores() + 1)});
  std::ofstream(dir + "/manifest.json") << m.dump(2);
  expect_refused({{"run --resume " + dir, "--workers " + std::to_string(4 * cores() + 1),
                   dir + "/manifest.json: cannot re-read the earlier command line"}});
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

  // auto (the default, and spelled out): each worker's share of the machine, resolved in the
  // manifest to a number of bytes.
  const std::string dir3 = temp_dir("flag-values-good3") + "/run";
  o = crucible(
      "run --suite smoke --backend ref --ops relu.default --memory-limit auto --workers 2 "
      "-q --out " +
      dir3);
  ASSERT_EQ(o.status, 0) << o.out;
  const nlohmann::json m3 = read_json(dir3 + "/manifest.json")["options"];
  EXPECT_EQ(m3["memory_limit"].get<size_t>(), default_memory_limit(2, usable_memory())) << m3;
  EXPECT_GE(m3["memory_limit"].get<size_t>(), size_t{1} << 30);
}

}  // namespace
}  // namespace crucible::e2e
