// Machine peaks for "% of peak": STREAM-like triad bandwidth (a = b + s * c over arrays far
// larger than the caches, 24 bytes per element, best of several passes) and peak f32 FLOP/s
// (independent FMA chains in the widest vector ISA the processor has), both on `threads`
// threads. `crucible calibrate` measures and caches them per machine and thread count; a
// `--perf` run reads the cache (or measures once) and stores them in manifest.json.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "crucible/results/result.h"

namespace crucible {

struct RunSummary;

struct MachinePeaks {
  double triad_gbps = 0;   // GB/s (1e9 bytes)
  double peak_gflops = 0;  // f32 GFLOP/s, an FMA counted as 2
  int threads = 0;
  std::string isa;          // "avx512", "avx2" or "scalar": the FMA loop used
  std::string measured_at;  // UTC timestamp
  std::string cache_file;   // where it was read from or stored ("" = not cached)
};

// Measures now (about a second).
MachinePeaks measure_peaks(int threads);
// The cached peaks of this machine for `threads` (0 = number of cores); measured and cached
// when absent or when `remeasure`. Cache: $CRUCIBLE_CACHE_DIR, else $XDG_CACHE_HOME/crucible,
// else ~/.cache/crucible; file peaks.json keyed by host, cpu model and threads.
MachinePeaks machine_peaks(int threads, bool remeasure = false);

nlohmann::json peaks_json(const MachinePeaks& p);

// A timed case's fraction of the roofline: max(GB/s / triad, GFLOP/s / peak) (the resource
// that bounds it), 0 when neither is known.
double peak_fraction(const TimingRecord& t, const MachinePeaks& p);
// Sets each timed op's pct_of_peak (best over its timed cases) and the run's peaks.
void add_peak_fractions(RunSummary& s, const std::vector<TimingRecord>& timings,
                        const MachinePeaks& p);

}  // namespace crucible
