// The speed table of crucible's reference against ATen: the traces suite's performance cases
// (real-model calls), `ref` and `aten` timed alternating on the same inputs, in this process.
// Prints one row per op: cases timed, the median over its cases of each backend's median time,
// and the geometric mean of the per-case ratios ref / aten. Informative: the reference is meant
// to be right, not fast; the `cpu` backend is judged against the aten column.
//
//   bench_ref_vs_aten [--traces DIR] [--per-op N] [--threads T] [--max-numel N] [--ops a,b]
//
// Fix OpenMP's pool too for stable numbers: OMP_NUM_THREADS=T bench_ref_vs_aten --threads T.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench_util.h"

#include "crucible/backends/backend.h"
#include "crucible/core/error.h"
#include "crucible/eval/evaluate.h"
#include "crucible/suites/suite.h"

using namespace crucible;
using crucible::bench::geomean;
using crucible::bench::median;
using crucible::bench::split;

namespace {

struct Row {
  std::vector<double> ref_s, aten_s, ratio;
  int errors = 0;
};

}  // namespace

int main(int argc, char** argv) {
  std::string traces = std::string(CRUCIBLE_SOURCE_DIR) + "/data/traces";
  int per_op = 2, threads = 1;
  int64_t max_numel = int64_t{1} << 20;
  std::string ops;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i], v = argv[i + 1];
    if (a == "--traces")
      traces = v;
    else if (a == "--per-op")
      per_op = std::atoi(v.c_str());
    else if (a == "--threads")
      threads = std::atoi(v.c_str());
    else if (a == "--max-numel")
      max_numel = std::atoll(v.c_str());
    else if (a == "--ops")
      ops = v;
    else {
      std::fprintf(stderr, "unknown flag %s\n", a.c_str());
      return 2;
    }
  }
  try {
    auto aten = BackendRegistry::instance().create("aten");
    auto ref = BackendRegistry::instance().create("ref");
    aten->set_num_threads(threads);
    ref->set_num_threads(threads);

    SuiteOptions so;
    so.suite = "traces:" + traces;
    so.perf = true;
    so.max_numel = max_numel;
    so.max_flops = 2e8;
    so.ops = split(ops);
    TimingOptions to;
    to.max_wall_seconds = 0.5;
    to.min_seconds = 0.02;

    std::map<std::string, Row> rows;
    std::map<std::string, int> taken;
    for (const SuiteCase& sc : build_suite(so)) {
      if (!sc.op || !sc.skip_reason.empty() || !sc.c.perf) continue;
      if (!aten->has_op(*sc.op) || taken[sc.c.op] >= per_op) continue;
      ++taken[sc.c.op];
      TimingRecord t = time_case(sc.c, *sc.op, *ref, *aten, to);
      Row& r = rows[sc.c.op];
      if (!t.error.empty() || t.candidate.median_s <= 0 || t.baseline.median_s <= 0) {
        ++r.errors;
        continue;
      }
      r.ref_s.push_back(t.candidate.median_s);
      r.aten_s.push_back(t.baseline.median_s);
      r.ratio.push_back(t.candidate.median_s / t.baseline.median_s);
    }

    fmt::print("ref vs aten ({}), traces {}, {} thread(s), up to {} case(s) per op\n",
               aten->version(), traces, threads, per_op);
    fmt::print("{:<44} {:>5} {:>12} {:>12} {:>10}\n", "op", "cases", "ref median", "aten median",
               "ref/aten");
    std::vector<double> all;
    for (const auto& [op, r] : rows) {
      if (r.ratio.empty()) {
        fmt::print("{:<44} {:>5} {:>12} {:>12} {:>10}\n", op, 0, "-", "-",
                   fmt::format("{} err", r.errors));
        continue;
      }
      const double g = geomean(r.ratio);
      all.push_back(g);
      fmt::print("{:<44} {:>5} {:>10.3g} s {:>10.3g} s {:>9.1f}x\n", op, r.ratio.size(),
                 median(r.ref_s), median(r.aten_s), g);
    }
    fmt::print("geometric mean over {} ops: ref takes {:.1f}x ATen's time\n", all.size(),
               geomean(all));
  } catch (const Error& e) {
    std::fprintf(stderr, "bench_ref_vs_aten: %s\n", e.what());
    return e.kind() == ErrorKind::Usage ? 2 : 1;
  }
  return 0;
}
