// The process state a kernel must leave as it found it, checked in the candidate process around
// every call: the floating-point environment (rounding mode, exception flags' masks, the SSE
// control register's flush-to-zero and denormals-are-zero bits), signal dispositions, interval
// and POSIX timers, the threads of the process (a new thread must be parked, not running or
// sleeping on a timer), the working directory and the umask. A kernel that changes any of them
// fails that call with the reason, and the process is replaced before the next call: whatever it
// did cannot reach another case.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace crucible {

struct CallEnvironment {
  uint32_t mxcsr = 0;
  uint16_t x87_control = 0;
  int rounding = 0;
  std::vector<uint64_t> signal_handlers;  // per signal: handler address, flags
  std::string itimers;                    // ITIMER_REAL, VIRTUAL, PROF values
  std::string posix_timers;               // /proc/self/timers
  std::vector<int> threads;               // thread ids
  std::string cwd;
  uint32_t umask = 0;
};

// The state now; with `threads_only`, only the threads (the rest left as constructed, so two
// such captures differ only in their threads).
CallEnvironment capture_call_environment(bool threads_only = false);

// "" when `after` equals `before`, else what the kernel changed, for the case's detail. New
// threads are allowed when they are parked (waiting on a futex, as thread pools do).
std::string call_environment_changes(const CallEnvironment& before, const CallEnvironment& after);

// Puts the floating-point environment into its default state (round to nearest, no
// flush-to-zero, exceptions masked).
void reset_floating_point_environment();

}  // namespace crucible
