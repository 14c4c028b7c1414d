// The worker pool: forked processes fed job indices over pipes, watched with poll().
#include "crucible/eval/workers.h"
#include "sandbox/death_note.h"
#include "sandbox/inherited_fds.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>

#include <fmt/format.h>

#include "crucible/core/error.h"
#include "crucible/core/retirement.h"
#include "crucible/eval/pool_trace.h"

namespace crucible {

namespace {

using Clock = std::chrono::steady_clock;

bool write_all(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t k = ::write(fd, p, n);
    if (k < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

bool read_all(int fd, void* data, size_t n) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    ssize_t k = ::read(fd, p, n);
    if (k < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (k == 0) return false;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

// A page shared between the parent and one worker: the job the worker is running (index + 1;
// 0 between jobs, kStarting before its first), its death note, and when it became ready for its
// first job (steady-clock nanoseconds, the same clock in every process; 0 until then).
constexpr size_t kNoteSize = 256;
constexpr uint64_t kStarting = ~uint64_t{0};
// Set by a worker that reported its job and then exits because it can no longer run jobs
// (crucible/core/retirement.h): the rest of its batch goes to a fresh worker, no job charged.
constexpr uint64_t kRetired = ~uint64_t{0} - 1;
struct SharedPage {
  std::atomic<uint64_t> running;
  std::atomic<int64_t> ready_ns;
  char note[kNoteSize];
};
static_assert(std::atomic<uint64_t>::is_always_lock_free);
static_assert(std::atomic<int64_t>::is_always_lock_free);
constexpr size_t kPageSize = 4096;
static_assert(sizeof(SharedPage) <= kPageSize);

// A report larger than this is not a report.
constexpr uint32_t kMaxFrame = uint32_t{64} << 20;

// A worker that died between jobs this many times with the same job at the head of its batch
// is charged that job (a worker that cannot stay alive must not loop forever).
constexpr int kMaxIdleDeaths = 3;
// A job whose worker was killed from outside (SIGKILL, nothing said) runs again this many times.
constexpr int kMaxOutsideKills = 1;

int g_worker_slot = -1;  // in a worker: its slot in the pool

// The parent ignores SIGPIPE while a pool runs: feeding a worker that died while idle fails
// with EPIPE (its death is then seen on its result pipe) instead of killing crucible.
class IgnoreSigpipe {
 public:
  IgnoreSigpipe() {
    struct sigaction ign {};
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGPIPE, &ign, &old_);
  }
  ~IgnoreSigpipe() { sigaction(SIGPIPE, &old_, nullptr); }
  IgnoreSigpipe(const IgnoreSigpipe&) = delete;
  IgnoreSigpipe& operator=(const IgnoreSigpipe&) = delete;

 private:
  struct sigaction old_ {};
};

// The process's data size now (VmData of /proc/self/status: heap and private writable
// mappings, what RLIMIT_DATA counts), 0 when it cannot be read.
size_t data_size_now() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  size_t kib = 0;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "VmData: %zu kB", &kib) == 1) break;
  std::fclose(f);
  return kib << 10;
}

}  // namespace

struct WorkerPool::Worker {
  pid_t pid = -1;
  int to_fd = -1;    // parent writes job indices
  int from_fd = -1;  // parent reads results
  std::deque<size_t> outstanding;
  Clock::time_point job_start;
  double job_limit_s = 0;      // the running job's timeout with its allowance
  std::string buf;             // bytes read but not yet parsed
  SharedPage* page = nullptr;  // the running job and the death note (set_worker_death_note)
  int slot = 0;                // its place in the pool, kept by the workers that replace it
  Clock::time_point spawned;   // with a trace: when it was forked
  bool start_traced = false;   // with a trace: its start-up span is recorded
  pid_t traced_pid = -1;       // with a trace: the pid its spans name (kept after it dies)
  bool reported = false;       // it has reported a job (its start-up is behind it)
};

int worker_slot() { return g_worker_slot; }

