// The quantization micro-benchmark: for every recipe x shape x model type of a config, in one
// run on one backend, the high-precision model and the recipe's model side by side -- times
// (alternating samples, medians), the time of the recipe's activation quantization alone, the
// speed-ups with and without it, and the accuracy: SQNR of the recipe's output against the
// high-precision output and against the f64 reference, on realistic activations (normal, with
// outlier channels). A row below --min-sqnr fails; a recipe the backend cannot run is a row
// saying why; no recipe benchmarks nothing.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "crucible/core/tensor.h"
#include "crucible/quant/bench_config.h"

namespace crucible::quant {

struct BenchOptions {
  std::string backend = "cpu";
  double min_sqnr = 0;      // dB; 0 = no gate
  int samples = 5;          // timed samples per model (each alternating baseline and recipe)
  double max_seconds = 20;  // per row: fewer samples when one round takes longer
  uint64_t seed = 0;
  double outlier_fraction = 0.01;  // of the input channels (at least one), scaled by
  double outlier_scale = 30;       // this factor
};

struct BenchRow {
  std::string model_name, model_type, shape_label, recipe, backend;
  std::string device = "cpu";  // the config's device (the backend's)
  int64_t m = 0, k = 0, n = 0;
  DType dtype = DType::Float32;
  std::string status;  // "ok", "failed" (below --min-sqnr), "unsupported", "error"
  std::string reason;
  int layers = 0;                   // linear layers the recipe rewrote
  double baseline_ms = 0;           // the high-precision model (median)
  double recipe_ms = 0;             // the recipe's model, activation quantization included
  double act_quant_ms = 0;          // the recipe's activation quantization alone (0: weight-only)
  double recipe_no_act_ms = 0;      // recipe_ms - act_quant_ms
  double speedup = 0;               // baseline_ms / recipe_ms
  double speedup_no_act = 0;        // baseline_ms / recipe_no_act_ms
  double sqnr_db = 0;               // recipe output vs high-precision output
  double sqnr_f64_db = 0;           // recipe output vs the f64 reference
  double baseline_sqnr_f64_db = 0;  // high-precision output vs the f64 reference
  int samples = 0;
};

// Runs every row; `progress` (may be empty) sees each row as it is finished.
std::vector<BenchRow> run_bench(const BenchConfig& config, const BenchOptions& options,
                                const std::function<void(const BenchRow&)>& progress = {});

// SQNR in dB of `out` against `ref` (same shape): 10 log10(sum ref^2 / sum (ref - out)^2),
// capped at 300 dB for identical outputs; NaN when either holds a non-finite value.
double sqnr_db(const Tensor& ref, const Tensor& out);

}  // namespace crucible::quant
