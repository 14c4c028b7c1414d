// End-to-end: the real binary on the smoke suite, the faulty backend, kill and resume.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "e2e/cli_helpers.h"

namespace crucible::e2e {
namespace {

TEST(E2ERun, SmokeRefAgainstRefPassesEverythingQuickly) {
  std::string out = temp_dir("smoke");
  auto t0 = std::chrono::steady_clock::now();
  Output o = crucible("run --suite smoke --backend ref --out " + out);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(o.status, 0) << o.out;
#ifdef CRUCIBLE_SANITIZED
  const double limit = 120.0;  // sanitizer builds run several times slower: not a timing run
#else
  const double limit = 10.0;
#endif
  EXPECT_LT(secs, limit) << "the smoke suite must finish in under 10 s (release build)";

  nlohmann::json s = read_json(out + "/summary.json");
  for (const char* key :
       {"suite", "backend", "reference", "baseline", "ops_total", "ops_supported", "ops_passed",
        "cases_total", "cases_passed", "cases_failed", "cases_crashed", "cases_timed_out",
        "cases_unsupported", "correctness_score", "coverage", "perf_score", "perf_at_p", "p"})
    EXPECT_TRUE(s.contains(key)) << key;
  EXPECT_GE(s["ops_total"].get<int>(), 30);
  EXPECT_EQ(s["ops_passed"], s["ops_total"]);
  EXPECT_EQ(s["cases_passed"], s["cases_total"]);
  EXPECT_EQ(s["correctness_score"].get<double>(), 1.0);
  EXPECT_EQ(s["coverage"].get<double>(), 1.0);

  auto lines = read_jsonl(out + "/results.jsonl");
  EXPECT_EQ(static_cast<int>(lines.size()), s["cases_total"].get<int>());
  std::set<std::string> labels;
  for (const auto& l : lines) labels.insert(l["label"].get<std::string>());
  EXPECT_GT(labels.size(), 5u) << "smoke cases must cover several kinds of edge case";

  nlohmann::json m = read_json(out + "/manifest.json");
  for (const char* key :
       {"argv", "version", "git_commit", "seed", "machine", "compiler", "backends"})
    EXPECT_TRUE(m.contains(key)) << key;
  EXPECT_GT(m["machine"]["cores"].get<int>(), 0);
  for (const char* file : {"operator_summary.csv", "SUMMARY.md", "junit.xml"})
    EXPECT_TRUE(std::filesystem::exists(out + "/" + file)) << file;
  EXPECT_NE(read_text(out + "/junit.xml").find("<testsuites"), std::string::npos);
}

// Every faulty kernel gets its own verdict and the run carries on to the end.
TEST(E2ERun, FaultyKernelsGetTheirVerdicts) {
  std::string out = temp_dir("faulty");
  Output o = crucible(
      "run --suite smoke --backend faulty --timeout 1 --memory-limit 1G --out " + out +
      " --ops relu.default,add.Tensor,mul.Tensor,sub.Tensor,neg,exp,tanh,sigmoid,add_.Tensor,"
      "clone,mm");
  ASSERT_EQ(o.status, 1) << o.out;
  auto lines = read_jsonl(out + "/results.jsonl");
  std::map<std::string, std::multiset<std::string>> status;
  std::map<std::string, std::vector<std::string>> details;
  for (const auto& l : lines) {
    status[l["op"]].insert(l["status"].get<std::string>());
    details[l["op"]].push_back(l["detail"].get<std::string>());
  }
  auto has_detail = [&](const std::string& op, const std::string& needle) {
    for (const auto& d : details[op])
      if (d.find(needle) != std::string::npos) return true;
    return false;
  };
  // Identity relu: wrong values on signed inputs and it aliases its input.
  EXPECT_TRUE(status["aten.relu.default"].count("failed"));
  EXPECT_TRUE(has_detail("aten.relu.default", "aliases input"));
  EXPECT_TRUE(has_detail("aten.add.Tensor", "wrong values"));
  EXPECT_TRUE(has_detail("aten.mul.Tensor", "wrong shape"));
  EXPECT_TRUE(has_detail("aten.sub.Tensor", "wrong dtype"));
  EXPECT_TRUE(status["aten.neg.default"].count("crashed"));
  EXPECT_TRUE(has_detail("aten.neg.default", "SIGSEGV"));
  EXPECT_TRUE(status["aten.exp.default"].count("timed_out"));
  EXPECT_TRUE(status["aten.tanh.default"].count("crashed"));
  EXPECT_TRUE(has_detail("aten.tanh.default", "SIGABRT"));
  EXPECT_TRUE(status["aten.sigmoid.default"].count("memory_limit"));
  EXPECT_TRUE(has_detail("aten.add_.Tensor", "mutated argument 'self'"));
  // NaN-only fault: caught by the special-values case, other cases pass.
  EXPECT_TRUE(status["aten.clone.default"].count("failed"));
  EXPECT_TRUE(status["aten.clone.default"].count("passed"));
  EXPECT_TRUE(has_detail("aten.clone.default", "NaN must meet NaN"));
  // Not implemented: unsupported, never passed.
  ASSERT_FALSE(status["aten.mm.default"].empty());
  EXPECT_EQ(status["aten.mm.default"].count("unsupported"), status["aten.mm.default"].size());
  nlohmann::json s = read_json(out + "/summary.json");
  EXPECT_EQ(s["ops_passed"].get<int>(), 0);
  EXPECT_GT(s["cases_crashed"].get<int>(), 0);
  EXPECT_GT(s["cases_timed_out"].get<int>(), 0);
  EXPECT_LT(s["coverage"].get<double>(), 1.0);
  // Every non-passing case carries a reproducer; the reproducer re-runs exactly that case.
  std::string repro;
  for (const auto& l : lines) {
    if (l["status"] == "passed" || l["status"] == "unsupported") continue;
    ASSERT_TRUE(l.contains("reproducer")) << l.dump();
    if (l["op"] == "aten.add.Tensor" && repro.empty()) repro = l["reproducer"];
  }
  ASSERT_FALSE(repro.empty());
  ASSERT_EQ(repro.rfind("crucible run ", 0), 0u);
  std::string out2 = temp_dir("repro");
  Output r = crucible(repro.substr(9) + " --out " + out2);
  EXPECT_EQ(r.status, 1) << r.out;
  auto rl = read_jsonl(out2 + "/results.jsonl");
  ASSERT_EQ(rl.size(), 1u);
  EXPECT_EQ(rl[0]["status"], "failed");
}

// A run killed with SIGKILL loses nothing already written, and --resume finishes it.
TEST(E2ERun, KilledRunResumesWithoutLoss) {
  std::string out = temp_dir("resume");
  std::string cmd = std::string(CRUCIBLE_BINARY) +
                    " run --suite opinfo --backend ref --workers 1 --quiet --out " + out;
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    setpgid(0, 0);
    execl("/bin/sh", "sh", "-c", ("exec " + cmd + " >/dev/null 2>&1").c_str(), nullptr);
    _exit(127);
  }
  // Wait until some results are on disk, then kill the whole run (parent and workers).
  std::string results = out + "/results.jsonl";
  for (int i = 0; i < 400; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    if (std::filesystem::exists(results) && std::filesystem::file_size(results) > 20000) break;
  }
  kill(-pid, SIGKILL);
  kill(pid, SIGKILL);
  int st = 0;
  waitpid(pid, &st, 0);
  std::string before = read_text(results);
  ASSERT_FALSE(before.empty()) << "the run wrote nothing before it was killed";
  size_t complete = before.rfind('\n');
  ASSERT_NE(complete, std::string::npos);
  std::string kept = before.substr(0, complete + 1);

