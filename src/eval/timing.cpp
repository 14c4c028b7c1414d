// Timing of one case: candidate and baseline alternating on the same inputs, after warm-up,
// with a cache flush before each sample (cold cache) unless disabled.
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "crucible/core/cache_lines.h"
#include "crucible/core/error.h"
#include "crucible/core/map_tensors.h"
#include "crucible/eval/evaluate.h"
#include "crucible/ops/materialize.h"

namespace crucible {

namespace {

// Cold cache: before each sample, the bytes of the op's tensor arguments are evicted from every
// cache level, line by line (clflushopt where the processor has it, else clflush), so the op
// reads its inputs from memory as it would in a model where they were produced long before.
// Evicting exactly the op's data costs time in proportion to it; sweeping a buffer larger than
// the last-level cache instead (the usual trick) costs the cache's size every sample, which on a
// server part with a shared 260 MB L3 is tens of milliseconds per sample for any op. Outputs are
// each backend's own allocations and are not touched.
class CacheFlusher {
 public:
  explicit CacheFlusher(const Values& args) {
    for (const Value& v : args) {
      if (v.is_tensor() && v.tensor().defined()) add(v.tensor());
      if (v.kind() == ValueKind::TensorList || v.kind() == ValueKind::OptTensorList)
        for (const Tensor& t : v.tensors())
          if (t.defined()) add(t);
    }
#if !defined(__x86_64__)
    sweep_.assign((size_t{64} << 20) / sizeof(uint64_t), 1);
#endif
  }
  CacheFlusher(const CacheFlusher&) = delete;
  void flush() {
#if defined(__x86_64__)
    for (const auto& [p, n] : spans_) evict_cache_lines(p, n);
#else
    for (size_t i = 0; i < sweep_.size(); i += 8) sweep_[i] += 1;
    sink_ = sink_ + sweep_[sweep_.size() / 2];
#endif
  }

 private:
  void add(const Tensor& t) {
    if (!t.device().is_cpu() || t.numel() == 0) return;
    const auto [lo, hi] = t.storage_extent();
    const char* base = static_cast<const char*>(t.storage()->data()) + lo * t.itemsize();
    spans_.emplace_back(base, static_cast<size_t>(hi - lo) * t.itemsize());
  }
  std::vector<std::pair<const char*, size_t>> spans_;
#if !defined(__x86_64__)
  std::vector<uint64_t> sweep_;
  volatile uint64_t sink_ = 0;
#endif
};

TimingStats stats_of(std::vector<double> xs) {
  TimingStats s;
  if (xs.empty()) return s;
  std::sort(xs.begin(), xs.end());
  auto pct = [&](double p) {
    double pos = p * static_cast<double>(xs.size() - 1);
    size_t lo = static_cast<size_t>(std::floor(pos));
    size_t hi = std::min(lo + 1, xs.size() - 1);
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - static_cast<double>(lo));
  };
  s.median_s = pct(0.5);
  s.p10_s = pct(0.1);
  s.p90_s = pct(0.9);
  s.samples = static_cast<int>(xs.size());
  return s;
}

// Turns and settled threads. A thread pool keeps its workers spinning for a while after a call
// so that the next call starts without a wake-up (libgomp, which ATen uses, spins for about
// 20 ms here; crucible's cpu pool for 1 ms). Alternating sample by sample, those spinning
// workers of one backend share the cores with the other backend's next sample: on this 2-core
// machine an in-place add of 3 MB measured 430 us after an ATen sample and 235 us alone. So
// the backends take turns of kTurn samples: before a turn the harness sleeps in 200 us steps
// until no other thread of the process is running (the other backend's workers asleep, at most
// 100 ms), the turn's first sample wakes its pool and is not counted, and the
// rest run back to back as a model's calls would (each backend's pool as hot as it keeps it).
constexpr int kTurn = 5;

// Whether a thread of this process other than the caller is running or runnable (state R in
// /proc/self/task/<tid>/stat): a spinning pool worker is. The scheduler's state is read, not
// CPU-time counters, which the kernel brings up to date only at its ticks.
bool other_threads_running() {
  const auto self = static_cast<long>(::syscall(SYS_gettid));
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    const std::string name = e.path().filename().string();
    if (name == std::to_string(self)) continue;
    std::ifstream f(e.path() / "stat");
    std::string line;
    if (!std::getline(f, line)) continue;  // the thread ended
    const size_t close = line.rfind(')');  // the name may hold spaces and parentheses
    if (close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'R')
      return true;
  }
  return false;
}

