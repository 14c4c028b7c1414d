// The worker sandbox's rule that CPython needs: a sandboxed process may read its SIGSYS
// disposition (CPython's signal module reads every signal's when it starts), and still may not
// replace the sandbox's SIGSYS handler.
#include <signal.h>
#include <unistd.h>

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

TEST(PythonSandboxRules, ReadingTheSigsysDispositionIsAllowedReplacingItIsNot) {
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
    sigaction(SIGSYS, &mine, &old);
    return "replaced";
  });
  pool.run(
      {0, 1}, [&](size_t i, const std::string& payload) { out[i] = payload; },
      [&](size_t i, const JobFailure& f) { out[i] = "FAILED: " + f.detail; });
  EXPECT_EQ(out[0], "read");
  EXPECT_NE(out[1].find("killed by SIGSYS"), std::string::npos) << out[1];
  EXPECT_NE(out[1].find("replacing the sandbox's SIGSYS handler"), std::string::npos) << out[1];
}

}  // namespace
}  // namespace crucible
