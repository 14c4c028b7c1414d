// Isolated worker processes. Jobs (cases) run in forked workers, never in the process that
// keeps the results. A crash, an abort, a hang past the timeout or an allocation beyond the
// memory limit costs one job: it is reported with its cause and the worker is replaced.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace crucible {

struct PoolTrace;

struct WorkerOptions {
  int workers = 1;
  double timeout_s = 60;  // per job
  // Seconds job `index` may run beyond timeout_s (a large case's own materialising, reference and
  // comparison); unset: none. Called in the parent as the job starts.
  std::function<double(size_t index)> allowance_s;
  size_t memory_limit = 0;  // bytes per worker (0 = none)
  size_t max_batch = 32;    // jobs sent to a worker at once
  // Called once in each new worker process, before its first job (load plugins, set limits).
  std::function<void()> on_worker_start;
  // When set, the pool records its workers' start-ups, jobs and shutdown there
  // (crucible/eval/pool_trace.h); it must outlive the pool.
  PoolTrace* trace = nullptr;
};

// In a worker process: its slot in the pool (0 .. workers - 1; a worker that replaces a dead one
// takes its slot), e.g. to choose its GPU. -1 in a process that is no pool's worker.
int worker_slot();

// How a job ended when its worker could not report it.
struct JobFailure {
  enum class Kind : uint8_t { Crashed, TimedOut } kind = Kind::Crashed;
  int signal = 0;  // Crashed: the signal, or 0 for an exit without a report
  int exit_code = 0;
  std::string detail;  // "crashed: SIGSEGV", "timed_out after 5 s", ...
};

// Thrown by a pool's OnResult for a payload that is not a report of that job (not JSON, the
// wrong record, another case): the job gets a Crashed failure "the worker sent a malformed
// report: <what>" and the worker is retired.
class MalformedReport : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Workers hold no descriptor but 0, 1, 2 and their own two pipe ends, and map only their own
// shared page. Every frame from a worker is checked: the index must be the job it is running,
// the length at most 64 MiB. A worker that dies between jobs (killed from outside while idle)
// costs no job: its batch goes to a fresh worker. The parent ignores SIGPIPE while a pool runs.
class WorkerPool {
 public:
  // `job` runs in a worker and returns the payload reported for job `index`.
  using Job = std::function<std::string(size_t index)>;
  using OnResult = std::function<void(size_t index, const std::string& payload)>;
  using OnFailure = std::function<void(size_t index, const JobFailure& failure)>;

  WorkerPool(WorkerOptions opts, Job job);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Runs every index once; callbacks are invoked in the calling process as jobs finish.
  void run(const std::vector<size_t>& indices, const OnResult& on_result,
           const OnFailure& on_failure);

 private:
  struct Worker;
  void spawn(Worker& w);
  void retire(Worker& w, bool kill_it);
  WorkerOptions opts_;
  Job job_;
  std::vector<Worker*> workers_;
};

}  // namespace crucible
