// End-to-end: the run folder is a journal a killed, resumed, raced or tampered-with run cannot
// corrupt, and workers that die idle or send junk cost no more than their own case.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "e2e/cli_helpers.h"

namespace crucible::e2e {
namespace {

namespace fs = std::filesystem;

// Starts `crucible <args>` in its own process group (its output to `log`); returns its pid.
pid_t spawn_crucible(const std::string& args, const std::string& log = "/dev/null") {
  std::string cmd =
      "exec " + std::string(CRUCIBLE_BINARY) + " " + args + " >" + shell_quote(log) + " 2>&1";
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    execl("/bin/sh", "sh", "-c", cmd.c_str(), nullptr);
    _exit(127);
  }
  return pid;
}

// Waits for `pid` at most `seconds`; returns its wait status, or -1 (then it is killed).
int wait_for(pid_t pid, double seconds) {
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  int st = 0;
  while (std::chrono::steady_clock::now() < end) {
    pid_t r = waitpid(pid, &st, WNOHANG);
    if (r == pid) return st;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(-pid, SIGKILL);
  waitpid(pid, &st, 0);
  return -1;
}

std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string stat = read_text(e.path().string() + "/stat");
    size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream ss(stat.substr(close + 2));
    char state;
    pid_t ppid = 0;
    ss >> state >> ppid;
    if (ppid == parent) out.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return out;
}

size_t line_count(const std::string& path) {
  std::string t = read_text(path);
  return static_cast<size_t>(std::count(t.begin(), t.end(), '\n'));
}

// A worker killed while it waits for work (issue: the parent died of SIGPIPE feeding it):
// no case is charged, the run completes with its summary.
TEST(E2EJournal, AWorkerKilledWhileIdleCostsNoCaseAndTheRunCompletes) {
  std::string dir = temp_dir("idle-kill");
  std::string trace = dir + "/t.txt";
  {
    std::ofstream f(trace);
    f << "Operator: aten.exp.default\ncnt: 1, ((T([4], f32),), {})\n"
      << "Operator: aten.clone.default\n";
    for (int k = 1; k <= 60; ++k) f << "cnt: 1, ((T([" << k << "], f32),), {})\n";
  }
  std::string out = dir + "/run";
  // Worker 1 hangs on exp (the faulty backend) with clone cases queued behind it; worker 2 runs
  // the other clone cases and then waits for work.
  pid_t pid = spawn_crucible("run --suite traces:" + trace +
                             " --backend faulty --workers 2 --timeout 6 --out " + out);
  ASSERT_GT(pid, 0);
  pid_t idle = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!idle && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (!fs::exists(out + "/results.jsonl") || line_count(out + "/results.jsonl") < 40) continue;
    std::vector<pid_t> workers = children_of(pid);
    if (workers.size() != 2) continue;
    // The idle worker waits in read() (system call 0 on x86-64); the other in pause().
    for (pid_t w : workers) {
      std::string sc = read_text("/proc/" + std::to_string(w) + "/syscall");
      std::string wchan = read_text("/proc/" + std::to_string(w) + "/wchan");
      if (sc.rfind("0 ", 0) == 0 || wchan.find("pipe") != std::string::npos) idle = w;
    }
  }
  ASSERT_GT(idle, 0) << "no idle worker found";
  kill(idle, SIGKILL);
  int st = wait_for(pid, 30);
  ASSERT_NE(st, -1) << "the run did not finish";
  ASSERT_TRUE(WIFEXITED(st)) << "the run died of signal " << WTERMSIG(st);
  EXPECT_EQ(WEXITSTATUS(st), 1);  // exp timed out
  auto lines = read_jsonl(out + "/results.jsonl");
  ASSERT_EQ(lines.size(), 61u);
  std::set<std::string> ids;
  for (const auto& l : lines) {
    ids.insert(l["case_id"].get<std::string>());
    if (l["op"] == "aten.exp.default")
      EXPECT_EQ(l["status"], "timed_out") << l.dump();
    else
      EXPECT_EQ(l["status"], "passed") << l.dump();
  }
  EXPECT_EQ(ids.size(), 61u);
  nlohmann::json s = read_json(out + "/summary.json");
  EXPECT_EQ(s["cases_total"], 61);
  EXPECT_EQ(s["cases_crashed"], 0);
}

