// The candidate process's side: the loop that runs in a freshly forked process, loads the
// kernels of one op (never in the trusted worker), and answers the trusted worker's requests:
// pings, supports queries and kernel calls over the shared arena. It is untrusted by
// construction (the kernel's library owns the process once loaded): nothing it says is taken as
// a verdict, only as data about the outputs, which the trusted side checks.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "backends/plugin/kernel_library.h"

namespace crucible {

struct KernelHostSetup {
  std::string op;  // the op whose kernels to load ("" loads every kernel the loader gives)
  std::function<std::vector<LoadedKernel>(const std::string& op)> loader;
  // In the candidate process, before the sandbox is entered: what the op's kernels need set up
  // for it (Python kernels: starting their JIT compilers' programs); empty: nothing.
  std::function<void(const std::string& op)> prepare;
  // Enters the sandbox ("" on success, else why not), running its argument between Landlock's
  // rules and the seccomp filter (sandbox.h); empty function: no sandbox.
  std::function<std::string(const std::function<std::string()>& between)> enter_sandbox;
  // Before each kernel call; empty: nothing.
  std::function<void()> call_started;
  // The CUDA device (an index among the visible ones) the kernels run on, or -1 for the CPU.
  // When set, the candidate process starts the CUDA runtime before it enters the sandbox, its
  // kernels receive device tensors (a device copy of the arena) and calls are timed with CUDA
  // events (docs/gpu.md).
  int cuda_device = -1;
};

// In a candidate process, while a kernel runs: whether the call is a timing loop's repeat (the
// same arguments again, no defences: kCallRepeat). A Python kernel's bridge then skips what
// guards only judged calls (putting every signal's disposition back after the call).
bool kernel_call_is_repeat();

// Runs the candidate process's loop on `sock` (frames tagged `tag`) until the trusted worker
// closes it; never returns.
[[noreturn]] void run_kernel_host(int sock, uint32_t tag, const KernelHostSetup& setup);

}  // namespace crucible
