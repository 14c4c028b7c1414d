// End-to-end: the adversarial corpus (tests/fixtures/adversarial,
// tests/fixtures/adversarial_plugins) through the real binary. Kernels written as an attacker would
// against the public ABI: forging verdicts, changing the process around the judge, predicting the
// defences, hiding in the blind spots of the samples, attacking the compile step and the worker
// channel, and a few correct kernels that the defences must not fail.
// tests/fixtures/adversarial/EXPECTED.md lists every kernel with the verdict it must get. For every
// run:
//  - the run completes: exit status 0 or 1, summary.json written, every op asked for in it, and
//    results.jsonl holds well-formed case lines only;
//  - no wrong or cheating kernel has all its cases passed (results.jsonl and summary.json both
//    show a case failed, crashed, timed out or out of memory);
//  - every correct kernel has all its cases passed, twice where a neighbour's side effects could
//    disturb it.
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "e2e/cli_helpers.h"

namespace crucible::e2e {
namespace {

std::string corpus(const std::string& folder) {
  return std::string(CRUCIBLE_SOURCE_DIR) + "/tests/fixtures/adversarial/" + folder;
}

std::string plugin(const std::string& name) {
  return std::string(CRUCIBLE_ADVERSARIAL_PLUGIN_DIR) + "/lib" + name + ".so";
}

// The kernel cache shared with the other kernel-folder tests (content-addressed: sharing is
// safe, and a second run compiles nothing).
std::string cache_env() {
  return "CRUCIBLE_KERNEL_CACHE=" +
         shell_quote(
             (std::filesystem::temp_directory_path() / "crucible-test-kernel-cache").string());
}

#ifdef CRUCIBLE_SANITIZED
constexpr const char* kTimeout = "4";
#else
constexpr const char* kTimeout = "1";
#endif

// The statuses that say a kernel was caught: anything but passed, unsupported and skipped.
bool is_bad(const std::string& s) { return s != "passed" && s != "unsupported" && s != "skipped"; }

// One run of crucible over a backend, with its journal and summary.
struct CrucibleRun {
  int status = -1;
  std::string out;                                              // crucible's stdout and stderr
  std::string folder;                                           // --out
  std::map<std::string, std::multiset<std::string>> status_of;  // op -> statuses (results.jsonl)
  std::map<std::string, std::vector<std::string>> details;      // op -> details
  std::vector<std::string> bad_lines;  // lines of results.jsonl that are not a case of this run
  std::vector<std::string> case_ids;
  size_t longest_line = 0;
  bool has_summary = false;
  nlohmann::json summary;

