// `crucible calibrate`: measures this machine's triad bandwidth and peak f32 FLOP/s (the
// denominators of "% of peak" in --perf runs) and caches them per machine and thread count.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "crucible/core/error.h"
#include "crucible/eval/calibrate.h"

namespace crucible {

int command_calibrate(int threads, bool cached, bool json) {
  if (threads < 0)
    usage_error("--threads must be >= 0 (0: number of cores), got " + std::to_string(threads));
  if (threads > max_parallelism())
    usage_error(fmt::format("--threads {}: at most {} (4 x the {} cores)", threads,
                            max_parallelism(), max_parallelism() / 4));
  const MachinePeaks p = machine_peaks(threads, /*remeasure=*/!cached);
  if (json) {
    fmt::print("{}\n", peaks_json(p).dump(2));
    return 0;
  }
  fmt::print("threads            {}\n", p.threads);
  fmt::print("triad bandwidth    {:.1f} GB/s\n", p.triad_gbps);
  fmt::print("peak f32 (FMA, {}) {:.1f} GFLOP/s\n", p.isa, p.peak_gflops);
  fmt::print("measured at        {}\n", p.measured_at);
  if (!p.cache_file.empty()) fmt::print("cached in          {}\n", p.cache_file);
  return 0;
}

}  // namespace crucible
