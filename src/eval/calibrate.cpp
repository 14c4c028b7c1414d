// Machine peaks (see calibrate.h): triad bandwidth and f32 FMA throughput on N threads.
#include "crucible/eval/calibrate.h"

#include <immintrin.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "crucible/core/error.h"
#include "crucible/report/manifest.h"
#include "crucible/report/summary.h"

namespace crucible {

namespace {

using Clock = std::chrono::steady_clock;

// Runs fn(t) on threads 0..n-1 at once (t = 0 on the caller); returns the wall seconds of the
// slowest, measured from a common start.
template <typename Fn>
double on_threads(int n, Fn fn) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  for (int t = 1; t < n; ++t)
    pool.emplace_back([&, t] {
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) {
      }
      fn(t);
    });
  while (ready.load() != n - 1) {
  }
  const auto t0 = Clock::now();
  go.store(true, std::memory_order_release);
  fn(0);
  for (auto& th : pool) th.join();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double triad_gbps(int threads) {
  // Three arrays of 16M doubles (128 MiB each): far beyond any last-level cache.
  const int64_t n = int64_t{1} << 24;
  std::unique_ptr<double[]> a(new double[n]), b(new double[n]), c(new double[n]);
  auto part = [&](int t) {
    const int64_t lo = n * t / threads, hi = n * (t + 1) / threads;
    return std::pair<int64_t, int64_t>{lo, hi};
  };
  // First touch on the threads that use the pages.
  on_threads(threads, [&](int t) {
    auto [lo, hi] = part(t);
    for (int64_t i = lo; i < hi; ++i) a[i] = 0, b[i] = 1.0, c[i] = 2.0;
  });
  double best = 1e30;
  const double s = 3.0;
  for (int rep = 0; rep < 6; ++rep) {
    const double sec = on_threads(threads, [&](int t) {
      auto [lo, hi] = part(t);
      double* __restrict pa = a.get();
      const double* __restrict pb = b.get();
      const double* __restrict pc = c.get();
      for (int64_t i = lo; i < hi; ++i) pa[i] = pb[i] + s * pc[i];
    });
    if (rep > 0) best = std::min(best, sec);  // the first pass warms up
  }
  if (a[n / 2] != 7.0) internal_error("calibrate: triad computed a wrong value");
  return 24.0 * static_cast<double>(n) / best * 1e-9;
}

constexpr int64_t kFmaIters = 1 << 22;

// Twelve independent FMA chains in named variables, so that they live in registers (an array
// of vectors may be kept in memory, and the store-to-load latency then bounds the loop: that
// measured a third of the machine's FMA rate).
#define CRUCIBLE_FMA12(fma)                                                               \
  a0 = fma(a0, m, add), a1 = fma(a1, m, add), a2 = fma(a2, m, add), a3 = fma(a3, m, add), \
  a4 = fma(a4, m, add), a5 = fma(a5, m, add), a6 = fma(a6, m, add), a7 = fma(a7, m, add), \
  a8 = fma(a8, m, add), a9 = fma(a9, m, add), a10 = fma(a10, m, add), a11 = fma(a11, m, add)

__attribute__((target("avx512f"))) double fma_avx512(float seed) {
  const __m512 m = _mm512_set1_ps(0.999999f), add = _mm512_set1_ps(1e-7f);
  __m512 a0 = _mm512_set1_ps(seed), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0,
         a8 = a0, a9 = a0, a10 = a0, a11 = a0;
  for (int64_t i = 0; i < kFmaIters; ++i) {
    CRUCIBLE_FMA12(_mm512_fmadd_ps);
  }
  const __m512 s =
      _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                                  _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7))),
                    _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)));
  alignas(64) float out[16];
  _mm512_store_ps(out, s);
  double r = 0;
  for (float f : out) r += f;
  return r;
}

__attribute__((target("avx2,fma"))) double fma_avx2(float seed) {
  const __m256 m = _mm256_set1_ps(0.999999f), add = _mm256_set1_ps(1e-7f);
  __m256 a0 = _mm256_set1_ps(seed), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0,
         a8 = a0, a9 = a0, a10 = a0, a11 = a0;
  for (int64_t i = 0; i < kFmaIters; ++i) {
    CRUCIBLE_FMA12(_mm256_fmadd_ps);
  }
  const __m256 s =
      _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                                  _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7))),
                    _mm256_add_ps(_mm256_add_ps(a8, a9), _mm256_add_ps(a10, a11)));
  alignas(32) float out[8];
  _mm256_store_ps(out, s);
  double r = 0;
  for (float f : out) r += f;
  return r;
}

#undef CRUCIBLE_FMA12