  // Every case of `op` passed, in the journal and in the summary.
  bool all_passed(const std::string& op) const {
    auto it = status_of.find(op);
    if (it == status_of.end() || it->second.empty() ||
        it->second.count("passed") != it->second.size())
      return false;
    if (!has_summary || !summary["ops"].contains(op)) return false;
    const nlohmann::json& o = summary["ops"][op];
    if (!o["passed"].get<bool>() || o["cases"].get<int64_t>() == 0) return false;
    for (const auto& [s, n] : o["status"].items())
      if (s != "passed" && n.get<int64_t>() > 0) return false;
    return true;
  }
  // Some case of `op` failed, crashed, timed out, ... in the journal, and the summary agrees.
  bool caught(const std::string& op) const {
    auto it = status_of.find(op);
    if (it == status_of.end()) return false;
    bool journal = false;
    for (const std::string& s : it->second) journal = journal || is_bad(s);
    if (!journal || !has_summary || !summary["ops"].contains(op)) return false;
    for (const auto& [s, n] : summary["ops"][op]["status"].items())
      if (is_bad(s) && n.get<int64_t>() > 0) return true;
    return false;
  }
  bool all(const std::string& op, const std::string& s) const {
    auto it = status_of.find(op);
    return it != status_of.end() && !it->second.empty() && it->second.count(s) == it->second.size();
  }
  bool any(const std::string& op, const std::string& s) const {
    auto it = status_of.find(op);
    return it != status_of.end() && it->second.count(s) > 0;
  }
  bool cause(const std::string& op, const std::string& needle) const {
    auto it = details.find(op);
    if (it == details.end()) return false;
    for (const std::string& d : it->second)
      if (d.find(needle) != std::string::npos) return true;
    return false;
  }
  std::string dump(const std::string& op) const {
    std::map<std::string, int> counts;
    auto st = status_of.find(op);
    if (st != status_of.end())
      for (const std::string& s : st->second) ++counts[s];
    std::string s = op + ":";
    for (const auto& [k, n] : counts) s += " " + k + "=" + std::to_string(n);
    auto it = details.find(op);
    if (it != details.end()) {
      int shown = 0;
      for (const std::string& d : it->second)
        if (!d.empty() && shown++ < 3) s += "\n  " + d.substr(0, 400);
    }
    return s;
  }
};

// Runs `crucible run --suite opinfo` over `backend` for `ops` and reads what it wrote.
CrucibleRun run(const std::string& name, const std::string& backend, const std::string& ops,
                const std::string& extra = "--dtypes f32", const std::string& cwd = "") {
  CrucibleRun r;
  r.folder = temp_dir("adversarial-" + name);
  std::string env = cache_env();
  if (!cwd.empty()) env = "cd " + shell_quote(cwd) + " && " + env;
  Output o = crucible_env(env, "run --suite opinfo --backend " + backend + " --ops " + ops + " " +
                                   extra + " --timeout " + kTimeout +
                                   " --memory-limit 1G --workers 2 -q --out " + r.folder);
  r.status = o.status;
  r.out = o.out;
  std::ifstream f(r.folder + "/results.jsonl");
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty()) continue;
    r.longest_line = std::max(r.longest_line, line.size());
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("op") || !j.contains("status") ||
        !j["status"].is_string() || !j.contains("case_id")) {
      r.bad_lines.push_back(line.substr(0, 200));
      continue;
    }
    if (j.value("record", "case") != "case") continue;
    const std::string op = j["op"].get<std::string>();
    r.status_of[op].insert(j["status"].get<std::string>());
    r.details[op].push_back(j.value("detail", ""));
    r.case_ids.push_back(j["case_id"].dump());
  }
  r.has_summary = std::filesystem::exists(r.folder + "/summary.json");
  if (r.has_summary) r.summary = read_json(r.folder + "/summary.json");
  return r;
}

std::string aten(const std::string& op) { return "aten." + op; }

std::vector<std::string> split(const std::string& ops) {
  std::vector<std::string> v;
  std::stringstream ss(ops);
  std::string op;
  while (std::getline(ss, op, ',')) v.push_back(op);
  return v;
}

// The run completed: it exited normally, wrote its summary with every op of `ops`, and its
// journal holds only well-formed lines, each case once.
void expect_completed(const CrucibleRun& r, const std::string& ops) {
  EXPECT_TRUE(r.status == 0 || r.status == 1) << "exit status " << r.status << "\n" << r.out;
  ASSERT_TRUE(r.has_summary) << r.out;
  for (const std::string& op : split(ops))
    EXPECT_TRUE(r.summary["ops"].contains(aten(op))) << aten(op) << " missing from summary.json";
  EXPECT_TRUE(r.bad_lines.empty()) << "results.jsonl holds lines that are no case of the run: "
                                   << (r.bad_lines.empty() ? "" : r.bad_lines[0]);
  std::set<std::string> ids(r.case_ids.begin(), r.case_ids.end());
  EXPECT_EQ(ids.size(), r.case_ids.size()) << "a case appears twice in results.jsonl";
  EXPECT_EQ(ids.count("\"forged\""), 0u) << "a line the kernel wrote is in results.jsonl";
  if (r.has_summary) {
    int64_t lines = static_cast<int64_t>(r.case_ids.size());
    EXPECT_EQ(r.summary["cases_total"].get<int64_t>(), lines)
        << "summary.json and results.jsonl disagree on the number of cases";
  }
}

void expect_caught(const CrucibleRun& r, const std::string& op) {
  EXPECT_TRUE(r.caught(aten(op))) << "a wrong or cheating kernel was not caught: "
                                  << r.dump(aten(op));
}

void expect_passed(const CrucibleRun& r, const std::string& op) {
  EXPECT_TRUE(r.all_passed(aten(op))) << "a correct kernel did not pass: " << r.dump(aten(op));
}

