// What a worker pool's slots did and when, on the parent's steady clock: each worker's start-up
// (fork until it could take its first job), each job (from when its worker could start it to
// its report or its end), and the pool's shutdown; and how much of the pool's run the parent
// itself was busy (not waiting in poll). WorkerPool fills one when WorkerOptions::trace is set;
// `crucible run --profile` turns it into the run's profile (crucible/eval/run_profile.h).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace crucible {

struct PoolSpan {
  enum class Kind : uint8_t { StartUp, Job, Stop };
  Kind kind = Kind::Job;
  int slot = 0;
  pid_t pid = -1;
  double t0 = 0, t1 = 0;  // seconds since the trace's origin
  size_t job = 0;         // Job: the index given to WorkerPool::run
  bool failed = false;    // Job: ended by the worker's death or the timeout, not by a report
};

struct PoolTrace {
  using Clock = std::chrono::steady_clock;
  explicit PoolTrace(Clock::time_point origin = Clock::now()) : origin(origin) {}

  Clock::time_point origin;
  std::vector<PoolSpan> spans;
  double run_start = 0, run_end = 0;  // WorkerPool::run, seconds since origin
  double parent_busy_s = 0;           // of that: the parent's time outside poll()
  int slots = 0;

  double at(Clock::time_point t) const { return std::chrono::duration<double>(t - origin).count(); }
};

}  // namespace crucible
