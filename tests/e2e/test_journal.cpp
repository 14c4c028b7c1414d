// End-to-end: the run folder is a journal a killed, resumed, raced or tampered-with run cannot
// corrupt, and workers that die idle or send junk cost no more than their own case.
#include <signal.h>
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

// Starts `crucible <args>` in its own process group; returns its pid.
pid_t spawn_crucible(const std::string& args) {
  std::string cmd = "exec " + std::string(CRUCIBLE_BINARY) + " " + args + " >/dev/null 2>&1";
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
                             " --backend faulty --workers 2 --timeout 4 --out " + out);
  ASSERT_GT(pid, 0);
  pid_t idle = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
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

// A kernel that writes a forged report into every pipe it can reach: that case is judged by
// the frame (a malformed report), the worker is retired, the run goes on.
TEST(E2EJournal, AForgedWorkerFrameIsThatCasesVerdictAndTheRunGoesOn) {
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
    out.store(off[1], v > 0 ? v : 0);
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
  ASSERT_EQ(o.status, 1) << o.out;
  EXPECT_EQ(o.out.find("crucible: error"), std::string::npos) << o.out;
  auto lines = read_jsonl(out + "/results.jsonl");
  int relu = 0, neg = 0;
  for (const auto& l : lines) {
    if (l["op"] == "aten.relu.default") {
      ++relu;
      EXPECT_EQ(l["status"], "crashed") << l.dump();
      EXPECT_NE(l["detail"].get<std::string>().find("the worker sent a malformed report"),
                std::string::npos)
          << l.dump();
    } else if (l["op"] == "aten.neg.default") {
      ++neg;
      EXPECT_EQ(l["status"], "passed") << l.dump();
    }
  }
  EXPECT_GT(relu, 0);
  EXPECT_GT(neg, 0);
  nlohmann::json s = read_json(out + "/summary.json");
  EXPECT_EQ(s["cases_total"].get<size_t>(), lines.size());
}

}  // namespace
}  // namespace crucible::e2e
