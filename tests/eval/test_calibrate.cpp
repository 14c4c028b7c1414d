// Machine peaks: the roofline fraction takes the bounding resource, the per-machine cache is
// read back instead of measuring again, and the report columns carry the fraction.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "crucible/eval/calibrate.h"
#include "crucible/report/manifest.h"
#include "crucible/report/summary.h"
#include "sandbox/remove_tree.h"

namespace crucible {
namespace {

TEST(Calibrate, PeakFractionIsTheBoundingResource) {
  MachinePeaks p;
  p.triad_gbps = 20;
  p.peak_gflops = 100;
  TimingRecord t;
  t.gbps = 10;   // 50% of bandwidth
  t.gflops = 5;  // 5% of compute
  EXPECT_DOUBLE_EQ(peak_fraction(t, p), 0.5);
  t.gbps = 1;
  t.gflops = 80;
  EXPECT_DOUBLE_EQ(peak_fraction(t, p), 0.8);
  EXPECT_DOUBLE_EQ(peak_fraction(t, MachinePeaks{}), 0.0);
}

TEST(Calibrate, OpsGetTheirBestTimedCase) {
  MachinePeaks p;
  p.triad_gbps = 10;
  p.peak_gflops = 100;
  RunSummary s;
  s.ops.push_back(OpSummary{});
  s.ops[0].op = "aten.relu.default";
  TimingRecord a, b, failed;
  a.op = b.op = failed.op = "aten.relu.default";
  a.speedup = b.speedup = 1;
  a.gbps = 2;
  b.gbps = 7;
  failed.gbps = 9;  // its timing failed: speedup 0, error set
  failed.error = "boom";
  add_peak_fractions(s, {a, b, failed}, p);
  EXPECT_DOUBLE_EQ(s.ops[0].pct_of_peak, 70.0);
  EXPECT_DOUBLE_EQ(s.peak_triad_gbps, 10.0);
}

TEST(Calibrate, CachedPeaksAreReadBackPerThreadCount) {
  const auto dir = std::filesystem::temp_directory_path() / "crucible_calibrate_test";
  std::filesystem::create_directories(dir);
  const MachineInfo m = machine_info();
  nlohmann::json cache = {{m.hostname + "|" + m.cpu_model + "|threads=3",
                           {{"triad_gbps", 12.5}, {"peak_f32_gflops", 345.0}, {"isa", "avx2"}}}};
  std::ofstream(dir / "peaks.json") << cache.dump();
  setenv("CRUCIBLE_CACHE_DIR", dir.c_str(), 1);
  const MachinePeaks p = machine_peaks(3);
  unsetenv("CRUCIBLE_CACHE_DIR");
  EXPECT_DOUBLE_EQ(p.triad_gbps, 12.5);
  EXPECT_DOUBLE_EQ(p.peak_gflops, 345.0);
  EXPECT_EQ(p.isa, "avx2");
  EXPECT_EQ(p.threads, 3);
  crucible::remove_tree(std::filesystem::path(dir).string());
}

}  // namespace
}  // namespace crucible