WorkerPool::WorkerPool(WorkerOptions opts, Job job) : opts_(std::move(opts)), job_(std::move(job)) {
  if (opts_.workers < 1) opts_.workers = 1;
  for (int i = 0; i < opts_.workers; ++i) {
    workers_.push_back(new Worker());
    workers_.back()->slot = static_cast<int>(workers_.size()) - 1;
    void* page =
        mmap(nullptr, kPageSize, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED)
      internal_error(std::string("cannot map a worker's shared page: ") + std::strerror(errno));
    workers_.back()->page = new (page) SharedPage{};
  }
}

WorkerPool::~WorkerPool() {
  // Every worker is told to stop (its job pipe closed) before any is waited for, so workers whose
  // exit takes long (a CUDA context torn down: a fifth of a second each) end side by side.
  const auto t0 = Clock::now();
  for (Worker* w : workers_)
    if (w->pid > 0 && w->to_fd >= 0) {
      close(w->to_fd);
      w->to_fd = -1;
    }
  for (Worker* w : workers_) {
    const pid_t pid = w->pid;
    if (pid > 0) retire(*w, false);
    if (opts_.trace && pid > 0) {
      PoolTrace& t = *opts_.trace;
      t.spans.push_back(
          {PoolSpan::Kind::Stop, w->slot, pid, t.at(t0), t.at(Clock::now()), 0, false});
    }
    if (w->page) munmap(w->page, kPageSize);
    delete w;
  }
}

void WorkerPool::spawn(Worker& w) {
  int down[2], up[2];
  if (pipe2(down, O_CLOEXEC) != 0 || pipe2(up, O_CLOEXEC) != 0)
    internal_error(std::string("cannot create a worker pipe: ") + std::strerror(errno));
  std::fflush(nullptr);
  w.page->note[0] = '\0';
  w.page->running.store(kStarting);
  w.page->ready_ns.store(0);
  w.spawned = Clock::now();
  w.start_traced = false;
  w.reported = false;
  pid_t pid = fork();
  if (pid < 0) internal_error(std::string("cannot fork a worker: ") + std::strerror(errno));
  if (pid == 0) {
    // The worker: dies with its parent, holds only its own pipes and its own shared page.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    signal(SIGPIPE, SIG_IGN);
    // Every descriptor but 0, 1, 2 and the worker's two pipe ends goes (the results file, the
    // run folder's lock, other workers' pipes), bar a memory checker's (inherited_fds.h).
    close_fds_from(3, {down[0], up[1]});
    for (Worker* other : workers_)
      if (other != &w && other->page) munmap(other->page, kPageSize);
    SharedPage* page = w.page;
    install_worker_death_note(page->note, kNoteSize, page, kPageSize);
    if (opts_.memory_limit > 0 && !kAddressSanitizer) {
      // The data limit (heap and private writable mappings: what the worker and its kernels
      // allocate), on top of what the worker holds already, with head-room for stacks and the
      // allocator. Never the address space: CUDA and other drivers reserve terabytes of it
      // (PROT_NONE) that no case allocates, and a limit on it stops them from starting.
      rlim_t lim = static_cast<rlim_t>(data_size_now()) + static_cast<rlim_t>(opts_.memory_limit) +
                   (rlim_t{512} << 20);
      struct rlimit rl = {lim, lim};
      setrlimit(RLIMIT_DATA, &rl);
    }
    g_worker_slot = w.slot;
    if (opts_.on_worker_start) opts_.on_worker_start();
    page->ready_ns.store(
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
            .count());
    page->running.store(0);
    const int in = down[0], out = up[1];
    for (;;) {
      uint32_t n = 0;
      if (!read_all(in, &n, sizeof n)) _exit(0);
      std::vector<uint64_t> idx(n);
      if (n > 0 && !read_all(in, idx.data(), n * sizeof(uint64_t))) _exit(0);
      for (uint64_t i : idx) {
        set_worker_death_note("");
        page->running.store(i + 1);
        std::string payload;
        try {
          payload = job_(static_cast<size_t>(i));
        } catch (const std::exception& e) {
          // Never unwinds to main (which would print crucible's own error on the console):
          // the job's failure, with the error as its note.
          set_worker_death_note((std::string("an error escaped the job: ") + e.what()).c_str());
          _exit(4);
        } catch (...) {
          set_worker_death_note("an unknown exception escaped the job");
          _exit(4);
        }
        uint32_t len = static_cast<uint32_t>(payload.size());
        if (!write_all(out, &i, sizeof i) || !write_all(out, &len, sizeof len) ||
            !write_all(out, payload.data(), payload.size()))
          _exit(0);
        if (worker_retirement_requested()) {
          page->running.store(kRetired);
          _exit(0);
        }
        page->running.store(0);
      }
    }
  }
  close(down[0]);
  close(up[1]);
  w.pid = pid;
  w.traced_pid = pid;
  w.to_fd = down[1];
  w.from_fd = up[0];
  w.outstanding.clear();
  w.buf.clear();
}