// ---- forging the verdict ---------------------------------------------------------------------

TEST(Adversarial, ForgingTheVerdictThroughInheritedDescriptors) {
  // abs rewrites the journal it finds among its descriptors and writes forged frames into pipes.
  CrucibleRun r = run("forge-fd", "dir:" + shell_quote(corpus("forge_fd")), "abs.default");
  expect_completed(r, "abs.default");
  expect_caught(r, "abs.default");
}

TEST(Adversarial, ForgingTheVerdictThroughTheDeathNote) {
  CrucibleRun r = run("forge-note", "dir:" + shell_quote(corpus("forge_note")), "sign.default");
  expect_completed(r, "sign.default");
  expect_caught(r, "sign.default");
  // The death note's text is the kernel's: never repeated as crucible's own words.
  for (const std::string& d : r.details["aten.sign.default"]) {
    const size_t at = d.find("FORGED-NOTE");
    EXPECT_TRUE(at == std::string::npos || d.substr(0, at).find("kernel") != std::string::npos)
        << "the kernel's text is reported as crucible's: " << d;
  }
}

TEST(Adversarial, ForgingTheVerdictOnTheConsole) {
  CrucibleRun r =
      run("forge-console", "dir:" + shell_quote(corpus("forge_console")), "sigmoid.default");
  expect_completed(r, "sigmoid.default");
  expect_caught(r, "sigmoid.default");
  // What the kernel prints never appears as a line of crucible's own output.
  EXPECT_EQ(r.out.find("\ncrucible: FORGED"), std::string::npos) << r.out.substr(0, 2000);
  EXPECT_NE(r.out.rfind("crucible: FORGED", 0), 0u) << r.out.substr(0, 2000);
}

TEST(Adversarial, ForgingTheVerdictByHookingTheProcessWrites) {
  const std::string ops = "neg.default,exp.default";
  CrucibleRun r = run("forge-hook", "dir:" + shell_quote(corpus("forge_hook")), ops);
  expect_completed(r, ops);
  expect_caught(r, "neg.default");
  expect_caught(r, "exp.default");
}

TEST(Adversarial, PluginThatRewritesEveryVerdictOfItsProcess) {
  const std::string ops = "relu.default,abs.default";
  CrucibleRun r = run("forge-plugin", "plugin:" + shell_quote(plugin("forge_all")), ops);
  expect_completed(r, ops);
  expect_caught(r, "relu.default");
  expect_caught(r, "abs.default");
}

// ---- the floating-point environment -----------------------------------------------------------

TEST(Adversarial, FloatingPointEnvironmentLeftChanged) {
  // ceil sets the rounding mode upward in its constructor; round next to it is correct.
  for (int attempt = 0; attempt < 2; ++attempt) {
    const std::string ops = "ceil.default,round.default";
    CrucibleRun r = run("fpenv", "dir:" + shell_quote(corpus("fpenv")), ops);
    expect_completed(r, ops);
    expect_caught(r, "ceil.default");
    expect_passed(r, "round.default");
  }
  // add sets flush-to-zero and denormals-are-zero and adds in native f32.
  CrucibleRun r = run("fpenv-ftz", "dir:" + shell_quote(corpus("fpenv_ftz")), "add.Tensor");
  expect_completed(r, "add.Tensor");
  expect_caught(r, "add.Tensor");
}

// ---- timing ------------------------------------------------------------------------------------

// One case of a folder's kernel, judged and timed against the cpu backend: its judged calls
// must be right (the case passes) and its one timing record must be an error saying `cause`.
void expect_timing_error(const std::string& folder, const std::string& op, const std::string& call,
                         const std::string& cause) {
  const std::string out = temp_dir("adversarial-" + folder);
  Output o = crucible_env(cache_env(), "run --op " + op + " --case '" + call +
                                           "' --backend dir:" + shell_quote(corpus(folder)) +
                                           " --perf --baseline cpu --workers 1 -q --history none "
                                           "--out " +
                                           out);
  int cases = 0, timings = 0;
  for (const nlohmann::json& l : read_jsonl(out + "/results.jsonl")) {
    if (l.value("record", "case") == "case") {
      ++cases;
      EXPECT_EQ(l["status"], "passed") << l.dump() << o.out;  // its judged calls are right
    } else {
      ++timings;
      EXPECT_NE(l["error"].get<std::string>().find(cause), std::string::npos) << l.dump() << o.out;
      EXPECT_FALSE(l.contains("speedup") && l["speedup"].get<double>() > 0) << l.dump();
    }
  }
  EXPECT_EQ(cases, 1) << o.out;
  EXPECT_EQ(timings, 1) << o.out;
}

