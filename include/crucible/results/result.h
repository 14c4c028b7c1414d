// The outcome of one case: its verdict, error metrics for every compared tensor and, when
// timed, the candidate's and baseline's timings.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "crucible/compare/compare.h"

namespace crucible {

enum class Status : uint8_t {
  Passed,        // every output and mutated argument matched (or both raised)
  Failed,        // wrong values, shape, dtype, aliasing, a missing or unexpected error
  Crashed,       // the worker died of a signal while running the case
  TimedOut,      // the case ran past --timeout; the worker was killed
  MemoryLimit,   // the case allocated beyond --memory-limit
  Unsupported,   // the candidate does not implement this op or dtype
  Skipped,       // not run (e.g. larger than --max-numel)
  InvalidCase,   // the case itself does not fit the op's schema (an input error)
  CompileError,  // the candidate's kernel for the op did not compile (kernel folders)
};

const char* status_name(Status s);  // "passed", "failed", "crashed", ...
Status parse_status(const std::string& s);

struct TimingStats {
  double median_s = 0;
  double p10_s = 0;
  double p90_s = 0;
  int samples = 0;
};

struct CaseResult {
  std::string case_id;
  std::string op;
  std::string call;  // printed case
  std::string label;
  std::string source;
  std::string dtype;  // dtype of the first tensor argument
  uint64_t seed = 0;
  int64_t cnt = 0;
  Status status = Status::Passed;
  std::string detail;           // the cause: "wrong values in output 0: 3 of 64 mismatch ...",
                                // "crashed: SIGSEGV", "raised as expected: ...", ...
  bool expected_error = false;  // the reference raised and so did the candidate
  std::vector<TensorCheck> checks;
  double seconds = 0;  // wall time of the correctness evaluation
  std::string reproducer;
};

struct TimingRecord {
  std::string case_id;
  std::string op;
  std::string call;
  TimingStats candidate;
  TimingStats baseline;
  double speedup = 0;  // baseline median / candidate median
  double flops = 0;
  double bytes = 0;
  double gflops = 0;  // candidate GFLOP/s
  double gbps = 0;    // candidate GB/s
  bool cold_cache = true;
  std::string error;  // non-empty when timing failed
  // Whether the speed-up can be trusted (assess_timing): the times of candidate and baseline
  // each spread at most 25% around their median (p10 to p90), and the range of speed-ups the
  // two spreads allow, baseline p10 / candidate p90 to baseline p90 / candidate p10, does not
  // straddle 1 when the median claims a difference of more than 5%.
  bool reliable = true;
  std::string unreliable_reason;
};

// Sets `reliable` and `unreliable_reason` from the record's statistics.
void assess_timing(TimingRecord& r);
// (p90 - p10) / median; infinity when the median is not positive.
double relative_spread(const TimingStats& s);

nlohmann::json to_json(const CaseResult& r);
CaseResult case_result_from_json(const nlohmann::json& j);
nlohmann::json to_json(const TimingRecord& r);
TimingRecord timing_record_from_json(const nlohmann::json& j);

}  // namespace crucible
