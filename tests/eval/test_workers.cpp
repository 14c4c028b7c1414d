// The worker pool: what a worker holds (descriptors, shared pages) and how the parent treats
// frames that are not reports of the job a worker is running.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <gtest/gtest.h>

#include "crucible/core/retirement.h"
#include "crucible/eval/workers.h"

namespace crucible {
namespace {

struct Outcome {
  std::map<size_t, std::string> reports;   // index -> payload
  std::map<size_t, std::string> failures;  // index -> detail
};

Outcome run_pool(int workers, const std::vector<size_t>& jobs, const WorkerPool::Job& job,
                 const WorkerPool::OnResult& check = nullptr) {
  WorkerOptions wo;
  wo.workers = workers;
  wo.timeout_s = 20;
  wo.max_batch = 1;
  Outcome o;
  WorkerPool pool(wo, job);
  pool.run(
      jobs,
      [&](size_t i, const std::string& payload) {
        if (check) check(i, payload);
        o.reports[i] = payload;
      },
      [&](size_t i, const JobFailure& f) { o.failures[i] = f.detail; });
  return o;
}

// The descriptors open in this process, as "fd:target" lines.
std::string open_fds() {
  std::string s;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::string name = e.path().filename().string();
    std::error_code ec;
    auto target = std::filesystem::read_symlink(e.path(), ec);
    s += name + ":" + target.string() + "\n";
  }
  return s;
}

// The write end of the worker's result pipe (the only writable pipe above 2).
int result_pipe() {
  for (int fd = 3; fd < 1024; ++fd) {
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || (fl & O_ACCMODE) != O_WRONLY) continue;
    char link[64];
    std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    char target[256] = {};
    if (readlink(link, target, sizeof target - 1) > 0 && std::strncmp(target, "pipe:", 5) == 0)
      return fd;
  }
  return -1;
}

TEST(Workers, HoldOnlyTheirOwnPipesAndSharedPage) {
  // Descriptors the parent holds (without close-on-exec, as a careless library would): a file
  // like results.jsonl, and a pipe.
  std::string path = (std::filesystem::temp_directory_path() /
                      ("crucible-workers-fds-" + std::to_string(getpid())))
                         .string();
  int file = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  ASSERT_GE(file, 0);
  int extra[2];
  ASSERT_EQ(pipe(extra), 0);
  Outcome o = run_pool(3, {0, 1, 2, 3, 4, 5}, [](size_t) {
    int shared_pages = 0;
    {
      std::ifstream m("/proc/self/maps");
      std::string line;
      while (std::getline(m, line))
        if (line.find("/dev/zero") != std::string::npos) ++shared_pages;
    }
    return open_fds() + "shared_pages=" + std::to_string(shared_pages) + "\n";
  });
  ::close(file);
  ::close(extra[0]);
  ::close(extra[1]);
  std::filesystem::remove(path);
  ASSERT_EQ(o.reports.size(), 6u);
  for (const auto& [i, text] : o.reports) {
    std::istringstream ss(text);
    std::string line;
    int pipes = 0, fds = 0;
    while (std::getline(ss, line)) {
      if (line.rfind("shared_pages=", 0) == 0) {
        EXPECT_EQ(line, "shared_pages=1") << "a worker maps only its own death-note page";
        continue;
      }
      int fd = std::stoi(line.substr(0, line.find(':')));
      std::string target = line.substr(line.find(':') + 1);
      if (target.find("/proc/") != std::string::npos && target.find("/fd") != std::string::npos)
        continue;  // the listing's own directory
      ++fds;
      EXPECT_EQ(target.find(path), std::string::npos) << "the worker holds the parent's file";
      if (fd > 2) {
        EXPECT_EQ(target.rfind("pipe:", 0), 0u) << line;
        ++pipes;
      }
    }
    EXPECT_EQ(pipes, 2) << "only the worker's own two pipe ends:\n" << text;
    EXPECT_LE(fds, 5) << text;
  }
}

TEST(Workers, AFrameForAnotherJobIsThatJobsVerdict) {
  Outcome o = run_pool(1, {0, 1, 2}, [](size_t i) -> std::string {
    if (i == 1) {
      // A forged report of job 2, written straight into the result pipe.
      int fd = result_pipe();
      uint64_t idx = 2;
      const char payload[] = "passed";
      uint32_t len = sizeof payload - 1;
      if (fd < 0 || write(fd, &idx, 8) != 8 || write(fd, &len, 4) != 4 ||
          write(fd, payload, len) != static_cast<ssize_t>(len))
        return "no pipe";
    }
    return "ok " + std::to_string(i);
  });
  EXPECT_EQ(o.reports[0], "ok 0");
  ASSERT_TRUE(o.failures.count(1)) << "the forged frame went unnoticed";
  EXPECT_NE(o.failures[1].find("the worker sent a malformed report"), std::string::npos)
      << o.failures[1];
  EXPECT_NE(o.failures[1].find("job 2 while it was running job 1"), std::string::npos)
      << o.failures[1];
  // Job 2 is run by a fresh worker, not taken from the forged frame.
  EXPECT_EQ(o.reports[2], "ok 2");
}

TEST(Workers, AnOversizedFrameIsRefusedBeforeItsPayload) {
  Outcome o = run_pool(1, {0, 1}, [](size_t i) -> std::string {
    if (i == 0) {
      int fd = result_pipe();
      uint64_t idx = 0;
      uint32_t len = 0xF0000000u;  // 3.75 GiB that never come
      if (fd < 0 || write(fd, &idx, 8) != 8 || write(fd, &len, 4) != 4) return "no pipe";
      pause();
    }
    return "ok " + std::to_string(i);
  });
  ASSERT_TRUE(o.failures.count(0));
  EXPECT_NE(o.failures[0].find("malformed report: a report of 4026531840 bytes"), std::string::npos)
      << o.failures[0];
  EXPECT_EQ(o.reports[1], "ok 1");
}