TEST(Adversarial, AThreadLeftAtWorkDuringTheTimedCallsIsATimingError) {
  expect_timing_error("timing_thread", "aten.relu.default", "((T([4, 5], f32),), {})", "thread");
}

// Skips its work when a call repeats the previous one exactly, as the timed calls do.
TEST(Adversarial, SkippingWorkWhileTimedIsATimingError) {
  expect_timing_error("timing_skip", "aten.abs.default", "((T([64, 64], f32),), {})",
                      "skipped or changed its work while it was timed");
}

// The same on an out= argument: the caller's tensor, written by every timed call, which a
// kernel could leave holding the judged call's result.
TEST(Adversarial, SkippingWorkOnAnOutArgumentWhileTimedIsATimingError) {
  expect_timing_error("timing_skip", "aten.abs.out",
                      "((T([64, 64], f32),), {\"out\": T([64, 64], f32)})",
                      "skipped or changed its work while it was timed");
}

// The right kernel of the corpus is timed without error under the same checks.
TEST(Adversarial, ARightKernelIsTimedWithoutErrorUnderTheTimedCallChecks) {
  const std::string out = temp_dir("adversarial-timing-right");
  Output o = crucible_env(cache_env(), "run --suite smoke --ops relu.default --backend dir:" +
                                           shell_quote(corpus("correct")) +
                                           " --perf --baseline cpu --workers 1 -q --history none "
                                           "--out " +
                                           out);
  int timings = 0;
  for (const nlohmann::json& l : read_jsonl(out + "/results.jsonl")) {
    if (l.value("record", "case") != "timing") continue;
    ++timings;
    EXPECT_EQ(l["error"].get<std::string>(), "") << l.dump();
  }
  EXPECT_GT(timings, 0) << o.out;
}

TEST(Adversarial, ReadingTheReferenceFromMemory) {
  CrucibleRun r = run("heapread", "dir:" + shell_quote(corpus("heapread")), "erf.default");
  expect_completed(r, "erf.default");
  expect_caught(r, "erf.default");
}

// ---- side effects on other ops ----------------------------------------------------------------

TEST(Adversarial, AConstructorThatAbortsCostsOnlyItsOwnOp) {
  const std::string ops = "abs.default,relu.default";
  for (int attempt = 0; attempt < 2; ++attempt) {
    CrucibleRun r = run("ctor-abort", "dir:" + shell_quote(corpus("ctor_abort")), ops);
    expect_completed(r, ops);
    expect_caught(r, "abs.default");
    expect_passed(r, "relu.default");
  }
  // Plugin form: the library that aborts when loaded holds a correct relu. The run ends with a
  // clear error or with every case of the library not passed; crucible itself never dies.
  CrucibleRun p =
      run("ctor-abort-plugin", "plugin:" + shell_quote(plugin("ctor_abort")), "relu.default");
  EXPECT_TRUE(p.status == 0 || p.status == 1 || p.status == 2) << p.status << "\n" << p.out;
  if (p.status == 2) {
    EXPECT_NE(p.out.find("ctor_abort"), std::string::npos) << p.out;
  } else {
    expect_completed(p, "relu.default");
    EXPECT_FALSE(p.any("aten.relu.default", "passed")) << p.dump("aten.relu.default");
  }
}

