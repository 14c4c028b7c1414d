// The micro-benchmark's outputs, all from the same rows: the printed grid, CSV, and the PyTorch
// OSS benchmark database's v3 records (benchmark, model, metric with benchmark_values, runners,
// dependencies), as one JSON array or as JSON lines.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "crucible/quant/bench.h"

namespace crucible::quant {

std::string bench_grid(const std::vector<BenchRow>& rows);
std::string bench_csv(const std::vector<BenchRow>& rows);

// One record per row and metric (baseline and recipe times, speed-ups, SQNRs); rows that did
// not run give none. `runner` and `dependencies` are the records' "runners"[0] and
// "dependencies" objects.
nlohmann::json oss_records(const std::vector<BenchRow>& rows, const nlohmann::json& runner,
                           const nlohmann::json& dependencies);
// The keys every v3 record has, with their JSON types (for validation).
bool is_oss_v3_record(const nlohmann::json& r, std::string* why);

}  // namespace crucible::quant