TEST(Workers, APayloadTheParentRefusesIsThatJobsVerdict) {
  Outcome o = run_pool(
      1, {0, 1, 2}, [](size_t i) { return i == 1 ? std::string("junk") : "ok"; },
      [](size_t, const std::string& payload) {
        if (payload != "ok") throw MalformedReport("not JSON");
      });
  EXPECT_EQ(o.reports.size(), 2u);
  ASSERT_TRUE(o.failures.count(1));
  EXPECT_EQ(o.failures[1], "the worker sent a malformed report: not JSON");
}

TEST(Workers, AWorkerKilledBetweenJobsCostsNoJob) {
  // Job 0 kills its own worker right after reporting (as a kill from outside would, while the
  // worker waits for its next batch); the jobs after it must all be reported.
  WorkerOptions wo;
  wo.workers = 1;
  wo.timeout_s = 20;
  wo.max_batch = 1;
  std::map<size_t, std::string> reports, failures;
  pid_t first = 0;
  WorkerPool pool(wo, [](size_t i) { return std::to_string(getpid()) + " " + std::to_string(i); });
  pool.run(
      {0, 1, 2, 3},
      [&](size_t i, const std::string& payload) {
        reports[i] = payload;
        if (i == 0) {
          first = std::stoi(payload);
          kill(first, SIGKILL);
          usleep(100000);  // it is dead before it is fed job 1
        }
      },
      [&](size_t i, const JobFailure& f) { failures[i] = f.detail; });
  EXPECT_TRUE(failures.empty()) << failures.begin()->second;
  ASSERT_EQ(reports.size(), 4u);
  EXPECT_NE(std::stoi(reports[1]), first) << "job 1 must run in a fresh worker";
}

TEST(Workers, AWorkerThatCanRunNoMoreJobsRetiresAfterItsReport) {
  // Job 2 breaks its process for good (as a CUDA device-side assert breaks the context): it is
  // reported as itself, the rest of its batch runs in a fresh worker, and no job is charged,
  // even when several jobs in a row break their workers.
  WorkerOptions wo;
  wo.workers = 1;
  wo.timeout_s = 20;
  wo.max_batch = 8;
  std::map<size_t, std::string> reports, failures;
  WorkerPool pool(wo, [](size_t i) {
    if (i >= 2 && i <= 5) request_worker_retirement("job " + std::to_string(i) + " broke it");
    return std::to_string(getpid()) + " " + std::to_string(i);
  });
  std::vector<size_t> jobs(12);
  for (size_t i = 0; i < jobs.size(); ++i) jobs[i] = i;
  pool.run(
      jobs, [&](size_t i, const std::string& payload) { reports[i] = payload; },
      [&](size_t i, const JobFailure& f) { failures[i] = f.detail; });
  EXPECT_TRUE(failures.empty()) << failures.begin()->second;
  ASSERT_EQ(reports.size(), jobs.size());
  EXPECT_EQ(std::stoi(reports[1]), std::stoi(reports[2])) << "job 2 runs where job 1 ran";
  for (size_t i = 3; i <= 6; ++i)
    EXPECT_NE(std::stoi(reports[i]), std::stoi(reports[i - 1]))
        << "job " << i << " must run in a fresh worker";
  EXPECT_EQ(std::stoi(reports[7]), std::stoi(reports[6])) << "job 6 left its worker usable";
  EXPECT_FALSE(worker_retirement_requested()) << "the parent itself was never marked";
}

// A job's timeout is --timeout plus its own allowance (a large case's own work): job 1, with
// 3 s of allowance, reports after 2 s; job 0, with none, is killed after 0.8 s and its detail
// names the plain timeout; job 2's detail names both parts of its limit. In batches, each job's
// limit is its own, counted from when the job before it reported.
TEST(Workers, EachJobGetsTheTimeoutPlusItsOwnAllowance) {
  for (size_t batch : {size_t{1}, size_t{8}}) {
    WorkerOptions wo;
    wo.workers = 1;
    wo.timeout_s = 0.8;
    wo.max_batch = batch;
    wo.allowance_s = [](size_t i) { return i == 1 ? 3.0 : i == 2 ? 0.6 : 0.0; };
    std::map<size_t, std::string> reports, failures;
    WorkerPool pool(wo, [](size_t i) {
      if (i <= 2) usleep(2000000);
      return std::to_string(i);
    });
    pool.run(
        {1, 0, 2, 3}, [&](size_t i, const std::string& payload) { reports[i] = payload; },
        [&](size_t i, const JobFailure& f) { failures[i] = f.detail; });
    EXPECT_EQ(reports.count(1), 1u) << "batch " << batch << ": " << failures[1];
    EXPECT_EQ(reports.count(3), 1u) << "batch " << batch;
    ASSERT_EQ(failures.count(0), 1u) << "batch " << batch;
    EXPECT_NE(failures[0].find("still running after 0.8 s (--timeout)"), std::string::npos)
        << failures[0];
    ASSERT_EQ(failures.count(2), 1u) << "batch " << batch;
    EXPECT_NE(failures[2].find("after 1.4 s (--timeout 0.8 s + 0.6 s for the case's size)"),
              std::string::npos)
        << failures[2];
  }
}

}  // namespace
}  // namespace crucible
