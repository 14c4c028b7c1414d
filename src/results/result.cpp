// CaseResult and TimingRecord to and from JSON (the lines of results.jsonl).
#include "crucible/results/result.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "crucible/core/error.h"

namespace crucible {

namespace {
constexpr const char* kStatusNames[] = {"passed",    "failed",       "crashed",
                                        "timed_out", "memory_limit", "unsupported",
                                        "skipped",   "invalid_case", "compile_error"};
}

const char* status_name(Status s) { return kStatusNames[static_cast<int>(s)]; }

Status parse_status(const std::string& s) {
  for (int i = 0; i < static_cast<int>(std::size(kStatusNames)); ++i)
    if (s == kStatusNames[i]) return static_cast<Status>(i);
  input_error("results.jsonl", "unknown status '" + s + "'");
}

using nlohmann::json;

namespace {
// Reading a record checks every field's type: a wrong record is a crucible::Error (Input) that
// names the field, never a JSON library exception.
[[noreturn]] void bad(const std::string& message) { throw Error(ErrorKind::Input, message); }

const json* field(const json& j, const char* key, bool required) {
  auto it = j.find(key);
  if (it == j.end()) {
    if (required) bad(fmt::format("the field \"{}\" is missing", key));
    return nullptr;
  }
  return &*it;
}

std::string str(const json& j, const char* key, bool required = false) {
  const json* v = field(j, key, required);
  if (!v) return "";
  if (!v->is_string()) bad(fmt::format("the field \"{}\" is not a string", key));
  return v->get<std::string>();
}

bool boolean(const json& j, const char* key, bool dflt) {
  const json* v = field(j, key, false);
  if (!v) return dflt;
  if (!v->is_boolean()) bad(fmt::format("the field \"{}\" is not true or false", key));
  return v->get<bool>();
}

int64_t integer(const json& j, const char* key, int64_t lo, int64_t hi) {
  const json* v = field(j, key, false);
  if (!v) return 0;
  if (!v->is_number_integer()) bad(fmt::format("the field \"{}\" is not an integer", key));
  if (v->is_number_unsigned() ? v->get<uint64_t>() > static_cast<uint64_t>(hi)
                              : v->get<int64_t>() < lo || v->get<int64_t>() > hi)
    bad(fmt::format("the field \"{}\" is out of range", key));
  return v->get<int64_t>();
}

uint64_t unsigned_integer(const json& j, const char* key) {
  const json* v = field(j, key, false);
  if (!v) return 0;
  if (!v->is_number_unsigned() && !(v->is_number_integer() && v->get<int64_t>() >= 0))
    bad(fmt::format("the field \"{}\" is not a non-negative integer", key));
  return v->get<uint64_t>();
}

// Numbers that JSON cannot hold (NaN, inf) are written as null and read back as NaN.
double num(const json& j, const char* key, double dflt) {
  const json* v = field(j, key, false);
  if (!v) return dflt;
  if (v->is_null()) return std::numeric_limits<double>::quiet_NaN();
  if (!v->is_number()) bad(fmt::format("the field \"{}\" is not a number", key));
  return v->get<double>();
}

void expect_record(const json& j, const char* record) {
  if (!j.is_object()) bad("not a JSON object");
  std::string r = str(j, "record", true);
  if (r != record) bad(fmt::format("the record is \"{}\", not \"{}\"", r, record));
}
}  // namespace

json to_json(const CaseResult& r) {
  json j = {{"record", "case"},    {"case_id", r.case_id},
            {"op", r.op},          {"case", r.call},
            {"label", r.label},    {"source", r.source},
            {"dtype", r.dtype},    {"seed", r.seed},
            {"cnt", r.cnt},        {"status", status_name(r.status)},
            {"detail", r.detail},  {"expected_error", r.expected_error},
            {"seconds", r.seconds}};
  json checks = json::array();
  for (const TensorCheck& c : r.checks) {
    json jc = {{"what", c.what},
               {"passed", c.passed},
               {"reason", c.reason},
               {"numel", c.numel},
               {"mismatches", c.mismatches},
               {"max_abs_err", c.max_abs_err},
               {"max_rel_err", c.max_rel_err},
               {"max_ulp_err", c.max_ulp_err},
               {"pcc", c.pcc},
               {"atol", c.atol},
               {"rtol", c.rtol}};
    if (c.rmse >= 0) {  // a whole-model output judged by the f64 arbiter
      jc["rmse"] = c.rmse;
      jc["baseline_rmse"] = c.baseline_rmse;
      jc["allowed_rmse"] = c.allowed_rmse;
    }
    checks.push_back(std::move(jc));
  }
  j["checks"] = std::move(checks);
  if (!r.reproducer.empty()) j["reproducer"] = r.reproducer;
  return j;
}

CaseResult case_result_from_json(const json& j) {
  expect_record(j, "case");
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  CaseResult r;
  r.case_id = str(j, "case_id", true);
  if (r.case_id.empty()) bad("the field \"case_id\" is empty");
  r.op = str(j, "op", true);
  r.call = str(j, "case");
  r.label = str(j, "label");
  r.source = str(j, "source");
  r.dtype = str(j, "dtype");
  r.seed = unsigned_integer(j, "seed");
  r.cnt = integer(j, "cnt", 0, kMax);
  std::string status = str(j, "status", true);
  bool known = false;
  for (const char* name : kStatusNames) known = known || status == name;
  if (!known) bad(fmt::format("unknown status \"{}\"", status));
  r.status = parse_status(status);
  r.detail = str(j, "detail");
  r.expected_error = boolean(j, "expected_error", false);
  r.seconds = num(j, "seconds", 0.0);
  r.reproducer = str(j, "reproducer");
  if (const json* checks = field(j, "checks", false)) {
    if (!checks->is_array()) bad("the field \"checks\" is not a list");
    for (const json& c : *checks) {
      if (!c.is_object()) bad("an entry of \"checks\" is not an object");
      TensorCheck t;
      t.what = str(c, "what");
      t.passed = boolean(c, "passed", true);
      t.reason = str(c, "reason");
      t.numel = integer(c, "numel", 0, kMax);
      t.mismatches = integer(c, "mismatches", 0, kMax);
      t.max_abs_err = num(c, "max_abs_err", 0.0);
      t.max_rel_err = num(c, "max_rel_err", 0.0);
      t.max_ulp_err = num(c, "max_ulp_err", 0.0);
      t.pcc = num(c, "pcc", 1.0);
      t.atol = num(c, "atol", 0.0);
      t.rtol = num(c, "rtol", 0.0);
      t.rmse = num(c, "rmse", -1.0);
      t.baseline_rmse = num(c, "baseline_rmse", -1.0);
      t.allowed_rmse = num(c, "allowed_rmse", -1.0);
      r.checks.push_back(std::move(t));
    }
  }
  return r;
}

namespace {
json stats_json(const TimingStats& s) {
  return {{"median_s", s.median_s}, {"p10_s", s.p10_s}, {"p90_s", s.p90_s}, {"samples", s.samples}};
}
TimingStats stats_from(const json& j, const char* key) {
  TimingStats s;
  const json* v = field(j, key, false);
  if (!v) return s;
  if (!v->is_object()) bad(fmt::format("the field \"{}\" is not an object", key));
  s.median_s = num(*v, "median_s", 0.0);
  s.p10_s = num(*v, "p10_s", 0.0);
  s.p90_s = num(*v, "p90_s", 0.0);
  s.samples = static_cast<int>(integer(*v, "samples", 0, std::numeric_limits<int>::max()));
  return s;
}
}  // namespace

double relative_spread(const TimingStats& s) {
  if (!(s.median_s > 0)) return std::numeric_limits<double>::infinity();
  return (s.p90_s - s.p10_s) / s.median_s;
}

void assess_timing(TimingRecord& r) {
  constexpr double kMaxSpread = 0.25;
  constexpr double kClaim = 1.05;  // a speed-up or slow-down of more than 5%
  r.reliable = true;
  r.unreliable_reason.clear();
  if (!r.error.empty()) {
    r.reliable = false;
    r.unreliable_reason = "timing failed";
    return;
  }
  const double cs = relative_spread(r.candidate), bs = relative_spread(r.baseline);
  if (cs > kMaxSpread || bs > kMaxSpread) {
    r.reliable = false;
    r.unreliable_reason = fmt::format(
        "the {} times spread {:.0f}% around their median (p10 to p90; at most {:.0f}% is "
        "trusted)",
        cs >= bs ? "candidate's" : "baseline's", 100 * std::max(cs, bs), 100 * kMaxSpread);
    return;
  }
  const double lo = r.candidate.p90_s > 0 ? r.baseline.p10_s / r.candidate.p90_s : 0;
  const double hi = r.candidate.p10_s > 0 ? r.baseline.p90_s / r.candidate.p10_s
                                          : std::numeric_limits<double>::infinity();
  if (lo < 1 && hi > 1 && (r.speedup > kClaim || r.speedup < 1 / kClaim)) {
    r.reliable = false;
    r.unreliable_reason = fmt::format(
        "the candidate's and baseline's p10-p90 ranges overlap: the speed-up lies anywhere "
        "between {:.3g}x and {:.3g}x",
        lo, hi);
  }
}

json to_json(const TimingRecord& r) {
  const auto finite_or_null = [](double x) { return std::isfinite(x) ? json(x) : json(nullptr); };
  return {{"record", "timing"},
          {"case_id", r.case_id},
          {"op", r.op},
          {"case", r.call},
          {"candidate", stats_json(r.candidate)},
          {"baseline", stats_json(r.baseline)},
          {"speedup", r.speedup},
          {"flops", r.flops},
          {"bytes", r.bytes},
          {"gflops", r.gflops},
          {"gbps", r.gbps},
          {"cold_cache", r.cold_cache},
          {"error", r.error},
          {"candidate_spread", finite_or_null(relative_spread(r.candidate))},
          {"baseline_spread", finite_or_null(relative_spread(r.baseline))},
          {"reliable", r.reliable},
          {"unreliable_reason", r.unreliable_reason}};
}

TimingRecord timing_record_from_json(const json& j) {
  expect_record(j, "timing");
  TimingRecord r;
  r.case_id = str(j, "case_id", true);
  if (r.case_id.empty()) bad("the field \"case_id\" is empty");
  r.op = str(j, "op");
  r.call = str(j, "case");
  r.candidate = stats_from(j, "candidate");
  r.baseline = stats_from(j, "baseline");
  r.speedup = num(j, "speedup", 0.0);
  r.flops = num(j, "flops", 0.0);
  r.bytes = num(j, "bytes", 0.0);
  r.gflops = num(j, "gflops", 0.0);
  r.gbps = num(j, "gbps", 0.0);
  r.cold_cache = boolean(j, "cold_cache", true);
  r.error = str(j, "error");
  // Recomputed from the statistics (a record from before the field existed gets it too).
  boolean(j, "reliable", true);
  str(j, "unreliable_reason");
  assess_timing(r);
  return r;
}

}  // namespace crucible