// Two runs of a folder whose kernels leave things behind in their process; the correct kernels
// next to them pass both times, and the attackers are caught both times.
void side_effects(const std::string& folder, const std::vector<std::string>& attackers) {
  std::string ops = "relu.default,floor.default";
  for (const std::string& a : attackers) ops += "," + a;
  std::map<std::string, std::multiset<std::string>> first;
  for (int attempt = 0; attempt < 2; ++attempt) {
    CrucibleRun r = run(folder, "dir:" + shell_quote(corpus(folder)), ops);
    expect_completed(r, ops);
    for (const std::string& a : attackers) expect_caught(r, a);
    expect_passed(r, "relu.default");
    expect_passed(r, "floor.default");
    if (attempt == 0) {
      first = r.status_of;
    } else {
      for (const char* victim : {"aten.relu.default", "aten.floor.default"})
        EXPECT_EQ(first[victim], r.status_of[victim])
            << "verdicts changed between runs: " << victim;
    }
  }
}

TEST(Adversarial, LeaksAndTimersCostOnlyTheirOwnOps) {
  // exp leaks address space until none is left; cos arms alarm(1); tan arms ITIMER_PROF; sin
  // arms a POSIX timer sending SIGUSR2 (each when loaded and on every call).
  side_effects("side_a", {"exp.default", "cos.default", "tan.default", "sin.default"});
}

TEST(Adversarial, ThreadsSignalsAndProcessStateCostOnlyTheirOwnOps) {
  // neg writes into its output for a second after returning; trunc leaves two spinning threads;
  // sigmoid changes signal dispositions; ceil changes the directory, umask and environment.
  side_effects("side_b", {"neg.default", "trunc.default", "sigmoid.default", "ceil.default"});
}

// ---- predictable defences ---------------------------------------------------------------------

TEST(Adversarial, PredictableDefences) {
  // Caches keyed by output pointer, input pointer, leading values and shape; a poison-aware
  // kernel; writes far past the guard zone and into the gaps of a strided self; writes into a
  // Tensor[] input; right first and wrong later, wrong first only; right for small or contiguous
  // inputs only.
  const std::string ops =
      "sin.default,cos.default,exp.default,tanh.default,sigmoid.default,neg.default,add_.Tensor,"
      "mul_.Tensor,cat.default,stack.default,abs.default,relu.default,sqrt.default,log.default";
  CrucibleRun r = run("predictable", "dir:" + shell_quote(corpus("predictable")), ops);
  expect_completed(r, ops);
  for (const std::string& op : split(ops)) expect_caught(r, op);
}

// ---- blind spots of the samples ---------------------------------------------------------------

TEST(Adversarial, SampleBlindSpots) {
  // exp wrong above 80, sin/cos wrong past |x| > 1e4, div truncating integer-valued floats.
  const std::string ops = "exp.default,sin.default,cos.default,div.Tensor";
  CrucibleRun r = run("samples", "dir:" + shell_quote(corpus("samples")), ops);
  expect_completed(r, ops);
  for (const std::string& op : split(ops)) expect_caught(r, op);
  // add saturating instead of wrapping on integers.
  CrucibleRun i = run("samples-int", "dir:" + shell_quote(corpus("samples_int")), "add.Tensor",
                      "--dtypes i8,i16,i32,i64,u8");
  expect_completed(i, "add.Tensor");
  expect_caught(i, "add.Tensor");
}

TEST(Adversarial, RandomOpsWithoutRandomness) {
  // rand with serial correlation, randn ignoring the seed, randperm never shuffling, bernoulli
  // with a fixed 0/1 pattern.
  const std::string ops = "rand.default,randn.default,randperm.default,bernoulli.p";
  CrucibleRun r = run("random", "dir:" + shell_quote(corpus("random")), ops, "");
  expect_completed(r, ops);
  for (const std::string& op : split(ops)) expect_caught(r, op);
}

// ---- the compile step -------------------------------------------------------------------------