// A kernel that writes a forged report into every pipe it can reach: it runs in a candidate
// process, which holds no pipe of the worker pool, so no forged frame reaches the run; its cases
// are judged on their values, and the run goes on. (A malformed frame that does reach the parent
// is that case's verdict: tests/eval/test_workers.cpp.)
TEST(E2EJournal, AForgedWorkerFrameReachesNoWorkerPipe) {
  std::string dir = temp_dir("forged-frame");
  fs::create_directories(dir + "/kernels/relu.default");
  fs::create_directories(dir + "/kernels/neg.default");
  std::ofstream(dir + "/kernels/relu.default/relu.default.cpp") << R"(
#include <crucible/kernel.hpp>
#include <fcntl.h>
#include <unistd.h>
namespace ck = crucible::kernel;
extern "C" int32_t relu_kernel_impl(crucible_call* call) {
  for (int fd = 3; fd < 256; ++fd) {
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || (fl & O_ACCMODE) != O_WRONLY) continue;
    uint64_t idx = 123456789;
    uint32_t len = 7;
    if (write(fd, &idx, 8) != 8 || write(fd, &len, 4) != 4 || write(fd, "garbage", 7) != 7)
      continue;
  }
  ck::Call k(call);
  ck::Tensor x = k.tensor(0), out = k.output(0);
  ck::for_each(out.shape(), {x.strides(), out.strides()}, [&](const int64_t* off) {
    double v = x.load(off[0]);
    out.store(off[1], v < 0 ? 0.0 : v);
  });
  return CRUCIBLE_OK;
}
)";
  std::ofstream(dir + "/kernels/neg.default/neg.default.cpp") << R"(
#include <crucible/kernel.hpp>
namespace ck = crucible::kernel;
extern "C" int32_t neg_kernel_impl(crucible_call* call) {
  ck::Call k(call);
  ck::Tensor x = k.tensor(0), out = k.output(0);
  ck::for_each(out.shape(), {x.strides(), out.strides()},
               [&](const int64_t* off) { out.store(off[1], -x.load(off[0])); });
  return CRUCIBLE_OK;
}
)";
  std::string out = dir + "/run";
  Output o = crucible_env(
      "CRUCIBLE_KERNEL_CACHE=" + dir + "/cache",
      "run --suite smoke --dtypes f32 --backend dir:" + dir +
          "/kernels --ops relu.default,neg.default --workers 1 --timeout 20 -q --out " + out);
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_EQ(o.out.find("crucible: error"), std::string::npos) << o.out;
  auto lines = read_jsonl(out + "/results.jsonl");
  int relu = 0, neg = 0;
  for (const auto& l : lines) {
    EXPECT_EQ(l["status"], "passed") << l.dump();
    if (l["op"] == "aten.relu.default") ++relu;
    if (l["op"] == "aten.neg.default") ++neg;
  }
  EXPECT_GT(relu, 0);
  EXPECT_GT(neg, 0);
  nlohmann::json s = read_json(out + "/summary.json");
  EXPECT_EQ(s["cases_total"].get<size_t>(), lines.size());
}