void WorkerPool::retire(Worker& w, bool kill_it) {
  if (w.pid <= 0) return;
  if (kill_it) kill(w.pid, SIGKILL);
  if (w.to_fd >= 0) close(w.to_fd);
  int status = 0;
  while (waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (w.from_fd >= 0) close(w.from_fd);
  w.pid = -1;
  w.to_fd = w.from_fd = -1;
}

void WorkerPool::run(const std::vector<size_t>& indices, const OnResult& on_result,
                     const OnFailure& on_failure) {
  IgnoreSigpipe ignore_sigpipe;
  std::deque<size_t> queue(indices.begin(), indices.end());
  PoolTrace* const trace = opts_.trace;
  const auto run_start = Clock::now();
  double polled_s = 0;  // with a trace: the parent's time waiting in poll()
  if (trace) trace->slots = static_cast<int>(workers_.size());
  auto job_limit = [this](size_t index) {
    const double extra = opts_.allowance_s ? opts_.allowance_s(index) : 0.0;
    return opts_.timeout_s + (std::isfinite(extra) && extra > 0 ? extra : 0.0);
  };
  // With a trace: when worker `w` could take jobs (its start-up span is recorded the first time;
  // a worker that never got there ends its start-up at `now`).
  auto ready_of = [&](Worker& w, Clock::time_point now) {
    const int64_t ns = w.page->ready_ns.load();
    Clock::time_point r = ns > 0 ? Clock::time_point(std::chrono::nanoseconds(ns)) : now;
    r = std::clamp(r, w.spawned, std::max(w.spawned, now));
    if (!w.start_traced) {
      trace->spans.push_back({PoolSpan::Kind::StartUp, w.slot, w.traced_pid, trace->at(w.spawned),
                              trace->at(r), 0, false});
      w.start_traced = true;
    }
    return r;
  };
  // With a trace: job `job` of worker `w` ended now, reported or not.
  auto trace_job = [&](Worker& w, size_t job, bool failed) {
    if (!trace) return;
    const auto now = Clock::now();
    const auto from = std::max(w.job_start, ready_of(w, now));
    trace->spans.push_back(
        {PoolSpan::Kind::Job, w.slot, w.traced_pid, trace->at(from), trace->at(now), job, failed});
  };
  std::map<size_t, int> idle_deaths;    // job at the head of a batch -> deaths between jobs
  std::map<size_t, int> outside_kills;  // job -> times its worker was killed from outside
  const int nworkers = static_cast<int>(workers_.size());
  auto any_busy = [&] {
    for (Worker* w : workers_)
      if (!w->outstanding.empty()) return true;
    return false;
  };
  // A worker that died or was killed: its first outstanding job failed, the rest go back.
  auto replace = [&](Worker& w, const JobFailure& f) {
    if (!w.outstanding.empty()) {
      size_t failed = w.outstanding.front();
      trace_job(w, failed, true);
      w.outstanding.pop_front();
      for (auto it = w.outstanding.rbegin(); it != w.outstanding.rend(); ++it)
        queue.push_front(*it);
      w.outstanding.clear();
      on_failure(failed, f);
    }
  };
  // A worker that sent what is not a report of its job: that job's verdict, the worker retired.
  auto malformed = [&](Worker& w, const std::string& why) {
    retire(w, true);
    JobFailure f;
    f.kind = JobFailure::Kind::Crashed;
    f.detail = "the worker sent a malformed report: " + why;
    replace(w, f);
  };

  while (!queue.empty() || any_busy()) {
    // Feed idle workers.
    for (Worker* w : workers_) {
      if (!w->outstanding.empty() || queue.empty()) continue;
      if (w->pid <= 0) spawn(*w);
      // A worker that has not reported yet may still be starting (a CUDA context takes 0.2 to
      // 15 s to create, depending on how many processes create one at once): one job, so that
      // no other job waits behind its start while another worker is free.
      size_t batch = !w->reported
                         ? 1
                         : std::clamp<size_t>(queue.size() / (2 * static_cast<size_t>(nworkers)), 1,
                                              std::max<size_t>(1, opts_.max_batch));
      std::vector<uint64_t> ids;
      for (size_t k = 0; k < batch && !queue.empty(); ++k) {
        ids.push_back(queue.front());
        w->outstanding.push_back(queue.front());
        queue.pop_front();
      }
      uint32_t n = static_cast<uint32_t>(ids.size());
      w->job_start = Clock::now();
      w->job_limit_s = job_limit(w->outstanding.front());
      if (!write_all(w->to_fd, &n, sizeof n) ||
          !write_all(w->to_fd, ids.data(), ids.size() * sizeof(uint64_t))) {
        // The worker is gone already (EPIPE): its result pipe reports EOF next, and as it died
        // between jobs its batch goes back to the queue.
      }
    }

    std::vector<pollfd> fds;
    std::vector<Worker*> polled;
    auto now = Clock::now();
    double wait_s = 1.0;
    for (Worker* w : workers_) {
      if (w->outstanding.empty()) continue;
      fds.push_back({w->from_fd, POLLIN, 0});
      polled.push_back(w);
      double left = w->job_limit_s - std::chrono::duration<double>(now - w->job_start).count();
      wait_s = std::min(wait_s, std::max(0.0, left));
    }
    if (fds.empty()) continue;
    const auto poll_start = Clock::now();
    int rc = poll(fds.data(), fds.size(), static_cast<int>(std::ceil(wait_s * 1000)));
    if (trace) polled_s += std::chrono::duration<double>(Clock::now() - poll_start).count();
    if (rc < 0 && errno != EINTR) internal_error(std::string("poll: ") + std::strerror(errno));

    for (size_t k = 0; k < fds.size(); ++k) {
      Worker& w = *polled[k];
      if (fds[k].revents == 0 || w.pid <= 0) continue;
      char chunk[65536];
      ssize_t got = ::read(w.from_fd, chunk, sizeof chunk);
      if (got < 0 && errno == EINTR) continue;
      if (got > 0) {
        w.buf.append(chunk, static_cast<size_t>(got));
        // Parse complete frames: u64 index, u32 length, payload. Each must be the report of
        // the job the worker is running, of a sane size, accepted by on_result.
        size_t pos = 0;
        std::string bad;
        while (w.buf.size() - pos >= 12) {
          uint64_t idx;
          uint32_t len;
          std::memcpy(&idx, w.buf.data() + pos, 8);
          std::memcpy(&len, w.buf.data() + pos + 8, 4);
          if (w.outstanding.empty() || w.outstanding.front() != idx) {
            bad = w.outstanding.empty()
                      ? fmt::format("a report for job {} while it had no job", idx)
                      : fmt::format("a report for job {} while it was running job {}", idx,
                                    w.outstanding.front());
            break;
          }
          if (len > kMaxFrame) {
            bad = fmt::format("a report of {} bytes (at most {} are accepted)", len, kMaxFrame);
            break;
          }
          if (w.buf.size() - pos - 12 < len) break;
          std::string payload = w.buf.substr(pos + 12, len);
          pos += 12 + len;
          try {
            on_result(static_cast<size_t>(idx), payload);
          } catch (const MalformedReport& e) {
            bad = e.what();
            break;
          }
          trace_job(w, static_cast<size_t>(idx), false);
          w.reported = true;
          w.outstanding.pop_front();
          w.job_start = Clock::now();
          if (!w.outstanding.empty()) w.job_limit_s = job_limit(w.outstanding.front());
        }
        if (!bad.empty()) {
          malformed(w, bad);
          continue;
        }
        w.buf.erase(0, pos);
        continue;
      }
      // EOF: the worker died. Find out how.
      int status = 0;
      pid_t pid = w.pid;
      close(w.to_fd);
      close(w.from_fd);
      w.to_fd = w.from_fd = -1;
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      w.pid = -1;
      if (trace) ready_of(w, Clock::now());
      const uint64_t running = w.page->running.load();
      if (running == kRetired) {
        // It reported its last job and retired: the rest of its batch goes to a fresh worker.
        for (auto it = w.outstanding.rbegin(); it != w.outstanding.rend(); ++it)
          queue.push_front(*it);
        w.outstanding.clear();
        continue;
      }
      if (running != kStarting && !w.outstanding.empty() && running != w.outstanding.front() + 1 &&
          ++idle_deaths[w.outstanding.front()] < kMaxIdleDeaths) {
        // It died between jobs (killed from outside, out of memory elsewhere): no job is
        // charged; its batch goes to a fresh worker.
        for (auto it = w.outstanding.rbegin(); it != w.outstanding.rend(); ++it)
          queue.push_front(*it);
        w.outstanding.clear();
        continue;
      }
      if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && w.page->note[0] == '\0' &&
          !w.outstanding.empty() && ++outside_kills[w.outstanding.front()] <= kMaxOutsideKills) {
        // Killed by SIGKILL with nothing said: from outside (an operator, the kernel's OOM
        // killer, a GPU's worker stopped), not by this case's own code, which crucible reports
        // with a note. The case runs again on the next free worker; killed again, it is charged.
        trace_job(w, w.outstanding.front(), true);
        for (auto it = w.outstanding.rbegin(); it != w.outstanding.rend(); ++it)
          queue.push_front(*it);
        w.outstanding.clear();
        continue;
      }
      JobFailure f;
      f.kind = JobFailure::Kind::Crashed;
      if (WIFSIGNALED(status)) {
        f.signal = WTERMSIG(status);
        f.detail = "the worker was killed by " + signal_name(f.signal) + " while running the case";
      } else {
        f.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        f.detail =
            fmt::format("the worker exited with status {} without reporting the case", f.exit_code);
      }
      if (w.page->note[0] != '\0')
        f.detail += ": " + std::string(w.page->note, strnlen(w.page->note, kNoteSize));
      replace(w, f);
    }

    // Hung workers.
    now = Clock::now();
    for (Worker* w : workers_) {
      if (w->outstanding.empty()) continue;
      double ran = std::chrono::duration<double>(now - w->job_start).count();
      if (ran < w->job_limit_s) continue;
      retire(*w, true);
      JobFailure f;
      f.kind = JobFailure::Kind::TimedOut;
      f.detail = w->job_limit_s > opts_.timeout_s
                     ? fmt::format(
                           "still running after {:g} s (--timeout {:g} s + {:g} s for the "
                           "case's size); the worker was killed",
                           w->job_limit_s, opts_.timeout_s, w->job_limit_s - opts_.timeout_s)
                     : fmt::format("still running after {:g} s (--timeout); the worker was killed",
                                   opts_.timeout_s);
      replace(*w, f);
    }
  }
  if (trace) {
    const auto run_end = Clock::now();
    trace->run_start = trace->at(run_start);
    trace->run_end = trace->at(run_end);
    trace->parent_busy_s +=
        std::max(0.0, std::chrono::duration<double>(run_end - run_start).count() - polled_s);
  }
}

}  // namespace crucible