double fma_scalar(float seed) {
  float acc[12];
  for (auto& v : acc) v = seed;
  for (int64_t i = 0; i < kFmaIters; ++i)
    for (auto& v : acc) v = v * 0.999999f + 1e-7f;
  double r = 0;
  for (float f : acc) r += f;
  return r;
}

std::string fma_isa() {
  if (__builtin_cpu_supports("avx512f")) return "avx512";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "avx2";
  return "scalar";
}

double peak_gflops(int threads, const std::string& isa) {
  const int lanes = isa == "avx512" ? 16 : isa == "avx2" ? 8 : 1;
  std::vector<double> sink(static_cast<size_t>(threads));
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    const double sec = on_threads(threads, [&](int t) {
      const float seed = 1.0f + static_cast<float>(t);
      sink[static_cast<size_t>(t)] = isa == "avx512" ? fma_avx512(seed)
                                     : isa == "avx2" ? fma_avx2(seed)
                                                     : fma_scalar(seed);
    });
    best = std::min(best, sec);
  }
  for (double v : sink)
    if (!(v > 0)) internal_error("calibrate: the FMA loop computed a wrong value");
  const double flops = 2.0 * 12 * lanes * static_cast<double>(kFmaIters) * threads;
  return flops / best * 1e-9;
}

int cores() {
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

std::filesystem::path cache_path() {
  namespace fs = std::filesystem;
  if (const char* d = std::getenv("CRUCIBLE_CACHE_DIR"); d && *d) return fs::path(d) / "peaks.json";
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d)
    return fs::path(d) / "crucible" / "peaks.json";
  if (const char* h = std::getenv("HOME"); h && *h)
    return fs::path(h) / ".cache" / "crucible" / "peaks.json";
  return {};
}

std::string cache_key(int threads) {
  const MachineInfo m = machine_info();
  return m.hostname + "|" + m.cpu_model + "|threads=" + std::to_string(threads);
}

}  // namespace

MachinePeaks measure_peaks(int threads) {
  if (threads <= 0) threads = cores();
  MachinePeaks p;
  p.threads = threads;
  p.isa = fma_isa();
  p.triad_gbps = triad_gbps(threads);
  p.peak_gflops = peak_gflops(threads, p.isa);
  const std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  p.measured_at = stamp;
  return p;
}

MachinePeaks machine_peaks(int threads, bool remeasure) {
  if (threads <= 0) threads = cores();
  const std::filesystem::path path = cache_path();
  const std::string key = cache_key(threads);
  nlohmann::json cache = nlohmann::json::object();
  if (!path.empty()) {
    std::ifstream f(path);
    if (f) cache = nlohmann::json::parse(f, nullptr, false);
    if (cache.is_discarded() || !cache.is_object()) cache = nlohmann::json::object();
  }
  if (!remeasure && cache.contains(key)) {
    const nlohmann::json& j = cache[key];
    MachinePeaks p;
    p.triad_gbps = j.value("triad_gbps", 0.0);
    p.peak_gflops = j.value("peak_f32_gflops", 0.0);
    p.threads = threads;
    p.isa = j.value("isa", "");
    p.measured_at = j.value("measured_at", "");
    p.cache_file = path.string();
    if (p.triad_gbps > 0 && p.peak_gflops > 0) return p;
  }
  MachinePeaks p = measure_peaks(threads);
  if (!path.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    cache[key] = peaks_json(p);
    std::ofstream f(path);
    if (f) {
      f << cache.dump(2) << "\n";
      p.cache_file = path.string();
    }
  }
  return p;
}

nlohmann::json peaks_json(const MachinePeaks& p) {
  return {{"triad_gbps", p.triad_gbps},   {"peak_f32_gflops", p.peak_gflops},
          {"threads", p.threads},         {"isa", p.isa},
          {"measured_at", p.measured_at}, {"cache_file", p.cache_file}};
}

double peak_fraction(const TimingRecord& t, const MachinePeaks& p) {
  double f = 0;
  if (p.triad_gbps > 0 && t.gbps > 0) f = std::max(f, t.gbps / p.triad_gbps);
  if (p.peak_gflops > 0 && t.gflops > 0) f = std::max(f, t.gflops / p.peak_gflops);
  return f;
}

void add_peak_fractions(RunSummary& s, const std::vector<TimingRecord>& timings,
                        const MachinePeaks& p) {
  s.peak_triad_gbps = p.triad_gbps;
  s.peak_gflops = p.peak_gflops;
  for (OpSummary& o : s.ops) {
    double best = 0;
    for (const TimingRecord& t : timings)
      if (t.op == o.op && t.error.empty() && t.speedup > 0)
        best = std::max(best, peak_fraction(t, p));
    o.pct_of_peak = 100.0 * best;
  }
}

}  // namespace crucible