  Output o = crucible("run --resume " + out + " --quiet");
  ASSERT_LE(o.status, 1) << o.out;
  std::string after = read_text(results);
  EXPECT_EQ(after.substr(0, kept.size()), kept) << "resume rewrote earlier results";
  auto lines = read_jsonl(results);
  std::set<std::string> ids;
  for (const auto& l : lines) EXPECT_TRUE(ids.insert(l["case_id"].get<std::string>()).second);
  nlohmann::json s = read_json(out + "/summary.json");
  EXPECT_EQ(static_cast<int>(lines.size()), s["cases_total"].get<int>());
  EXPECT_GT(lines.size(), std::count(kept.begin(), kept.end(), '\n'));
  EXPECT_EQ(s["cases_passed"], s["cases_total"]);
}

TEST(E2ERun, PerfWritesSpeedups) {
  std::string out = temp_dir("perf");
  Output o = crucible(
      "run --suite smoke --backend ref --perf --ops relu,add.Tensor --dtypes f32 --out " + out);
  ASSERT_EQ(o.status, 0) << o.out;
  nlohmann::json s = read_json(out + "/summary.json");
  ASSERT_TRUE(s["perf_score"].is_number()) << s.dump(2);
  EXPECT_GT(s["perf_score"].get<double>(), 0.0);
  EXPECT_TRUE(s["ops"]["aten.relu.default"].contains("speedup"));
  std::string csv = read_text(out + "/operator_summary.csv");
  EXPECT_NE(csv.find("speedup"), std::string::npos);
  int timing = 0, with_bytes = 0;
  for (const auto& l : read_jsonl(out + "/results.jsonl"))
    if (l["record"] == "timing") {
      ++timing;
      EXPECT_GT(l["candidate"]["median_s"].get<double>(), 0);
      EXPECT_GE(l["candidate"]["p90_s"].get<double>(), l["candidate"]["p10_s"].get<double>());
      EXPECT_GE(l["candidate"]["samples"].get<int>(), 5);
      if (l["bytes"].get<double>() > 0) {
        ++with_bytes;
        EXPECT_GT(l["gbps"].get<double>(), 0);
      }
    }
  EXPECT_GT(timing, 0);
  EXPECT_GT(with_bytes, 0);
}

// --profile: profile.json holds the phases and one span per case with its verdict, the console
// says where the time went, and a resumed run may ask for it again.
TEST(E2ERun, ProfileWritesTheTimelineAndSaysWhereTheTimeWent) {
  const std::string out = temp_dir("profile");
  const Output o = crucible(
      "run --suite smoke --backend ref --ops relu,add --workers 2 --profile --history none --out " +
      out);
  ASSERT_EQ(o.status, 0) << o.out;
  for (const char* line : {"profile: plan: ", "profile: correctness: ", "2 workers (2 started",
                           "profile: reports: ", "profile.json"})
    EXPECT_NE(o.out.find(line), std::string::npos) << line << "\n" << o.out;
  const nlohmann::json p = read_json(out + "/profile.json");
  std::set<std::string> phases;
  std::multiset<std::string> statuses;
  std::set<std::string> cases;
  for (const nlohmann::json& e : p["traceEvents"]) {
    if (e["ph"] != "X") continue;
    if (e["pid"] == 0) phases.insert(e["name"].get<std::string>());
    if (e["pid"] == 1 && e["args"].contains("case")) {
      statuses.insert(e["args"]["status"].get<std::string>());
      cases.insert(e["args"]["case"].get<std::string>());
    }
  }
  EXPECT_EQ(phases, (std::set<std::string>{"plan", "correctness", "reports"}));
  const size_t n = read_jsonl(out + "/results.jsonl").size();
  EXPECT_EQ(statuses.size(), n);
  EXPECT_EQ(statuses.count("passed"), n);
  EXPECT_GT(cases.size(), 1u);
  const Output again = crucible("run --resume " + out + " --profile --history none");
  EXPECT_EQ(again.status, 0) << again.out;
  EXPECT_NE(again.out.find("profile: correctness: "), std::string::npos) << again.out;
}

// The commit crucible names (--version, every manifest, the run history) is the one its binary
// was built from, written at build time: one taken at the last configure goes stale with the
// next commit. The build under test is of this checkout's HEAD ("-dirty" where tracked files
// differ from it).
TEST(E2ERun, TheVersionNamesTheCommitTheBinaryWasBuiltFrom) {
  const std::string src = CRUCIBLE_SOURCE_DIR;
  std::string head;
  if (FILE* p = popen(
          ("git -C " + shell_quote(src) + " rev-parse --short=12 HEAD 2>/dev/null").c_str(), "r")) {
    char buf[64] = {};
    while (fgets(buf, sizeof buf, p)) head += buf;
    pclose(p);
  }
  while (!head.empty() && (head.back() == '\n' || head.back() == ' ')) head.pop_back();
  const Output o = crucible("--version");
  ASSERT_EQ(o.status, 0) << o.out;
  if (head.empty()) {
    EXPECT_NE(o.out.find("(unknown)"), std::string::npos) << o.out;
    return;
  }
  EXPECT_TRUE(o.out.find("(" + head + ")") != std::string::npos ||
              o.out.find("(" + head + "-dirty)") != std::string::npos)
      << o.out << " HEAD " << head;
}

}  // namespace
}  // namespace crucible::e2e
