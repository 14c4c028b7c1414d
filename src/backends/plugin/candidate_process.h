// The trusted worker's handle on a candidate process: a process forked for one op, which closes
// every descriptor but its channel, resets its signal state, measures the bare round trip with
// the trusted worker, enters the sandbox and only then loads the op's kernels. The trusted
// worker sends it requests and reads its replies as untrusted data; it never loads kernel code
// itself. When the candidate process dies during a request, the trusted worker dies the same
// way (the same signal), so the worker pool records the case as crashed with the cause.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "backends/plugin/candidate_zygote.h"
#include "backends/plugin/kernel_host.h"
#include "crucible/backends/backend.h"
#include "crucible/core/error.h"

namespace crucible {

class CandidateProcess {
 public:
  // Forks the candidate process, or has `zygote` fork it (candidate_zygote.h).
  CandidateProcess(const KernelHostSetup& setup, const CandidateIsolation& isolation,
                   CandidateZygote* zygote = nullptr);
  ~CandidateProcess();
  CandidateProcess(const CandidateProcess&) = delete;
  CandidateProcess& operator=(const CandidateProcess&) = delete;

  // What loading the kernels said: an error (with its kind), and changes the library's loading
  // made to the process state ("" when none).
  const std::string& load_error() const { return load_error_; }
  ErrorKind load_error_kind() const { return load_error_kind_; }
  const std::string& load_changes() const { return load_changes_; }
  // The ops it holds kernels for, and whether each has a supports hook.
  const std::map<std::string, bool>& ops() const { return ops_; }

  // The fastest bare round trip (a ping answered before any kernel code was loaded), seconds.
  // On CUDA the ping includes an empty device synchronise.
  double bare_round_trip() const { return bare_round_trip_; }

  // Whether its kernels run on CUDA (KernelHostSetup::cuda_device).
  bool cuda() const { return cuda_; }
  // CUDA: the largest amount by which the trusted time of an empty timed request (its wall time
  // less the bare round trip) exceeded the event time the process reported for it, measured
  // before any kernel code was loaded, seconds. A kernel's event time may fall below the
  // trusted time by at most this (and a margin) before it counts as forged.
  double empty_sample_gap() const { return empty_gap_; }
  // CUDA: writes a device buffer larger than the L2 and waits for it (outside any timed region).
  void flush_l2();
  // CUDA, between two timed calls: copies `ranges` of a known arena (offset, bytes) from the
  // device into the shared arena, then fills them on the device with `poison`.
  void timed_outputs(uint64_t arena_id, uint64_t arena_size,
                     const std::vector<std::pair<uint64_t, uint64_t>>& ranges,
                     unsigned char poison);

  // Sends a request (and `pass_fd`, the call's arena, when >= 0) and returns the reply. If the
  // process dies instead of answering, this does not return (see the class comment); if it
  // answers with something that is not a frame, kernel_fault() says so.
  std::string request(const std::string& payload, int pass_fd = -1,
                      size_t max_reply = size_t{1} << 20);

  // Kernel calls it has made so far.
  int64_t calls() const { return calls_; }
  void count_call() { ++calls_; }

  // Whether it has seen arena `id` (its descriptor need not travel again).
  bool knows_arena(uint64_t id) const;
  void saw_arena(uint64_t id);

  // What the kernel printed on its standard output and error since the last look (at most a
  // few KiB; the rest is counted, not kept).
  std::string take_output();

  // What a candidate process runs, in it: a clean process state, its note page, then the kernel
  // host (kernel_host.h). `parent` is the process that forked it.
  [[noreturn]] static void child_main(const KernelHostSetup& setup,
                                      const CandidateIsolation& isolation, int sock, int out_fd,
                                      char* note, size_t note_size, uint32_t tag, pid_t parent);

 private:
  [[noreturn]] void died();
  // Waits for the process to end; its wait status, or -1 when that cannot be known.
  int reap();
  pid_t pid_ = -1;
  int sock_ = -1;
  uint32_t tag_ = 0;
  int out_fd_ = -1;
  off_t out_read_ = 0;
  char* note_ = nullptr;
  std::string load_error_, load_changes_;
  ErrorKind load_error_kind_ = ErrorKind::Input;
  std::map<std::string, bool> ops_;
  double bare_round_trip_ = 0;
  bool cuda_ = false;
  double empty_gap_ = 0;
  int64_t calls_ = 0;
  uint64_t arenas_[4] = {};
  CandidateIsolation isolation_;
  CandidateZygote* zygote_ = nullptr;
};

}  // namespace crucible
