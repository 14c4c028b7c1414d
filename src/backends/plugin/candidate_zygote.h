// The candidate zygote: a process forked from the trusted worker before anything in the worker
// starts CUDA, which forks the worker's candidate processes on request. A process that has
// started CUDA cannot hand a working CUDA to a child it forks (the driver's state does not
// survive fork), so a worker that times CUDA kernels against `aten:cuda` -- the baseline starts
// CUDA in the worker itself -- could not start another candidate process after its first
// baseline call. Forked from the zygote, every candidate process starts from the worker as it
// was before CUDA, whatever the worker has done since.
//
// The zygote holds a copy of the worker's memory at its fork: the backend's loader, options and
// isolation (set before any case runs) are there; what a candidate process needs beyond them
// (its op, device, channel tag, channel, output file and note page) comes with each request.
// It dies with the worker (PR_SET_PDEATHSIG), and its candidate processes die with it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>

namespace crucible {

// What one candidate process is started with.
struct ZygoteSpawn {
  std::string op;        // the op it serves ("" for a whole library)
  int cuda_device = -1;  // KernelHostSetup::cuda_device
  uint32_t tag = 0;      // its channel's frame tag
};

// Runs in the new candidate process (a child of the zygote) and never returns: `sock` is its
// channel, `out_fd` its output file, `note` its mapped note page, `parent` the zygote's pid.
using CandidateMain = std::function<void(const ZygoteSpawn& spawn, int sock, int out_fd, char* note,
                                         size_t note_size, pid_t parent)>;

// What a zygote may do ahead for its candidate processes, outside any sandbox: `warm` runs once
// in the zygote before it serves (importing a runtime every candidate process would otherwise
// import itself: Python and PyTorch for Python kernels), and the fork hooks run around each
// fork, in the zygote and in the child (a runtime with process-wide state, CPython's, must be
// told). Only trusted code belongs here: the user's installed libraries, never a kernel.
struct ZygoteHooks {
  std::function<void()> warm;
  std::function<void()> before_fork;
  std::function<void()> after_fork_parent;
  std::function<void()> after_fork_child;
};

class CandidateZygote {
 public:
  // Forks the zygote now; it runs hooks.warm before it takes the first request.
  explicit CandidateZygote(CandidateMain main, ZygoteHooks hooks = {});
  ~CandidateZygote();
  CandidateZygote(const CandidateZygote&) = delete;
  CandidateZygote& operator=(const CandidateZygote&) = delete;

  // Starts a candidate process with these descriptors (copied to it; the caller keeps its own)
  // and returns its pid. `note_fd` is a memory file of `note_size` bytes the caller has mapped.
  pid_t spawn(const ZygoteSpawn& spawn, int sock, int out_fd, int note_fd, size_t note_size);
  // Waits for a candidate process it started to end (after it died or was killed) and returns
  // its wait status, or -1 when the zygote itself is gone.
  int wait(pid_t pid);

 private:
  [[noreturn]] void serve(const CandidateMain& main, const ZygoteHooks& hooks);
  pid_t pid_ = -1;
  int sock_ = -1;
};

}  // namespace crucible
