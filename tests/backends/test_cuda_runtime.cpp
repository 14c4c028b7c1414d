// The CUDA runtime as candidate processes load it (backends/plugin/cuda_runtime.h): through
// dlopen, so crucible needs no CUDA to build or run. Started in a forked child only (a process
// that keeps results never starts CUDA).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "backends/plugin/cuda_runtime.h"
#include "e2e/cli_helpers.h"

namespace crucible {
namespace {

// Runs `f` in a forked child; returns what it wrote (at most 4 KiB).
template <typename F>
std::string in_child(F f) {
  int fds[2];
  if (pipe(fds) != 0) return "pipe failed";
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const std::string s = f();
    if (write(fds[1], s.data(), s.size()) < 0) _exit(2);
    _exit(0);
  }
  close(fds[1]);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status)) return "the child died";
  return out;
}

TEST(CudaRuntime, NotStartedUntilAsked) { EXPECT_EQ(CudaRuntime::get(), nullptr); }

TEST(CudaRuntime, StartsWhereAGpuIsVisibleAndSaysWhyNotElsewhere) {
  const std::string said = in_child([] {
    const std::string why = CudaRuntime::start(0);
    if (!why.empty()) return "error: " + why;
    CudaRuntime* rt = CudaRuntime::get();
    if (!rt || !rt->stream()) return std::string("started without a stream");
    // A round trip through the device, timed with its events.
    void* d = nullptr;
    std::string e = rt->malloc(&d, 1 << 20, "test");
    char host[64] = "crucible";
    char back[64] = {};
    if (e.empty()) e = rt->to_device(d, host, sizeof host, "test");
    if (e.empty()) e = rt->timed_start();
    uint64_t ns = 0;
    if (e.empty()) e = rt->flush_l2();
    if (e.empty()) e = rt->timed_stop(&ns);
    if (e.empty()) e = rt->to_host(back, d, sizeof back, "test");
    rt->free(d);
    if (!e.empty()) return "error after start: " + e;
    if (std::strcmp(back, host) != 0) return std::string("the device copy differs");
    if (rt->l2_bytes() == 0) return std::string("no L2 size");
    if (ns == 0) return std::string("a flush of the L2 took no time");
    return std::string("ok");
  });
  if (e2e::gpu_visible()) {
    EXPECT_EQ(said, "ok");
  } else {
    // No device: a clear reason, never a crash.
    EXPECT_EQ(said.rfind("error: ", 0), 0u) << said;
    EXPECT_TRUE(said.find("CUDA") != std::string::npos ||
                said.find("libcudart") != std::string::npos)
        << said;
  }
}

}  // namespace
}  // namespace crucible
