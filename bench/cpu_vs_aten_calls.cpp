// bench_cpu_vs_aten_calls: single calls of the cpu backend against ATen on the traces' performance
// cases of a few ops, in this process, warm caches: each backend runs its call in turns of
// `reps` back-to-back calls, alternating, and the best turn's time per call is kept. A quick
// look at one op's kernel between full `crucible run --perf` runs (which take medians: those are
// the judged numbers). With `--cold 1` the arguments' cache lines are evicted before each call,
// outside the timed part, as `crucible run --perf` does by default.
//   build/bench/bench_cpu_vs_aten_calls --ops gelu,elu [--threads 2] [--per-op 4] [--turns 30]
//                                       [--cold 1]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench_util.h"

#include "crucible/backends/backend.h"
#include "crucible/backends/blas_core.h"
#include "crucible/cases/literal.h"
#include "crucible/core/cache_lines.h"
#include "crucible/core/error.h"
#include "crucible/ops/materialize.h"
#include "crucible/suites/suite.h"

using namespace crucible;
using crucible::bench::geomean;
using crucible::bench::median;
using crucible::bench::split;

namespace {

// The tensor arguments' cache lines evicted (the bytes their views span).
void evict_args(const Values& args) {
  for (const Value& v : args) {
    if (!v.is_tensor() || !v.tensor().defined() || v.tensor().numel() == 0) continue;
    const Tensor& t = v.tensor();
    const auto [lo, hi] = t.storage_extent();
    evict_cache_lines(static_cast<const char*>(t.storage()->data()) + lo * t.itemsize(),
                      static_cast<size_t>(hi - lo) * t.itemsize());
  }
}

// The time per call of `reps` calls (each after an eviction when `cold`, not timed).
double turn_time(Backend& b, const OpDef& op, const Values& args, int reps, bool cold) {
  using clock = std::chrono::steady_clock;
  double total = 0;
  if (!cold) {
    const auto t0 = clock::now();
    for (int r = 0; r < reps; ++r) (void)b.run(op, args);
    total = std::chrono::duration<double>(clock::now() - t0).count();
  } else {
    for (int r = 0; r < reps; ++r) {
      evict_args(args);
      const auto t0 = clock::now();
      (void)b.run(op, args);
      total += std::chrono::duration<double>(clock::now() - t0).count();
    }
  }
  return total / reps;
}

}  // namespace

int main(int argc, char** argv) {
  crucible::cpu::restart_with_corrected_blas_core(argv);
  std::string traces = std::string(CRUCIBLE_SOURCE_DIR) + "/data/traces";
  int per_op = 4, threads = 2, turns = 30;
  bool cold = false;
  std::string ops;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--ops")
      ops = v;
    else if (a == "--threads")
      threads = std::atoi(v.c_str());
    else if (a == "--per-op")
      per_op = std::atoi(v.c_str());
    else if (a == "--turns")
      turns = std::atoi(v.c_str());
    else if (a == "--cold") {
      if (v != "0" && v != "1") {
        std::fprintf(stderr, "--cold %s: give 0 or 1\n", v.c_str());
        return 2;
      }
      cold = v == "1";
    } else if (a == "--traces") {
      traces = v;
    } else {
      std::fprintf(stderr, "unknown flag %s\n", a.c_str());
      return 2;
    }
  }
  try {
    auto cpu = BackendRegistry::instance().create("cpu");
    auto aten = BackendRegistry::instance().create("aten");
    cpu->set_num_threads(threads);
    aten->set_num_threads(threads);
    SuiteOptions so;
    so.suite = "traces:" + traces;
    so.perf = true;
    so.perf_dtype = DType::Float32;
    so.calls_per_op = per_op;
    so.max_numel = int64_t{1} << 24;  // as `crucible run`'s defaults
    so.max_flops = 2e9;
    so.ops = split(ops);
    for (const SuiteCase& sc : build_suite(so)) {
      if (!sc.op || !sc.skip_reason.empty() || !sc.c.perf) continue;
      const OpDef& op = *sc.op;
      const Values args = materialize(op, sc.c.call, 1);
      std::string why;
      if (!cpu->supports(op, args, &why) || !aten->supports(op, args, &why)) continue;
      double tc = 1e30, ta = 1e30;
      for (int t = 0; t < turns; ++t) {
        // Turns of 5 calls; the first call of a turn wakes the pool and is not counted.
        (void)cpu->run(op, args);
        tc = std::min(tc, turn_time(*cpu, op, args, 4, cold));
        (void)aten->run(op, args);
        ta = std::min(ta, turn_time(*aten, op, args, 4, cold));
      }
      fmt::print("{:<40} {:>10.1f} us {:>10.1f} us {:>7.2f}x  {}\n", op.name, tc * 1e6, ta * 1e6,
                 ta / tc, cases::print_call(sc.c.call).substr(0, 100));
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "bench_cpu_vs_aten_calls: %s\n", e.what());
    return 1;
  }
  return 0;
}