void expect_refused(const Output& o, const std::string& needle) {
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_NE(o.out.find("crucible: error: "), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("internal error"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find(needle), std::string::npos) << o.out;
}

// A finished small run to tamper with.
std::string finished_run(const std::string& name) {
  std::string out = temp_dir(name);
  Output o = crucible("run --suite smoke --backend ref --ops relu.default,neg -q --out " + out);
  EXPECT_EQ(o.status, 0) << o.out;
  return out;
}

TEST(E2EJournal, ASecondRunOrResumeOfABusyFolderIsRefusedAtOnce) {
  std::string dir = temp_dir("locked");
  std::string out = dir + "/run";
  // A run that stays busy: one quick case, then calls that hang on the faulty backend.
  std::ofstream(dir + "/t.txt") << "Operator: aten.clone.default\n"
                                   "cnt: 1, ((T([4], f32),), {})\n"
                                   "Operator: aten.exp.default\n"
                                   "cnt: 1, ((T([1], f32),), {})\n"
                                   "cnt: 1, ((T([2], f32),), {})\n"
                                   "cnt: 1, ((T([3], f32),), {})\n"
                                   "cnt: 1, ((T([4], f32),), {})\n";
  pid_t pid = spawn_crucible("run --suite traces:" + dir +
                             "/t.txt --backend faulty --workers 1 --timeout 5 -q --out " + out);
  ASSERT_GT(pid, 0);
  for (int i = 0; i < 400 && !fs::exists(out + "/results.jsonl"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  ASSERT_TRUE(fs::exists(out + "/results.jsonl"));
  auto t0 = std::chrono::steady_clock::now();
  Output resume = crucible("run --resume " + out + " -q");
  Output again = crucible("run --suite smoke --backend ref -q --out " + out);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  bool still_running = waitpid(pid, nullptr, WNOHANG) == 0;
  kill(-pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  ASSERT_TRUE(still_running) << "the first run ended before the others were tried";
  expect_refused(resume, "is in use by another crucible run");
  expect_refused(again, "is in use by another crucible run");
  EXPECT_LT(secs, 10) << "refused at once, not after waiting";
  // Once the first run is gone, so is its lock: the folder is refused for what it holds.
  Output later = crucible("run --suite smoke --backend ref -q --out " + out);
  expect_refused(later, "already holds results.jsonl");
  EXPECT_EQ(later.out.find("in use"), std::string::npos) << later.out;
}

TEST(E2EJournal, ManifestAndSummariesAreReplacedNotRewrittenInPlace) {
  std::string out = finished_run("atomic");
  auto inode = [](const std::string& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 ? st.st_ino : 0;
  };
  std::map<std::string, ino_t> before;
  for (const char* f :
       {"manifest.json", "summary.json", "SUMMARY.md", "operator_summary.csv", "junit.xml"})
    before[f] = inode(out + "/" + f);
  Output o = crucible("run --resume " + out + " -q");
  ASSERT_EQ(o.status, 0) << o.out;
  for (const auto& [f, ino] : before) {
    EXPECT_NE(ino, 0u) << f;
    EXPECT_NE(inode(out + "/" + f), ino) << f << " was rewritten in place (a kill then tears it)";
  }
  for (const auto& e : fs::directory_iterator(out))
    EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << e.path();
  nlohmann::json m = read_json(out + "/manifest.json");
  EXPECT_EQ(m["resumed"].size(), 1u);
}

TEST(E2EJournal, ResumeCountsEachCaseOnce) {
  std::string out = finished_run("dedup");
  nlohmann::json s0 = read_json(out + "/summary.json");
  std::string lines = read_text(out + "/results.jsonl");
  std::ofstream(out + "/results.jsonl", std::ios::app) << lines;  // every line twice
  Output o = crucible("run --resume " + out + " -q");
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_NE(o.out.find("duplicate record(s) ignored"), std::string::npos) << o.out;
  nlohmann::json s = read_json(out + "/summary.json");
  EXPECT_EQ(s["cases_total"], s0["cases_total"]);
  EXPECT_EQ(s["cases_passed"], s0["cases_passed"]);
}

// --resume reads every line: one that parses but does not belong is refused with its place.
TEST(E2EJournal, ResumeRefusesLinesThatDoNotBelongWithFileAndLine) {
  std::string out = finished_run("badline");
  const std::string results = out + "/results.jsonl";
  const std::string good = read_text(results);
  const size_t n = line_count(results);
  nlohmann::json first = read_jsonl(results)[0];
  auto with_line = [&](const std::string& line) {
    std::ofstream(results, std::ios::trunc) << good << line << "\n";
    return crucible("run --resume " + out + " -q");
  };
  const std::string place = results + ":" + std::to_string(n + 1) + ": ";
  expect_refused(with_line("{}"), place + "not a crucible record");
  expect_refused(with_line("[1, 2]"), place + "not a crucible record");
  expect_refused(with_line(R"({"record": "verdict", "case_id": "x"})"), place + "unknown record");
  nlohmann::json j = first;
  j["case_id"] = "0123456789abcdef";
  expect_refused(with_line(j.dump()), place + "case 0123456789abcdef is not a case of this run");
  j = first;
  j["status"] = "great";
  expect_refused(with_line(j.dump()), place + "unknown status \"great\"");
  j = first;
  j["seed"] = "seven";
  expect_refused(with_line(j.dump()), place + "the field \"seed\"");
  j = first;
  j.erase("status");
  expect_refused(with_line(j.dump()), place + "the field \"status\" is missing");
  j = first;
  j["op"] = "aten.neg.default";
  expect_refused(with_line(j.dump()), place + "case " + first["case_id"].get<std::string>() +
                                          " is a case of aten.relu.default, not of "
                                          "aten.neg.default");
  j = {{"record", "timing"}, {"case_id", first["case_id"]}, {"candidate", 3}};
  expect_refused(with_line(j.dump()), place + "the field \"candidate\" is not an object");
  // The one damage tolerated: a torn last line, cut off.
  std::ofstream(results, std::ios::trunc) << good << R"({"record": "case", "case_id": "ab)";
  Output o = crucible("run --resume " + out + " -q");
  EXPECT_EQ(o.status, 0) << o.out;
  EXPECT_EQ(read_text(results), good);
}

TEST(E2EJournal, ResumeOfADamagedFolderNamesTheFile) {
  std::string out = finished_run("badmanifest");
  nlohmann::json m = read_json(out + "/manifest.json");
  nlohmann::json bad = m;
  bad["argv"] = {1, 2};
  std::ofstream(out + "/manifest.json", std::ios::trunc) << bad.dump();
  expect_refused(crucible("run --resume " + out), out + "/manifest.json");
  std::ofstream(out + "/manifest.json", std::ios::trunc) << "[1, 2]";
  expect_refused(crucible("run --resume " + out), out + "/manifest.json");
  bad = m;
  bad["resumed"] = 7;
  std::ofstream(out + "/manifest.json", std::ios::trunc) << bad.dump();
  expect_refused(crucible("run --resume " + out), "the field \"resumed\" is not a list");
  std::ofstream(out + "/manifest.json", std::ios::trunc) << m.dump();
  fs::remove(out + "/results.jsonl");
  fs::create_directories(out + "/results.jsonl");
  expect_refused(crucible("run --resume " + out), out + "/results.jsonl: not a regular file");
  expect_refused(crucible("run --resume " + out + "/nowhere"), "--resume " + out + "/nowhere");
}

// An error outside the guarded steps of a case (the inputs' copies over the memory limit) is
// that case's verdict, with the limit it met; never crucible's own error on the console.
TEST(E2EJournal, AnErrorEscapingTheCaseIsItsVerdict) {
  std::string out = temp_dir("escape");
  Output o = crucible("run --memory-limit 2G --workers 1 --op aten.relu.default --case " +
                      shell_quote("((T([100000000], f64),), {})") + " --out " + out);
  EXPECT_EQ(o.status, 1) << o.out;
  EXPECT_EQ(o.out.find("crucible: error"), std::string::npos) << o.out;
  auto lines = read_jsonl(out + "/results.jsonl");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["status"], "memory_limit") << lines[0].dump();
  EXPECT_NE(lines[0]["detail"].get<std::string>().find("--memory-limit 2G"), std::string::npos)
      << lines[0].dump();
}

// A timing worker killed mid-case: the timing error is in the console, SUMMARY.md and
// summary.json (the op's timing incomplete), and the run's exit status is 1.
TEST(E2EJournal, AKilledTimingWorkerIsReportedAndFailsTheRun) {
  std::string dir = temp_dir("timing-kill");
  std::string out = dir + "/run", log = dir + "/log.txt";
  pid_t pid = spawn_crucible(
      "run --suite smoke --backend ref --perf --ops relu,neg,abs,exp,add.Tensor,mul.Tensor "
      "--dtypes f32 --workers 1 --out " +
          out,
      log);
  ASSERT_GT(pid, 0);
  auto has_timing_error = [&] {
    if (!fs::exists(out + "/results.jsonl")) return false;
    for (const auto& l : read_jsonl(out + "/results.jsonl"))
      if (l["record"] == "timing" && !l["error"].get<std::string>().empty()) return true;
    return false;
  };
  bool timing = false, killed = false;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline && waitpid(pid, nullptr, WNOHANG) == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    if (!timing) {
      timing = read_text(out + "/results.jsonl").find("\"record\":\"timing\"") != std::string::npos;
      continue;
    }
    if (killed && has_timing_error()) break;
    for (pid_t w : children_of(pid)) {
      kill(w, SIGKILL);
      killed = true;
    }
  }
  ASSERT_TRUE(killed) << "the timing phase was not seen";
  int st = wait_for(pid, 300);
  ASSERT_NE(st, -1);
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 1) << read_text(log);
  ASSERT_TRUE(has_timing_error());
  std::string console = read_text(log);
  EXPECT_NE(console.find("timing errors: "), std::string::npos) << console;
  EXPECT_NE(console.find("killed by SIGKILL"), std::string::npos) << console;
  EXPECT_NE(read_text(out + "/SUMMARY.md").find("## Timing errors"), std::string::npos);
  nlohmann::json s = read_json(out + "/summary.json");
  EXPECT_GE(s["timing_errors"].get<int>(), 1);
  int incomplete = 0;
  for (const auto& [op, o] : s["ops"].items()) incomplete += o.value("timing_incomplete", false);
  EXPECT_GE(incomplete, 1) << s["ops"].dump(1);
  EXPECT_NE(read_text(out + "/operator_summary.csv").find("timing_errors"), std::string::npos);
}

