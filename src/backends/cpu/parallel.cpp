// The cpu backend's thread pool. Workers are persistent; a parallel_for splits its range into
// at most four chunks per thread, claimed in order from a shared counter; the calling thread
// takes chunks too, and a call made from
// inside a chunk runs inline (no nested parallelism, no deadlock). Worker threads do not
// survive fork(): a pool made by another process is abandoned and a new one started.
#include "backends/cpu/parallel.h"

#include <immintrin.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace crucible::cpu {

namespace {

thread_local bool t_inside_pool_work = false;

int default_threads() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

// One parallel_for call: the chunks are claimed through `next`; `done` counts finished ones.
struct Job {
  const std::function<void(int64_t)>* chunk = nullptr;
  int64_t nchunks = 0;
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> done{0};
  std::mutex error_mutex;
  std::exception_ptr error;

  // Runs chunks until none is left; returns after its last claimed chunk finished.
  void work() {
    for (;;) {
      int64_t i = next.fetch_add(1, std::memory_order_relaxed);
      if (i >= nchunks) return;
      try {
        (*chunk)(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
      }
      done.fetch_add(1, std::memory_order_acq_rel);
    }
  }
};

constexpr int64_t kChunksPerThread = 4;

// Spins for a while (a kernel call often follows another), then blocks. Waking a blocked
// worker costs tens of microseconds in a VM, so a spin shorter than the gap between two ops
// (the caller's own work between them: allocating, checking, copying) leaves the second
// thread asleep for every op of a model and mid-sized ops run on one core. One millisecond
// covers those gaps; libgomp, which ATen uses, spins for about 20 ms by default.
constexpr auto kSpin = std::chrono::milliseconds(1);

class ThreadPool {
 public:
  explicit ThreadPool(int threads) : pid_(getpid()) {
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { loop(); });
  }
  ~ThreadPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
      generation_.fetch_add(1);
    }
    wake_.notify_all();
    for (std::thread& t : workers_) t.join();
  }
  int size() const { return static_cast<int>(workers_.size()) + 1; }
  pid_t pid() const { return pid_; }

  void run(int64_t nchunks, const std::function<void(int64_t)>& chunk) {
    std::lock_guard<std::mutex> submit(submit_mutex_);  // one job at a time
    auto job = std::make_shared<Job>();
    job->chunk = &chunk;
    job->nchunks = nchunks;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = job;
      generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    t_inside_pool_work = true;
    job->work();
    t_inside_pool_work = false;
    auto start = std::chrono::steady_clock::now();
    while (job->done.load(std::memory_order_acquire) < nchunks) {
      if (std::chrono::steady_clock::now() - start < kSpin) {
        _mm_pause();
      } else {
        std::this_thread::yield();
      }
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_.reset();
    }
    if (job->error) std::rethrow_exception(job->error);
  }

 private:
  void loop() {
    t_inside_pool_work = true;
    uint64_t seen = 0;
    for (;;) {
      auto start = std::chrono::steady_clock::now();
      while (generation_.load(std::memory_order_acquire) == seen &&
             std::chrono::steady_clock::now() - start < kSpin)
        _mm_pause();
      std::shared_ptr<Job> job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return generation_.load() != seen; });
        seen = generation_.load();
        if (stop_) return;
        job = job_;
      }
      if (job) job->work();
    }
  }

  pid_t pid_;
  std::vector<std::thread> workers_;
  std::mutex submit_mutex_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::atomic<uint64_t> generation_{0};
  bool stop_ = false;
  std::shared_ptr<Job> job_;
};

std::mutex g_pool_mutex;
int g_threads = 0;  // 0: not chosen yet
ThreadPool* g_pool = nullptr;

// The pool of this process with the current thread count (made on first use).
ThreadPool* pool() {
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  if (g_threads == 0) g_threads = default_threads();
  if (g_pool && g_pool->pid() != getpid()) g_pool = nullptr;  // made before a fork: abandon it
  if (g_pool && g_pool->size() != g_threads) {
    delete g_pool;
    g_pool = nullptr;
  }
  if (!g_pool) g_pool = new ThreadPool(g_threads);
  return g_pool;
}

}  // namespace

void set_num_threads(int n) {
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  g_threads = n < 1 ? default_threads() : n;
}

int num_threads() {
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  if (g_threads == 0) g_threads = default_threads();
  return g_threads;
}

void parallel_for(int64_t begin, int64_t end, int64_t grain,
                  const std::function<void(int64_t, int64_t)>& fn) {
  if (end <= begin) return;
  const int64_t n = end - begin;
  grain = std::max<int64_t>(grain, 1);
  int threads = t_inside_pool_work ? 1 : num_threads();
  // A range above the grain is split into up to kChunksPerThread chunks per thread (each at
  // least a quarter of the grain), claimed in order: a worker that wakes late (a futex wake-up
  // costs tens of microseconds in a VM) finds the caller already through part of the range and
  // takes what is left, instead of the caller waiting for a whole half.
  int64_t nchunks = 1;
  if (threads > 1 && n > grain)
    nchunks = std::min<int64_t>(
        {static_cast<int64_t>(threads) * kChunksPerThread, (4 * n + grain - 1) / grain, n});
  if (nchunks <= 1) {
    fn(begin, end);
    return;
  }
  const int64_t base = n / nchunks, extra = n % nchunks;
  std::function<void(int64_t)> chunk = [&](int64_t i) {
    int64_t lo = begin + i * base + std::min(i, extra);
    int64_t hi = lo + base + (i < extra ? 1 : 0);
    fn(lo, hi);
  };
  pool()->run(nchunks, chunk);
}

}  // namespace crucible::cpu
