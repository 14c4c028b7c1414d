// The worker sandbox: what a sandboxed worker may and may not do, and how a blocked call is
// reported.
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "crucible/eval/workers.h"
#include "sandbox/death_note.h"
#include "sandbox/sandbox.h"

namespace crucible {
namespace {

// Runs each job in a fresh sandboxed worker; returns index -> payload or "FAILED: <detail>".
std::map<size_t, std::string> run_sandboxed(const std::vector<size_t>& jobs,
                                            std::function<std::string(size_t)> job,
                                            double cpu_seconds = 0,
                                            std::function<std::string()> between = {},
                                            const std::string& scratch_root = "",
                                            const std::string& jit_cache_key = "") {
  std::optional<ScratchRoot> own;
  SandboxOptions so;
  so.scratch_root = scratch_root.empty() ? own.emplace().path() : scratch_root;
  so.cpu_seconds_per_job = cpu_seconds;
  WorkerOptions wo;
  wo.workers = 1;
  wo.timeout_s = 20;
  wo.max_batch = 1;
  wo.on_worker_start = [&so, &between, &jit_cache_key] {
    if (!jit_cache_key.empty()) share_jit_cache_in_sandbox(jit_cache_key);
    std::string why = enter_sandbox(so, between);
    if (!why.empty()) {
      set_worker_death_note(why.c_str());
      _exit(3);
    }
  };
  std::map<size_t, std::string> out;
  WorkerPool pool(wo, [&](size_t i) {
    sandbox_job_started();
    return job(i);
  });
  pool.run(
      jobs, [&](size_t i, const std::string& payload) { out[i] = payload; },
      [&](size_t i, const JobFailure& f) { out[i] = "FAILED: " + f.detail; });
  return out;
}

TEST(Sandbox, ProbeSucceedsAndDescribesItself) {
  ScratchRoot scratch;
  SandboxOptions so;
  so.scratch_root = scratch.path();
  EXPECT_EQ(probe_sandbox(so), "");
  EXPECT_NE(sandbox_description().find("seccomp"), std::string::npos) << sandbox_description();
  SandboxOptions none;
  EXPECT_NE(probe_sandbox(none), "") << "a sandbox without a scratch folder must be refused";
}

// A local socket fails with EACCES and the process lives on: the C library's user lookups try
// nscd's socket first (glog's static initialiser, loaded by `import torch`, does one) and fall
// back to the files. Every other family, and connect() on a socket made before, is trapped.
TEST(Sandbox, ALocalSocketFailsWithEaccesAndUserLookupsFallBackOtherFamiliesAreTrapped) {
  auto out = run_sandboxed({0, 1, 2, 3}, [](size_t i) -> std::string {
    switch (i) {
      case 0: {
        const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        return fmt::format("socket {} {}", fd, fd < 0 ? std::strerror(errno) : "");
      }
      case 1: {
        struct passwd pw {};
        struct passwd* got = nullptr;
        char buf[4096];
        const int rc = getpwuid_r(getuid(), &pw, buf, sizeof buf, &got);
        return fmt::format("getpwuid_r {} {}", rc, got ? got->pw_name : "(none)");
      }
      case 2:
        return "socket " + std::to_string(socket(AF_INET6, SOCK_DGRAM, 0));
      default:
        return "socket " + std::to_string(socket(AF_NETLINK, SOCK_RAW, 0));
    }
  });
  EXPECT_EQ(out[0], std::string("socket -1 ") + std::strerror(EACCES));
  struct passwd* me = getpwuid(getuid());
  ASSERT_NE(me, nullptr);
  EXPECT_EQ(out[1], std::string("getpwuid_r 0 ") + me->pw_name);
  for (size_t i : {2, 3})
    EXPECT_NE(out[i].find("sandbox: blocked socket() (network access)"), std::string::npos)
        << out[i];
}

TEST(Sandbox, BlocksNetworkProcessesAndSignalsToOthersAndSaysWhich) {
  auto out = run_sandboxed({0, 1, 2, 3}, [](size_t i) -> std::string {
    switch (i) {
      case 0:
        return "socket " + std::to_string(socket(AF_INET, SOCK_STREAM, 0));
      case 1:
        return "fork " + std::to_string(fork());
      case 2:
        return "kill " + std::to_string(kill(getppid(), SIGTERM));
      default:
        return "system " + std::to_string(std::system("true"));
    }
  });
  EXPECT_NE(out[0].find("killed by SIGSYS"), std::string::npos) << out[0];
  EXPECT_NE(out[0].find("sandbox: blocked socket() (network access)"), std::string::npos) << out[0];
  EXPECT_NE(out[1].find("sandbox: blocked clone() (starting a program)"), std::string::npos)
      << out[1];
  EXPECT_NE(out[2].find("sandbox: blocked kill() (touching another process)"), std::string::npos)
      << out[2];
  // system() blocks signals around its clone: the worker dies of SIGSYS without a note.
  EXPECT_NE(out[3].find("killed by SIGSYS"), std::string::npos) << out[3];
}

TEST(Sandbox, ThreadsMemoryAndTheScratchFolderStillWork) {
  auto out = run_sandboxed({0, 1, 2}, [](size_t i) -> std::string {
    if (i == 0) {
      int sum = 0;
      std::thread a([&] { sum += 20; });
      a.join();
      std::thread b([&] { sum += 22; });
      b.join();
      return "threads " + std::to_string(sum);
    }
    if (i == 1) {
      std::vector<char> big(size_t{64} << 20, 1);
      return "memory " + std::to_string(big[12345]);
    }
    const char* tmp = std::getenv("TMPDIR");
    std::string path = std::string(tmp ? tmp : "") + "/scratch.txt";
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    bool wrote = fd >= 0 && write(fd, "ok", 2) == 2;
    if (fd >= 0) close(fd);
    return std::string("scratch ") + (wrote ? "written" : std::strerror(errno));
  });
  EXPECT_EQ(out[0], "threads 42");
  EXPECT_EQ(out[1], "memory 1");
  if (landlock_abi_version() > 0)
    EXPECT_EQ(out[2], "scratch written");
  else
    EXPECT_NE(out[2].find("sandbox: blocked"), std::string::npos) << out[2];
}

TEST(Sandbox, RefusesWritesOutsideTheScratchFolder) {
  const std::string outside = (std::filesystem::temp_directory_path() /
                               ("crucible-sandbox-test-" + std::to_string(getpid())))
                                  .string();
  std::filesystem::remove(outside);
  auto out = run_sandboxed({0}, [&](size_t) -> std::string {
    int fd = open(outside.c_str(), O_WRONLY | O_CREAT, 0644);
    if (fd >= 0) {
      close(fd);
      return "created";
    }
    return std::string("refused: ") + std::strerror(errno);
  });
  if (landlock_abi_version() > 0)
    EXPECT_EQ(out[0], std::string("refused: ") + std::strerror(EACCES));
  else
    EXPECT_NE(out[0].find("sandbox: blocked open"), std::string::npos) << out[0];
  EXPECT_FALSE(std::filesystem::exists(outside));
  std::filesystem::remove(outside);
}

// Writes `text` to `file` (a path below $CRUCIBLE_JIT_CACHE when relative); "written" or why not.
std::string write_file(const std::string& file, const std::string& text) {
  const char* cache = std::getenv("CRUCIBLE_JIT_CACHE");
  const std::string path = file[0] == '/' ? file : std::string(cache ? cache : "?") + "/" + file;
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return std::string("refused: ") + std::strerror(errno);
  const bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  return ok ? "written" : "short write";
}

std::string read_file(const std::string& file) {
  const char* cache = std::getenv("CRUCIBLE_JIT_CACHE");
  const std::string path = std::string(cache ? cache : "?") + "/" + file;
  char buf[64] = {};
  int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return std::string("cannot read: ") + std::strerror(errno);
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  return std::string(buf, n > 0 ? static_cast<size_t>(n) : 0);
}

// A JIT compiler's cache (Triton's) is kept for the same kernel's later processes (another
// worker, the timing phase) and closed to every other op's and backend's processes.
TEST(Sandbox, AJitCacheIsSharedByOneKernelsProcessesAndClosedToOthers) {
  ScratchRoot scratch;
  const std::string relu = jit_cache_key("dir:k", "relu.default");
  const std::string add = jit_cache_key("dir:k", "add.Tensor");
  EXPECT_EQ(relu, "dir_k--relu.default");
  EXPECT_EQ(jit_cache_key("../..", ".."), ".._..--..");  // one folder name, never a path
  const std::string deep = jit_cache_key("dir:" + std::string(300, 'k'), "relu.default");
  EXPECT_LE(deep.size(), 200u) << "a folder name has at most 255 bytes";
  EXPECT_NE(deep, jit_cache_key("dir:" + std::string(301, 'k'), "relu.default"));
  auto first = run_sandboxed(
      {0}, [](size_t) { return write_file("compiled.bin", "relu kernel"); }, 0, {}, scratch.path(),
      relu);
  auto later = run_sandboxed(
      {0}, [](size_t) { return read_file("compiled.bin"); }, 0, {}, scratch.path(), relu);
  const std::string relu_file = scratch.path() + "/jit-cache/" + relu + "/compiled.bin";
  auto other = run_sandboxed(
      {0, 1},
      [&](size_t i) {
        return i == 0 ? write_file(relu_file, "poisoned") : read_file("compiled.bin");
      },
      0, {}, scratch.path(), add);
  auto no_key = run_sandboxed(
      {0}, [](size_t) { return std::string(std::getenv("CRUCIBLE_JIT_CACHE") ? "set" : "unset"); },
      0, {}, scratch.path());
  EXPECT_EQ(no_key[0], "unset");
  if (landlock_abi_version() > 0) {
    EXPECT_EQ(first[0], "written");
    EXPECT_EQ(later[0], "relu kernel") << "a later process of the same kernel sees the cache";
    EXPECT_EQ(other[0], std::string("refused: ") + std::strerror(EACCES))
        << "another op's process must not write into relu's cache";
    EXPECT_EQ(other[1], std::string("cannot read: ") + std::strerror(ENOENT))
        << "another op's cache is its own folder";
  } else {
    EXPECT_NE(first[0].find("sandbox: blocked open"), std::string::npos) << first[0];
    EXPECT_NE(other[0].find("sandbox: blocked open"), std::string::npos) << other[0];
  }
}

TEST(Sandbox, ASandboxedProcessMayNameItsOwnThreads) {
  // The CUDA driver names the threads it starts through /proc/self/task/<tid>/comm; cuInit fails
  // when that write is refused. Writes elsewhere under /proc stay refused.
  auto out = run_sandboxed({0}, [](size_t) -> std::string {
    std::string result;
    std::thread t([&] {
      const std::string comm =
          "/proc/self/task/" + std::to_string(static_cast<long>(syscall(SYS_gettid))) + "/comm";
      int fd = open(comm.c_str(), O_WRONLY | O_TRUNC);  // as the CUDA driver opens it
      bool named = fd >= 0 && write(fd, "crucible-drv", 12) == 12;
      if (fd >= 0) close(fd);
      result = named ? "named" : std::string("refused: ") + std::strerror(errno);
    });
    t.join();
    int fd = open("/proc/self/oom_score_adj", O_WRONLY);
    if (fd >= 0) close(fd);
    return result + (fd >= 0 ? ", oom_score_adj opened" : ", oom_score_adj refused");
  });
  if (landlock_abi_version() > 0)
    EXPECT_EQ(out[0], "named, oom_score_adj refused");
  else
    EXPECT_NE(out[0].find("sandbox: blocked"), std::string::npos) << out[0];
}

// What a device runtime started between Landlock's rules and the seccomp filter (CUDA binds a
// local socket while it starts) may do: open its socket there; its threads stay under both
// layers afterwards, so a thread it started cannot write outside the scratch folder or open a
// socket once the filter is in.
struct BetweenThread {
  std::mutex m;
  std::condition_variable cv;
  std::string command, answer;
  int socket_fd = -1;
};
BetweenThread* g_between = nullptr;

std::string start_runtime_between() {
  g_between = new BetweenThread;
  g_between->socket_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  std::thread([b = g_between] {
    std::unique_lock<std::mutex> lock(b->m);
    for (;;) {
      b->cv.wait(lock, [&] { return !b->command.empty(); });
      if (b->command == "socket") {
        b->answer = "socket " + std::to_string(socket(AF_INET, SOCK_STREAM, 0));
      } else {
        int fd = open(b->command.c_str(), O_WRONLY | O_CREAT, 0644);
        b->answer = fd >= 0 ? "created" : std::string("refused: ") + std::strerror(errno);
        if (fd >= 0) close(fd);
      }
      b->command.clear();
      b->cv.notify_all();
    }
  }).detach();
  return "";
}

std::string ask_between(const std::string& command) {
  std::unique_lock<std::mutex> lock(g_between->m);
  g_between->command = command;
  g_between->cv.notify_all();
  g_between->cv.wait(lock, [] { return g_between->command.empty(); });
  return g_between->answer;
}

TEST(Sandbox, AStepBetweenLandlockAndTheFilterLeavesItsThreadsUnderBoth) {
  const std::string outside = (std::filesystem::temp_directory_path() /
                               ("crucible-sandbox-between-" + std::to_string(getpid())))
                                  .string();
  std::filesystem::remove(outside);
  auto out = run_sandboxed(
      {0, 1, 2},
      [&](size_t i) -> std::string {
        if (i == 0) return "socket opened between: " + std::to_string(g_between->socket_fd >= 0);
        if (i == 1) return ask_between(outside);
        return ask_between("socket");
      },
      0, start_runtime_between);
  EXPECT_EQ(out[0], "socket opened between: 1");
  if (landlock_abi_version() > 0)
    EXPECT_EQ(out[1], std::string("refused: ") + std::strerror(EACCES));
  else
    EXPECT_NE(out[1].find("sandbox: blocked open"), std::string::npos) << out[1];
  EXPECT_NE(out[2].find("sandbox: blocked socket() (network access)"), std::string::npos) << out[2];
  EXPECT_FALSE(std::filesystem::exists(outside));
  std::filesystem::remove(outside);
}

TEST(Sandbox, CpuTimeLimitStopsASpinningJobAndSaysSo) {
  auto out = run_sandboxed(
      {0, 1},
      [](size_t i) -> std::string {
        if (i == 0) {
          volatile unsigned long n = 0;
          for (;;) n = n + 1;
        }
        return "next job runs";
      },
      1.0);
  EXPECT_NE(out[0].find("SIGXCPU"), std::string::npos) << out[0];
  EXPECT_NE(out[0].find("sandbox: CPU time limit"), std::string::npos) << out[0];
  EXPECT_EQ(out[1], "next job runs");
}

}  // namespace
}  // namespace crucible
