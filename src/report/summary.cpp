// Scores of a run: correctness over all ops, coverage, performance over correct ops, perf@p.
#include "crucible/report/summary.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "crucible/core/error.h"
#include "crucible/report/atomic_file.h"

namespace crucible {

bool RunSummary::busy() const {
  if (cores <= 0) return false;
  // The runnable count includes crucible's own reading thread.
  return std::max(load_before, load_after) > cores ||
         std::max(running_before, running_after) - 1 > cores;
}

int RunSummary::count(Status s) const {
  auto it = by_status.find(s);
  return it == by_status.end() ? 0 : it->second;
}

namespace {
double geomean(const std::vector<double>& xs) {
  if (xs.empty()) return 0;
  double acc = 0;
  for (double x : xs) acc += std::log(x);
  return std::exp(acc / static_cast<double>(xs.size()));
}
double median(std::vector<double> xs) {
  if (xs.empty()) return 0;
  std::sort(xs.begin(), xs.end());
  size_t n = xs.size();
  return n % 2 ? xs[n / 2] : 0.5 * (xs[n / 2 - 1] + xs[n / 2]);
}
}  // namespace

RunSummary summarize(const std::vector<CaseResult>& results,
                     const std::vector<TimingRecord>& timings,
                     const std::map<std::string, std::string>& families, double p) {
  RunSummary s;
  s.p = p;
  std::map<std::string, OpSummary> ops;
  std::map<std::string, Status> status_of_case;
  for (const CaseResult& r : results) {
    OpSummary& o = ops[r.op];
    o.op = r.op;
    auto fam = families.find(r.op);
    o.family = fam == families.end() ? "-" : fam->second;
    ++o.cases;
    ++o.by_status[r.status];
    ++s.by_status[r.status];
    ++s.cases_total;
    status_of_case[r.case_id] = r.status;
    for (const TensorCheck& c : r.checks) {
      o.max_abs_err = std::max(o.max_abs_err, c.max_abs_err);
      o.max_ulp_err = std::max(o.max_ulp_err, c.max_ulp_err);
      o.min_pcc = std::min(o.min_pcc, c.pcc);
    }
    bool bad = r.status != Status::Passed && r.status != Status::Skipped &&
               r.status != Status::Unsupported;
    if (r.status == Status::Unsupported && o.first_unsupported.empty())
      o.first_unsupported = r.detail.empty() ? "unsupported" : r.detail;
    if (bad && o.first_failure.empty()) {
      o.first_failure = fmt::format("{}: {}", status_name(r.status), r.detail);
      o.reproducer = r.reproducer;
    }
  }
  std::map<std::string, std::vector<const TimingRecord*>> timed;
  for (const TimingRecord& t : timings) {
    if (t.error.empty() && t.speedup > 0) {
      timed[t.op].push_back(&t);
    } else if (!t.error.empty()) {
      ++s.timing_errors;
      auto it = ops.find(t.op);  // a timed case always has its case record
      if (it != ops.end() && it->second.timing_errors++ == 0)
        it->second.first_timing_error = t.error;
    }
  }

  std::vector<double> correct_speedups;
  int fast_ops = 0;
  for (auto& [name, o] : ops) {
    int run = o.cases - o.by_status[Status::Skipped] - o.by_status[Status::Unsupported];
    o.supported = o.cases > o.by_status[Status::Unsupported];
    o.passed =
        run > 0 && o.by_status[Status::Passed] == run && o.by_status[Status::Unsupported] == 0;
    std::vector<double> sp, cm, bm;
    for (const TimingRecord* t : timed[name]) {
      sp.push_back(t->speedup);
      if (!t->reliable) ++o.unreliable;
      cm.push_back(t->candidate.median_s);
      bm.push_back(t->baseline.median_s);
      o.gbps = std::max(o.gbps, t->gbps);
      o.gflops = std::max(o.gflops, t->gflops);
    }
    o.timed = static_cast<int>(sp.size());
    o.speedup = geomean(sp);
    o.candidate_median_s = median(cm);
    o.baseline_median_s = median(bm);
    ++s.ops_total;
    if (o.supported) ++s.ops_supported;
    if (o.passed) ++s.ops_passed;
    // An op whose timing is incomplete (some case's timing failed) has no speed-up to score.
    if (o.passed && o.timed > 0 && o.timing_errors == 0) {
      correct_speedups.push_back(o.speedup);
      if (o.speedup > p) ++fast_ops;
    }
    s.ops.push_back(o);
  }
  std::map<std::string, std::vector<const OpSummary*>> by_family;
  for (const OpSummary& o : s.ops)
    if (o.passed && o.timed > 0 && o.timing_errors == 0) by_family[o.family].push_back(&o);
  for (const auto& [family, members] : by_family) {
    FamilySpeed f;
    f.family = family;
    f.ops = static_cast<int>(members.size());
    std::vector<double> sp;
    for (const OpSummary* o : members) {
      sp.push_back(o->speedup);
      if (f.slowest_op.empty() || o->speedup < f.min_speedup) {
        f.min_speedup = o->speedup;
        f.slowest_op = o->op;
      }
    }
    f.speedup = geomean(sp);
    s.families.push_back(f);
  }
  s.timed = !timings.empty();
  s.correctness_score = s.ops_total ? static_cast<double>(s.ops_passed) / s.ops_total : 0;
  s.coverage = s.ops_total ? static_cast<double>(s.ops_supported) / s.ops_total : 0;
  s.perf_score = geomean(correct_speedups);
  s.perf_at_p = s.ops_total ? static_cast<double>(fast_ops) / s.ops_total : 0;
  return s;
}

nlohmann::json summary_json(const RunSummary& s) {
  using nlohmann::json;
  json j = {{"suite", s.suite},
            {"backend", s.backend},
            {"reference", s.reference},
            {"baseline", s.baseline.empty() ? json(nullptr) : json(s.baseline)},
            {"ops_total", s.ops_total},
            {"ops_supported", s.ops_supported},
            {"ops_passed", s.ops_passed},
            {"cases_total", s.cases_total},
            {"cases_passed", s.count(Status::Passed)},
            {"cases_failed", s.count(Status::Failed)},
            {"cases_crashed", s.count(Status::Crashed)},
            {"cases_timed_out", s.count(Status::TimedOut)},
            {"cases_unsupported", s.count(Status::Unsupported)},
            {"cases_memory_limit", s.count(Status::MemoryLimit)},
            {"cases_invalid", s.count(Status::InvalidCase)},
            {"cases_compile_error", s.count(Status::CompileError)},
            {"cases_skipped", s.count(Status::Skipped)},
            {"correctness_score", s.correctness_score},
            {"coverage", s.coverage},
            // null when not timed, or when no op is both correct and timed (no score exists)
            {"perf_score", s.timed && s.perf_score > 0 ? json(s.perf_score) : json(nullptr)},
            {"perf_at_p", s.timed ? json(s.perf_at_p) : json(nullptr)},
            {"p", s.p},
            {"seconds", s.seconds}};
  json ops = json::object();
  for (const OpSummary& o : s.ops) {
    json oj = {
        {"family", o.family},           {"cases", o.cases},    {"supported", o.supported},
        {"passed", o.passed},           {"timed", o.timed},    {"max_abs_err", o.max_abs_err},
        {"max_ulp_err", o.max_ulp_err}, {"min_pcc", o.min_pcc}};
    json st = json::object();
    for (const auto& [k, v] : o.by_status)
      if (v) st[status_name(k)] = v;
    oj["status"] = st;
    if (o.timing_errors > 0) {
      oj["timing_incomplete"] = true;
      oj["timing_errors"] = o.timing_errors;
      oj["first_timing_error"] = o.first_timing_error;
    }
    if (o.timed) {
      oj["speedup"] = o.speedup;
      oj["speedup_reliable"] = o.speedup_reliable();
      oj["unreliable_cases"] = o.unreliable;
      oj["candidate_median_s"] = o.candidate_median_s;
      oj["baseline_median_s"] = o.baseline_median_s;
      oj["gbps"] = o.gbps;
      oj["gflops"] = o.gflops;
      if (s.peak_triad_gbps > 0) oj["pct_of_peak"] = o.pct_of_peak;
    }
    if (!o.first_failure.empty()) oj["first_failure"] = o.first_failure;
    ops[o.op] = oj;
  }
  if (s.timed) {
    j["timing_errors"] = s.timing_errors;
    j["timing_load"] = {{"cores", s.cores},
                        {"loadavg_before", s.load_before},
                        {"loadavg_after", s.load_after},
                        {"runnable_before", s.running_before},
                        {"runnable_after", s.running_after},
                        {"busy", s.busy()}};
  }
  if (s.peak_triad_gbps > 0)
    j["peaks"] = {{"triad_gbps", s.peak_triad_gbps}, {"peak_f32_gflops", s.peak_gflops}};
  if (s.timed) {
    json fams = json::object();
    for (const FamilySpeed& f : s.families)
      fams[f.family] = {{"ops", f.ops},
                        {"speedup", f.speedup},
                        {"min_speedup", f.min_speedup},
                        {"slowest_op", f.slowest_op}};
    j["families"] = fams;
  }
  j["ops"] = ops;
  return j;
}

void write_summary_json(const std::string& path, const RunSummary& s) {
  write_file_atomically(path, summary_json(s).dump(2) + "\n");
}

void write_operator_csv(const std::string& path, const RunSummary& s) {
  std::ostringstream f;
  f << "op,family,cases,passed,failed,crashed,timed_out,memory_limit,unsupported,skipped,"
       "invalid,compile_error,supported,correct,max_abs_err,max_ulp_err,min_pcc,timed,speedup,"
       "candidate_median_s,baseline_median_s,gbps,gflops,pct_of_peak,speedup_reliable,"
       "timing_errors\n";
  for (const OpSummary& o : s.ops) {
    auto n = [&](Status st) {
      auto it = o.by_status.find(st);
      return it == o.by_status.end() ? 0 : it->second;
    };
    f << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.6g},{:.6g},{:.6g},{},", o.op,
                     o.family, o.cases, n(Status::Passed), n(Status::Failed), n(Status::Crashed),
                     n(Status::TimedOut), n(Status::MemoryLimit), n(Status::Unsupported),
                     n(Status::Skipped), n(Status::InvalidCase), n(Status::CompileError),
                     o.supported ? 1 : 0, o.passed ? 1 : 0, o.max_abs_err, o.max_ulp_err, o.min_pcc,
                     o.timed);
    if (o.timed)
      f << fmt::format("{:.4f},{:.6g},{:.6g},{:.4g},{:.4g},{},{},{}\n", o.speedup,
                       o.candidate_median_s, o.baseline_median_s, o.gbps, o.gflops,
                       s.peak_triad_gbps > 0 ? fmt::format("{:.1f}", o.pct_of_peak) : "",
                       o.speedup_reliable() ? 1 : 0, o.timing_errors);
    else
      f << fmt::format(",,,,,,,{}\n", o.timing_errors);
  }
  write_file_atomically(path, f.str());
}

}  // namespace crucible
