#include "ops/ref_parallel.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace crucible::refpar {
namespace {

std::atomic<int> g_threads{0};  // 0: the default

int default_threads() {
  const unsigned hw = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp<unsigned>(hw, 1, 16));
}

}  // namespace

int threads() {
  const int n = g_threads.load();
  return n > 0 ? n : default_threads();
}

int set_threads(int n) { return g_threads.exchange(std::max(n, 0)); }

int64_t task_count(double work, double grain, int64_t limit) {
  if (limit <= 1 || !(work > grain)) return 1;
  const double n = std::min(work / grain, static_cast<double>(limit));
  return std::max<int64_t>(1, static_cast<int64_t>(n));
}

void for_each_task(int64_t count, const std::function<void(int64_t)>& task) {
  if (count <= 0) return;
  const int64_t nt = std::min<int64_t>(threads(), count);
  if (nt <= 1) {
    for (int64_t i = 0; i < count; ++i) task(i);
    return;
  }
  std::exception_ptr error;
  std::mutex error_mutex;
  auto run_range = [&](int64_t t) {
    const int64_t lo = t * count / nt, hi = (t + 1) * count / nt;
    try {
      for (int64_t i = lo; i < hi; ++i) task(i);
    } catch (...) {
      const std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(nt - 1));
  int64_t started = 1;
  try {
    for (; started < nt; ++started) pool.emplace_back(run_range, started);
  } catch (const std::system_error&) {
    // No more threads: this one runs the ranges that have none (the partition is unchanged).
  }
  run_range(0);
  for (int64_t t = started; t < nt; ++t) run_range(t);
  for (std::thread& th : pool) th.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace crucible::refpar