TEST(Adversarial, TheCompileStep) {
  const std::string cwd = temp_dir("adversarial-compile-cwd");
  const std::string ops = "relu.default,sign.default,abs.default,neg.default,floor.default";
  CrucibleRun r = run("compile", "dir:" + shell_quote(corpus("compile")), ops, "--dtypes f32", cwd);
  expect_completed(r, ops);
  // #include "/etc/passwd" and "/etc/shadow": no compile, and no line of either file reported.
  EXPECT_TRUE(r.all("aten.relu.default", "compile_error")) << r.dump("aten.relu.default");
  EXPECT_TRUE(r.all("aten.sign.default", "compile_error")) << r.dump("aten.sign.default");
  for (const char* file : {"/etc/passwd", "/etc/shadow"}) {
    std::stringstream text(read_text(file));
    std::string line;
    while (std::getline(text, line)) {
      if (line.size() < 8) continue;
      for (const char* op : {"aten.relu.default", "aten.sign.default"})
        EXPECT_FALSE(r.cause(op, line)) << "a line of " << file << " reached the report of " << op;
      EXPECT_EQ(r.out.find(line), std::string::npos) << "a line of " << file << " was printed";
    }
  }
  // __has_include("/etc/passwd"): the kernel computes -|x| when the compiler can see the file.
  // The sandbox refuses to open it, and the compiler makes that refusal a compile error: the
  // probing kernel never runs with what it learnt (never a wrong-values verdict, never a pass
  // it did not earn).
  EXPECT_TRUE(r.all("aten.abs.default", "compile_error") || r.all("aten.abs.default", "passed"))
      << r.dump("aten.abs.default");
  // Megabytes of diagnostics: a compile error with a bounded detail.
  EXPECT_TRUE(r.all("aten.neg.default", "compile_error")) << r.dump("aten.neg.default");
  EXPECT_LT(r.longest_line, size_t{64} << 10) << "a line of results.jsonl is over 64 KiB";
  // A source named with shell syntax compiles as itself and runs nothing.
  expect_passed(r, "floor.default");
  EXPECT_FALSE(std::filesystem::exists(cwd + "/PWNED-by-kernel-name"));
  EXPECT_FALSE(std::filesystem::exists(std::string(CRUCIBLE_SOURCE_DIR) + "/PWNED-by-kernel-name"));
}

// ---- the worker channel -----------------------------------------------------------------------

TEST(Adversarial, MalformedFrames) {
  // The kernel sprays forged frames into every writable pipe it holds: in its candidate process
  // it holds none of the worker pool's, so nothing reaches the run. Its values are right, and
  // they are what it is judged on; the run completes and the correct floor beside it passes.
  const std::string ops = "relu.default,floor.default";
  CrucibleRun r = run("frames-garbage", "dir:" + shell_quote(corpus("frames_garbage")), ops);
  expect_completed(r, ops);
  expect_passed(r, "relu.default");
  expect_passed(r, "floor.default");
  EXPECT_EQ(r.out.find("malformed"), std::string::npos) << r.out;
}

TEST(Adversarial, ClosedChannels) {
  const std::string ops = "abs.default,floor.default";
  CrucibleRun r = run("frames-close", "dir:" + shell_quote(corpus("frames_close")), ops);
  expect_completed(r, ops);
  expect_caught(r, "abs.default");
  expect_passed(r, "floor.default");
}

// ---- vacuous verdicts -------------------------------------------------------------------------

TEST(Adversarial, VacuousVerdicts) {
  const std::string ops = "relu.default,abs.default";
  CrucibleRun r = run("vacuous", "dir:" + shell_quote(corpus("vacuous")), ops);
  expect_completed(r, ops);
  // Refusing every call: the cases where ATen returns a result are failed.
  expect_caught(r, "relu.default");
  EXPECT_TRUE(r.any("aten.relu.default", "failed")) << r.dump("aten.relu.default");
  // Declining every call: unsupported, never passed.
  EXPECT_TRUE(r.all("aten.abs.default", "unsupported")) << r.dump("aten.abs.default");
  ASSERT_TRUE(r.has_summary);
  EXPECT_FALSE(r.summary["ops"]["aten.abs.default"]["passed"].get<bool>());
  EXPECT_EQ(r.summary["ops_passed"].get<int64_t>(), 0) << r.summary.dump();
}

// ---- correct kernels --------------------------------------------------------------------------

TEST(Adversarial, CorrectKernelsPass) {
  // relu; add_ in place on strided self; empty_like writing nothing; mm accumulating in f32.
  const std::string ops = "relu.default,add_.Tensor,empty_like.default,mm.default";
  CrucibleRun r = run("correct", "dir:" + shell_quote(corpus("correct")), ops);
  expect_completed(r, ops);
  for (const std::string& op : split(ops)) expect_passed(r, op);
}

}  // namespace
}  // namespace crucible::e2e
