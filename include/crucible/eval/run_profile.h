// Where a run's wall time went (`crucible run --profile`): its phases on the parent's clock
// (the plan, correctness, the memory checker, timing, the reports) and, for each phase that
// runs a worker pool, what every worker slot did (crucible/eval/pool_trace.h). Written to the
// run folder as profile.json, in Chrome's trace event format (ui.perfetto.dev and
// chrome://tracing open it), and summarised on the console: each phase's time, and for a pool
// how busy its workers were, what their start-ups and shutdown cost, how long the first result
// and the last tenth of the cases took, and how busy the parent was.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "crucible/eval/pool_trace.h"

namespace crucible {

// What the summary says of one pool phase; every time in seconds.
struct PoolSummary {
  int slots = 0;               // worker slots
  int starts = 0;              // worker processes started (slots + replacements)
  double wall = 0;             // the pool's run, start to last result
  double start_up_median = 0;  // fork to ready, over the starts
  double start_up_max = 0;
  double in_jobs = 0;       // worker-seconds in jobs
  double starting = 0;      // worker-seconds starting up
  double stopping = 0;      // the shutdown: first worker told to stop to last one reaped
  double first_result = 0;  // from the pool's start
  double last_tenth = 0;    // from 90% of the jobs reported to the last
  double parent_busy = 0;   // of `wall`
  size_t jobs = 0;          // job spans (a job whose worker died and ran again: twice)
  // In-jobs share of the slots' time, start to last result.
  double busy_fraction() const;
};
PoolSummary summarize_pool(const PoolTrace& trace);

class RunProfile {
 public:
  using Clock = std::chrono::steady_clock;
  explicit RunProfile(Clock::time_point origin);

  // Starts phase `name` now (ending the phase before it, if still open).
  void begin(const std::string& name);
  // Ends the open phase now.
  void end();
  // A trace for the open phase's worker pool (owned by the profile; outlives the pool).
  PoolTrace* pool_trace();

  // One line per phase, for the console.
  std::vector<std::string> summary() const;
  // The Chrome trace event JSON; `describe(phase, job)` gives a job's name and arguments
  // ({"name": ..., "args": {...}}; an empty object: the job's index).
  nlohmann::json chrome_trace(
      const std::function<nlohmann::json(const std::string& phase, size_t job)>& describe) const;

 private:
  struct Phase {
    std::string name;
    double t0 = 0, t1 = -1;
    std::unique_ptr<PoolTrace> pool;
  };
  double now() const;
  Clock::time_point origin_;
  std::vector<Phase> phases_;
};

}  // namespace crucible
