// The worker sandbox's rules on SIGSYS: a sandboxed process may read its disposition (CPython's
// signal module reads every signal's when it starts); replacing the sandbox's handler fails
// with EINVAL and the process runs on (LLVM, in Triton's compiler, sets crash handlers for
// every fatal signal, SIGSYS among them), with the sandbox's handler still in place: a blocked
// call afterwards still kills the process with its note.
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "crucible/eval/workers.h"
#include "sandbox/death_note.h"
#include "sandbox/sandbox.h"

namespace crucible {
namespace {

void on_sigsys(int) {}

TEST(PythonSandboxRules, ReadingTheSigsysDispositionIsAllowedReplacingItFailsAndTheHandlerStays) {
  ScratchRoot scratch;
  SandboxOptions so;
  so.scratch_root = scratch.path();
  WorkerOptions wo;
  wo.workers = 1;
  wo.timeout_s = 20;
  wo.max_batch = 1;
  wo.on_worker_start = [&so] {
    std::string why = enter_sandbox(so);
    if (!why.empty()) {
      set_worker_death_note(why.c_str());
      _exit(3);
    }
  };
  std::map<size_t, std::string> out;
  WorkerPool pool(wo, [](size_t i) -> std::string {
    sandbox_job_started();
    struct sigaction old {};
    if (i == 0) return sigaction(SIGSYS, nullptr, &old) == 0 ? "read" : strerror(errno);
    struct sigaction mine {};
    mine.sa_handler = on_sigsys;
    const int rc = sigaction(SIGSYS, &mine, &old);
    const int err = errno;
    struct sigaction now {};
    sigaction(SIGSYS, nullptr, &now);
    const bool kept = now.sa_handler != on_sigsys;
    if (i == 1) return rc == -1 && err == EINVAL && kept ? "refused, kept" : "replaced";
    // Caught by the kept handler, this kills the process with the sandbox's note.
    (void)!socket(AF_INET, SOCK_STREAM, 0);
    return "survived a blocked call";
  });
  pool.run(
      {0, 1, 2}, [&](size_t i, const std::string& payload) { out[i] = payload; },
      [&](size_t i, const JobFailure& f) { out[i] = "FAILED: " + f.detail; });
  EXPECT_EQ(out[0], "read");
  EXPECT_EQ(out[1], "refused, kept");
  EXPECT_NE(out[2].find("killed by SIGSYS"), std::string::npos) << out[2];
  EXPECT_NE(out[2].find("blocked socket()"), std::string::npos) << out[2];
}

}  // namespace
}  // namespace crucible
