// A worker pool's trace (start-ups, jobs, shutdown, the parent's busy time), its summary and the
// run profile's Chrome trace JSON; and the pool's rule that a worker still starting holds one
// job only.
#include <unistd.h>

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "crucible/eval/pool_trace.h"
#include "crucible/eval/run_profile.h"
#include "crucible/eval/workers.h"

namespace crucible {
namespace {

using namespace std::chrono_literals;

// Runs `jobs` jobs of `job_ms` on `workers` workers whose start takes `start_ms` (slot 1's
// `slow_start_ms` when given), with a trace; returns it.
PoolTrace traced_run(int workers, size_t jobs, int job_ms, int start_ms, int slow_start_ms = -1,
                     size_t crash_job = ~size_t{0}) {
  PoolTrace trace;
  {
    WorkerOptions wo;
    wo.workers = workers;
    wo.timeout_s = 20;
    wo.trace = &trace;
    wo.on_worker_start = [start_ms, slow_start_ms] {
      const int ms = worker_slot() == 1 && slow_start_ms >= 0 ? slow_start_ms : start_ms;
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    };
    WorkerPool pool(wo, [job_ms, crash_job](size_t i) {
      if (i == crash_job) _exit(3);
      std::this_thread::sleep_for(std::chrono::milliseconds(job_ms));
      return std::to_string(i);
    });
    std::vector<size_t> idx(jobs);
    for (size_t i = 0; i < jobs; ++i) idx[i] = i;
    pool.run(
        idx, [](size_t, const std::string&) {}, [](size_t, const JobFailure&) {});
  }  // the pool's shutdown is traced too
  return trace;
}

TEST(PoolTrace, RecordsEachStartEveryJobOnceAndTheShutdown) {
  const PoolTrace t = traced_run(2, 8, 20, 100);
  EXPECT_EQ(t.slots, 2);
  std::map<int, double> ready;  // slot -> end of its start-up
  std::set<size_t> jobs;
  int stops = 0;
  for (const PoolSpan& s : t.spans) {
    EXPECT_LE(s.t0, s.t1);
    EXPECT_GT(s.pid, 0);
    switch (s.kind) {
      case PoolSpan::Kind::StartUp:
        EXPECT_GE(s.t1 - s.t0, 0.09);  // the 100 ms sleep of on_worker_start
        ready[s.slot] = s.t1;
        break;
      case PoolSpan::Kind::Job:
        EXPECT_TRUE(jobs.insert(s.job).second) << "job " << s.job << " traced twice";
        EXPECT_GE(s.t1 - s.t0, 0.019);
        ASSERT_TRUE(ready.count(s.slot)) << "a job before its worker's start-up";
        EXPECT_GE(s.t0, ready[s.slot]);
        EXPECT_FALSE(s.failed);
        break;
      case PoolSpan::Kind::Stop:
        ++stops;
        EXPECT_GE(s.t0, t.run_end);
        break;
    }
  }
  EXPECT_EQ(ready.size(), 2u);
  EXPECT_EQ(jobs.size(), 8u);
  EXPECT_EQ(stops, 2);
  EXPECT_GT(t.parent_busy_s, 0.0);
  EXPECT_LT(t.parent_busy_s, t.run_end - t.run_start);

  const PoolSummary s = summarize_pool(t);
  EXPECT_EQ(s.slots, 2);
  EXPECT_EQ(s.starts, 2);
  EXPECT_EQ(s.jobs, 8u);
  EXPECT_NEAR(s.in_jobs, 8 * 0.02, 0.1);
  EXPECT_GE(s.start_up_median, 0.09);
  EXPECT_GE(s.first_result, 0.11);  // start-up, then one job
  EXPECT_GT(s.busy_fraction(), 0.0);
  EXPECT_LE(s.busy_fraction(), 1.0);
}

TEST(PoolTrace, AJobWhoseWorkerDiedIsTracedAsFailedAndItsReplacementsStartToo) {
  const PoolTrace t = traced_run(1, 4, 5, 10, -1, 2);
  int starts = 0, failed = 0, jobs = 0;
  for (const PoolSpan& s : t.spans) {
    if (s.kind == PoolSpan::Kind::StartUp) ++starts;
    if (s.kind != PoolSpan::Kind::Job) continue;
    ++jobs;
    if (s.failed) {
      ++failed;
      EXPECT_EQ(s.job, 2u);
    }
  }
  EXPECT_EQ(starts, 2);  // the first worker and the one that replaced it
  EXPECT_EQ(failed, 1);
  EXPECT_EQ(jobs, 4);
}

// A worker that has not reported yet may still be starting (a CUDA context): it gets one job,
// and the others go to the worker that is ready instead of waiting behind the start.
TEST(WorkerPool, AWorkerStillStartingHoldsOneJobOnly) {
  const PoolTrace t = traced_run(2, 20, 10, 0, 1000);
  std::map<int, int> jobs_of;
  double slot0_last = 0, slot1_ready = 0;
  for (const PoolSpan& s : t.spans) {
    if (s.kind == PoolSpan::Kind::StartUp && s.slot == 1) slot1_ready = s.t1;
    if (s.kind != PoolSpan::Kind::Job) continue;
    ++jobs_of[s.slot];
    if (s.slot == 0) slot0_last = std::max(slot0_last, s.t1);
  }
  EXPECT_EQ(jobs_of[1], 1);
  EXPECT_EQ(jobs_of[0], 19);
  EXPECT_LT(slot0_last, slot1_ready);  // nothing waited for the slow start
}

TEST(RunProfile, TheChromeTraceHoldsThePhasesAndEachWorkersSpans) {
  RunProfile profile(std::chrono::steady_clock::now());
  profile.begin("plan");
  profile.begin("correctness");
  PoolTrace* trace = profile.pool_trace();
  *trace = traced_run(2, 3, 5, 5);
  profile.begin("reports");
  profile.end();
  const nlohmann::json j = profile.chrome_trace([](const std::string& phase, size_t job) {
    return nlohmann::json{{"name", phase + " job " + std::to_string(job)},
                          {"args", {{"status", "passed"}}}};
  });
  ASSERT_TRUE(j.contains("traceEvents"));
  std::set<std::string> phases, names;
  int jobs = 0;
  for (const nlohmann::json& e : j["traceEvents"]) {
    if (e["ph"] != "X") continue;
    EXPECT_GE(e["dur"].get<int64_t>(), 0);
    if (e["pid"] == 0) phases.insert(e["name"].get<std::string>());
    if (e["pid"] == 1 && e["name"].get<std::string>().find(" job ") != std::string::npos) {
      ++jobs;
      EXPECT_EQ(e["args"]["status"], "passed");
      EXPECT_TRUE(e["args"].contains("job"));
      names.insert(e["name"].get<std::string>());
    }
  }
  EXPECT_EQ(phases, (std::set<std::string>{"plan", "correctness", "reports"}));
  EXPECT_EQ(jobs, 3);
  EXPECT_TRUE(names.count("correctness job 0"));
  const std::vector<std::string> lines = profile.summary();
  ASSERT_EQ(lines.size(), 4u);  // three phases and the total
  EXPECT_NE(lines[1].find("2 workers (2 started"), std::string::npos) << lines[1];
  EXPECT_NE(lines[3].find("total: "), std::string::npos) << lines[3];
}

}  // namespace
}  // namespace crucible
