// CaseResult and TimingRecord to and from JSON (the lines of results.jsonl).
#include "crucible/eval/result.h"

#include <limits>

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
// Numbers that JSON cannot hold (NaN, inf) are written as null and read back as NaN.
double num(const json& j, const char* key, double dflt) {
  auto it = j.find(key);
  if (it == j.end()) return dflt;
  if (it->is_null()) return std::numeric_limits<double>::quiet_NaN();
  return it->get<double>();
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
    checks.push_back({{"what", c.what},
                      {"passed", c.passed},
                      {"reason", c.reason},
                      {"numel", c.numel},
                      {"mismatches", c.mismatches},
                      {"max_abs_err", c.max_abs_err},
                      {"max_rel_err", c.max_rel_err},
                      {"max_ulp_err", c.max_ulp_err},
                      {"pcc", c.pcc},
                      {"atol", c.atol},
                      {"rtol", c.rtol}});
  }
  j["checks"] = std::move(checks);
  if (!r.reproducer.empty()) j["reproducer"] = r.reproducer;
  return j;
}

CaseResult case_result_from_json(const json& j) {
  CaseResult r;
  r.case_id = j.at("case_id").get<std::string>();
  r.op = j.at("op").get<std::string>();
  r.call = j.value("case", "");
  r.label = j.value("label", "");
  r.source = j.value("source", "");
  r.dtype = j.value("dtype", "");
  r.seed = j.value("seed", uint64_t{0});
  r.cnt = j.value("cnt", int64_t{0});
  r.status = parse_status(j.at("status").get<std::string>());
  r.detail = j.value("detail", "");
  r.expected_error = j.value("expected_error", false);
  r.seconds = num(j, "seconds", 0.0);
  r.reproducer = j.value("reproducer", "");
  if (j.contains("checks")) {
    for (const json& c : j["checks"]) {
      TensorCheck t;
      t.what = c.value("what", "");
      t.passed = c.value("passed", true);
      t.reason = c.value("reason", "");
      t.numel = c.value("numel", int64_t{0});
      t.mismatches = c.value("mismatches", int64_t{0});
      t.max_abs_err = num(c, "max_abs_err", 0.0);
      t.max_rel_err = num(c, "max_rel_err", 0.0);
      t.max_ulp_err = num(c, "max_ulp_err", 0.0);
      t.pcc = num(c, "pcc", 1.0);
      t.atol = num(c, "atol", 0.0);
      t.rtol = num(c, "rtol", 0.0);
      r.checks.push_back(std::move(t));
    }
  }
  return r;
}

namespace {
json stats_json(const TimingStats& s) {
  return {{"median_s", s.median_s}, {"p10_s", s.p10_s}, {"p90_s", s.p90_s}, {"samples", s.samples}};
}
TimingStats stats_from(const json& j) {
  TimingStats s;
  s.median_s = num(j, "median_s", 0.0);
  s.p10_s = num(j, "p10_s", 0.0);
  s.p90_s = num(j, "p90_s", 0.0);
  s.samples = j.value("samples", 0);
  return s;
}
}  // namespace

json to_json(const TimingRecord& r) {
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
          {"error", r.error}};
}

TimingRecord timing_record_from_json(const json& j) {
  TimingRecord r;
  r.case_id = j.at("case_id").get<std::string>();
  r.op = j.value("op", "");
  r.call = j.value("case", "");
  if (j.contains("candidate")) r.candidate = stats_from(j["candidate"]);
  if (j.contains("baseline")) r.baseline = stats_from(j["baseline"]);
  r.speedup = num(j, "speedup", 0.0);
  r.flops = num(j, "flops", 0.0);
  r.bytes = num(j, "bytes", 0.0);
  r.gflops = num(j, "gflops", 0.0);
  r.gbps = num(j, "gbps", 0.0);
  r.cold_cache = j.value("cold_cache", true);
  r.error = j.value("error", "");
  return r;
}

}  // namespace crucible