// With the machine loaded, the timings come with a warning and the load is recorded; every
// timing record carries its spread and whether its speed-up is reliable.
TEST(E2EJournal, TimingOnABusyMachineWarns) {
  const long cores = std::max(1L, sysconf(_SC_NPROCESSORS_ONLN));
  std::vector<pid_t> hogs;
  for (long i = 0; i < 3 * cores + 1; ++i) {
    pid_t h = fork();
    if (h == 0) {
      alarm(120);
      volatile unsigned long x = 0;
      for (;;) x = static_cast<unsigned long>(x) + 1;
    }
    hogs.push_back(h);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  std::string out = temp_dir("busy");
  Output o =
      crucible("run --suite smoke --backend ref --perf --ops relu --dtypes f32 --out " + out);
  for (pid_t h : hogs) kill(h, SIGKILL);
  for (pid_t h : hogs) waitpid(h, nullptr, 0);
  ASSERT_LE(o.status, 1) << o.out;
  EXPECT_NE(o.out.find("warning: the machine was busy around the timing"), std::string::npos)
      << o.out;
  nlohmann::json s = read_json(out + "/summary.json");
  EXPECT_EQ(s["timing_load"]["busy"], true) << s["timing_load"];
  EXPECT_GT(s["timing_load"]["runnable_before"].get<int>(), cores);
  EXPECT_NE(read_text(out + "/SUMMARY.md").find("the machine was busy"), std::string::npos);
  int timing = 0;
  for (const auto& l : read_jsonl(out + "/results.jsonl")) {
    if (l["record"] != "timing") continue;
    ++timing;
    EXPECT_TRUE(l["reliable"].is_boolean()) << l.dump();
    EXPECT_TRUE(l["candidate_spread"].is_number()) << l.dump();
    if (!l["reliable"].get<bool>()) {
      EXPECT_FALSE(l["unreliable_reason"].get<std::string>().empty());
    }
  }
  EXPECT_GT(timing, 0);
}

}  // namespace
}  // namespace crucible::e2e
