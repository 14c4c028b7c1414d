// A finished run as the reports that look back at it see it: its summary, its manifest and
// its per-case results with their timings, read from a run folder or from the run history.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "crucible/results/result.h"

namespace crucible {

// One case of a run: its verdict and, when timed, its timing.
struct CaseRow {
  std::string case_id;
  std::string op;
  std::string call;
  std::string status;  // status_name()
  std::string detail;
  std::string reproducer;
  std::string source;  // where the case came from ("file:line" for a graph's node)
  int64_t cnt = 0;     // occurrences (traces and graphs)
  bool timed = false;  // a timing record without error
  TimingStats candidate, baseline;
  double speedup = 0;
  double flops = 0, bytes = 0, gflops = 0, gbps = 0;
  bool reliable = true;
  std::string timing_error;
  std::vector<TensorCheck> checks;  // per output (whole models: the f64 arbiter's RMSEs)
};

struct RunData {
  int64_t id = 0;      // the run's id in the history (0: read from a folder)
  std::string folder;  // the run folder
  nlohmann::json summary = nlohmann::json::object();   // summary.json
  nlohmann::json manifest = nlohmann::json::object();  // manifest.json
  std::vector<CaseRow> cases;                          // in results.jsonl's order
};

// Reads summary.json, manifest.json and results.jsonl of the run folder `dir`. A missing
// summary.json (the run did not finish) or a damaged file is an input error naming the file
// (and line).
RunData read_run_folder(const std::string& dir);

}  // namespace crucible