void settle_threads() {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
  // Two consecutive quiet looks 200 us apart: a worker between two spins is not missed.
  int quiet = 0;
  while (quiet < 2 && std::chrono::steady_clock::now() < deadline) {
    quiet = other_threads_running() ? 0 : quiet + 1;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

// One sample. The outputs are returned, not freed inside the timed region: releasing a result
// is not part of the op (and costs one backend an munmap, the other a cache hand-back).
double time_once(Backend& b, const OpDef& op, const Values& args, DeviceTimer& timer,
                 Values* outputs) {
  b.synchronize();
  timer.start();
  *outputs = b.run(op, args);
  timer.stop();
  b.synchronize();
  return timer.elapsed_seconds();
}

// Every tensor argument on the backend's device before the timed calls, those in lists (cat's,
// index's) included: a host tensor left in a list would be uploaded inside every sample.
Values on_device(Backend& b, const Values& vs) {
  if (b.device().is_cpu()) return deep_copy(vs);
  return map_tensors(vs, [&](const Tensor& t) { return b.to_device(t); });
}

// The arguments an in-place op writes (mutable and not an `out=` output), put back to their
// first values before every call, outside the timed region. Called again and again on its own
// result, an in-place op's data drifts, and every sample would time other values than the
// call's: a factor below 1 takes `mul_`'s tensor into subnormals (whose multiplies take
// microcode assists), one above 1 to infinity. Host tensors only (a device backend's memory is
// its own).
class InplaceRestorer {
 public:
  InplaceRestorer(const OpDef& op, const Backend& b, const Values& args) {
    if (!b.device().is_cpu()) return;
    for (size_t i : op.schema.mutated_arguments()) {
      if (op.schema.arguments[i].kwarg_only || i >= args.size() || !args[i].is_tensor()) continue;
      const Tensor& t = args[i].tensor();
      if (t.defined() && t.device().is_cpu()) pairs_.emplace_back(t, t.clone());
    }
  }
  void restore() const {
    for (const auto& [t, first] : pairs_) t.copy_from(first);
  }

 private:
  std::vector<std::pair<Tensor, Tensor>> pairs_;  // (the argument, its first values)
};

}  // namespace

TimingRecord time_case(const Case& c, const OpDef& op, Backend& candidate, Backend& baseline,
                       const TimingOptions& opts) {
  TimingRecord rec;
  rec.case_id = c.id();
  rec.op = c.op;
  rec.call = cases::print_call(c.call);
  rec.cold_cache = opts.cold_cache;
  try {
    Values inputs = materialize(op, c.call, c.seed);
    Values cand_args = on_device(candidate, inputs);
    Values base_args = on_device(baseline, inputs);
    // The cost model needs the outputs' shapes: the meta layer gives them without computing
    // anything and without trusting the candidate (whose outputs could inflate its bytes);
    // where they depend on the values, the reference's outputs give them.
    const Cost cost = [&] {
      if (!op.data_dependent) return op.run_cost(inputs, op.run_meta(inputs));
      Values ref_args = deep_copy(inputs);
      return op.run_cost(inputs, op.run_ref(ref_args, c.seed));
    }();
    rec.flops = cost.flops;
    rec.bytes = cost.bytes;

    // Cold caches for memory-bound work (the default), warm for compute-bound work, where the
    // flush would only add noise: the op's arithmetic intensity decides.
    const bool cold = opts.cold_cache && (cost.bytes <= 0 || cost.flops / cost.bytes < 8.0);
    rec.cold_cache = cold;
    auto cand_timer = candidate.make_timer();
    auto base_timer = baseline.make_timer();
    Values last_out;  // the previous sample's outputs
    const InplaceRestorer cand_restorer(op, candidate, cand_args);
    const InplaceRestorer base_restorer(op, baseline, base_args);
    for (int i = 0; i < opts.warmup; ++i) {
      cand_restorer.restore();
      time_once(candidate, op, cand_args, *cand_timer, &last_out);
      base_restorer.restore();
      time_once(baseline, op, base_args, *base_timer, &last_out);
    }
    // Each backend's own copy of the arguments is flushed before its sample.
    std::optional<CacheFlusher> cand_flusher, base_flusher;
    if (cold) {
      cand_flusher.emplace(cand_args);
      base_flusher.emplace(base_args);
    }
    std::vector<double> ct, bt;
    double csum = 0, bsum = 0;
    const auto wall_start = std::chrono::steady_clock::now();
    auto wall = [&] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    };
    // At least min_samples each; then until both have min_seconds of samples, max_samples are
    // taken, or the wall-time budget (flushes and settling included) is spent. Turns alternate
    // which backend goes first so drift affects both equally.
    bool cand_first = true;
    while (static_cast<int>(ct.size()) < opts.min_samples ||
           (static_cast<int>(ct.size()) < opts.max_samples &&
            (csum < opts.min_seconds || bsum < opts.min_seconds) &&
            wall() < opts.max_wall_seconds)) {
      for (int k = 0; k < 2; ++k) {
        const bool cand_turn = (k == 0) == cand_first;
        Backend& b = cand_turn ? candidate : baseline;
        const Values& args = cand_turn ? cand_args : base_args;
        DeviceTimer& timer = cand_turn ? *cand_timer : *base_timer;
        std::optional<CacheFlusher>& flusher = cand_turn ? cand_flusher : base_flusher;
        const InplaceRestorer& restorer = cand_turn ? cand_restorer : base_restorer;
        last_out.clear();
        if (opts.settle_threads) settle_threads();
        for (int s = 0; s < kTurn; ++s) {
          // The previous sample's outputs are freed here, outside the timed region. They are
          // not evicted: a backend that reuses a freed block gets it as warm as a model's next
          // op would (evicting them measured no different on the traces' 25 MB activations).
          last_out.clear();
          restorer.restore();  // before the flush: the copy would warm what it evicts
          if (flusher) flusher->flush();
          const double t = time_once(b, op, args, timer, &last_out);
          if (s == 0) continue;  // woke the pool
          (cand_turn ? ct : bt).push_back(t);
          (cand_turn ? csum : bsum) += t;
        }
      }
      cand_first = !cand_first;
    }
    rec.candidate = stats_of(ct);
    rec.baseline = stats_of(bt);
    if (rec.candidate.median_s > 0) {
      rec.speedup = rec.baseline.median_s / rec.candidate.median_s;
      rec.gflops = rec.flops / rec.candidate.median_s * 1e-9;
      rec.gbps = rec.bytes / rec.candidate.median_s * 1e-9;
    }
  } catch (const std::exception& e) {
    rec.error = e.what();
  }
  return rec;
}

}  // namespace crucible
