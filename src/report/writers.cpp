// SUMMARY.md, junit.xml and the console table of a run.
#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "crucible/core/error.h"
#include "crucible/report/atomic_file.h"
#include "crucible/report/summary.h"

namespace crucible {

namespace {

std::string md_escape(const std::string& s, size_t max_len = 160) {
  std::string out;
  for (char c : s) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += ' ';
    else
      out += c;
  }
  if (out.size() > max_len) out = out.substr(0, max_len) + "…";
  return out;
}

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t')
          out += ' ';
        else
          out += c;
    }
  }
  return out;
}

std::string pct(double x) { return fmt::format("{:.1f}%", 100 * x); }

constexpr const char* kUnreliableNote =
    "the timings spread too much to trust this speed-up (a p10-p90 spread above 25%, or "
    "candidate and baseline ranges that overlap across 1x); see \"reliable\" and "
    "\"unreliable_reason\" in results.jsonl";

// "1.234x", or "~1.234x?" when the op's speed-up is not reliable.
std::string speedup_text(const OpSummary& o) {
  return o.speedup_reliable() ? fmt::format("{:.3f}x", o.speedup)
                              : fmt::format("~{:.3f}x?", o.speedup);
}

std::vector<std::string> timing_warnings(const RunSummary& s) {
  std::vector<std::string> out;
  if (s.timed && s.busy())
    out.push_back(fmt::format(
        "the machine was busy around the timing (load average {:.1f} before, {:.1f} after; "
        "{} and {} runnable tasks; {} cores): other programs took CPU time from the timed "
        "code, so the speed-ups may be off",
        s.load_before, s.load_after, s.running_before, s.running_after, s.cores));
  if (s.timed && !s.blas_warning.empty()) out.push_back(s.blas_warning);
  return out;
}

}  // namespace

std::string status_counts_text(const RunSummary& s, bool all) {
  // The order of the statuses, named as summary.json's cases_* fields count them.
  static const std::pair<Status, const char*> kOrder[] = {
      {Status::Passed, "passed"},
      {Status::Failed, "failed"},
      {Status::Crashed, "crashed"},
      {Status::TimedOut, "timed out"},
      {Status::MemoryLimit, "over the memory limit"},
      {Status::Unsupported, "unsupported"},
      {Status::Skipped, "skipped"},
      {Status::InvalidCase, "invalid"},
      {Status::CompileError, "compile errors"}};
  std::string out;
  for (const auto& [st, name] : kOrder) {
    const int n = s.count(st);
    // The console always shows the first four; the rest when some case has them.
    if (!all && n == 0 && st != Status::Passed && st != Status::Failed && st != Status::Crashed &&
        st != Status::TimedOut)
      continue;
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", n, name);
  }
  return out;
}

void write_summary_md(const std::string& path, const RunSummary& s,
                      const std::vector<CaseResult>& results, const std::string& command) {
  std::ostringstream f;
  f << "# crucible run: " << s.suite << " on " << s.backend << "\n\n";
  f << "`" << command << "`\n\n";
  f << "| | |\n|---|---|\n";
  f << fmt::format("| reference | {} |\n", s.reference);
  if (s.timed) f << fmt::format("| baseline | {} |\n", s.baseline);
  f << fmt::format("| ops | {} total, {} supported, {} correct |\n", s.ops_total, s.ops_supported,
                   s.ops_passed);
  f << fmt::format("| cases | {} total: {} |\n", s.cases_total, status_counts_text(s, true));
  f << fmt::format("| correctness score | {} (ops correct / all ops) |\n",
                   pct(s.correctness_score));
  f << fmt::format("| coverage | {} (ops supported / all ops) |\n", pct(s.coverage));
  if (s.timed) {
    f << fmt::format("| performance score | {} (geometric mean speed-up over correct ops) |\n",
                     s.perf_score > 0 ? fmt::format("{:.3f}x", s.perf_score)
                                      : std::string("n/a (no op is correct and timed)"));
    f << fmt::format("| perf@{} | {} (ops correct and faster than {}x / all ops) |\n", s.p,
                     pct(s.perf_at_p), s.p);
  }
  if (s.peak_triad_gbps > 0)
    f << fmt::format(
        "| machine peaks | {:.1f} GB/s triad, {:.0f} GFLOP/s f32 (% of peak: the bounding one) |\n",
        s.peak_triad_gbps, s.peak_gflops);
  f << fmt::format("| wall time | {:.1f} s |\n\n", s.seconds);
  for (const std::string& w : timing_warnings(s)) f << "**Warning:** " << w << "\n\n";

  if (s.timed && !s.families.empty()) {
    f << "## Speed-up by family\n\n"
         "Geometric mean over the family's correct, timed ops, and its slowest op.\n\n"
         "| family | ops | speed-up | slowest op | its speed-up |\n|---|---|---|---|---|\n";
    for (const FamilySpeed& fs : s.families)
      f << fmt::format("| {} | {} | {:.3f}x | {} | {:.3f}x |\n", fs.family, fs.ops, fs.speedup,
                       fs.slowest_op, fs.min_speedup);
    f << "\n";
  }

  f << "## Operators\n\n";
  f << "| op | family | cases | passed | not passed | max abs err | max ulp | min pcc |"
    << (s.timed ? " speed-up | candidate | GB/s | GFLOP/s | % of peak |" : "")
    << " first failure |\n";
  f << "|---|---|---|---|---|---|---|---|" << (s.timed ? "---|---|---|---|---|" : "") << "---|\n";
  for (const OpSummary& o : s.ops) {
    int passed = o.by_status.count(Status::Passed) ? o.by_status.at(Status::Passed) : 0;
    f << fmt::format("| {} | {} | {} | {} | {} | {:.3g} | {:.3g} | {:.6f} |", o.op, o.family,
                     o.cases, passed, o.cases - passed, o.max_abs_err, o.max_ulp_err, o.min_pcc);
    if (s.timed) {
      if (o.timed)
        f << fmt::format(" {} | {:.3g} s | {:.3g} | {:.3g} | {} |", speedup_text(o),
                         o.candidate_median_s, o.gbps, o.gflops,
                         s.peak_triad_gbps > 0 ? fmt::format("{:.1f}%", o.pct_of_peak) : "-");
      else
        f << " - | - | - | - | - |";
    }
    f << " " << md_escape(o.first_failure) << " |\n";
  }

  if (s.timed && std::any_of(s.ops.begin(), s.ops.end(),
                             [](const OpSummary& o) { return o.timed && !o.speedup_reliable(); }))
    f << "\n`~1.234x?`: " << kUnreliableNote << "\n";
  if (std::any_of(s.ops.begin(), s.ops.end(),
                  [](const OpSummary& o) { return !o.first_unsupported.empty(); })) {
    f << "\n## Unsupported ops\n\nThey count against the backend (correctness and coverage).\n\n";
    for (const OpSummary& o : s.ops)
      if (!o.first_unsupported.empty())
        f << fmt::format("- **{}**: {}\n", o.op, md_escape(o.first_unsupported, 300));
  }
  if (s.timing_errors > 0) {
    f << fmt::format("\n## Timing errors ({} cases)\n\n", s.timing_errors);
    f << "The timing of these ops is incomplete: they are left out of the performance score.\n\n";
    for (const OpSummary& o : s.ops)
      if (o.timing_errors > 0)
        f << fmt::format("- **{}**: {} case(s), first: {}\n", o.op, o.timing_errors,
                         md_escape(o.first_timing_error, 300));
  }

  int shown = 0;
  for (const CaseResult& r : results) {
    if (r.status == Status::Passed || r.status == Status::Skipped ||
        r.status == Status::Unsupported)
      continue;
    if (shown == 0) f << "\n## Failing cases (first 50)\n\n";
    if (++shown > 50) break;
    f << fmt::format("- **{}** `{}` — {}: {}\n  - reproduce: `{}`\n", r.op, md_escape(r.call, 200),
                     status_name(r.status), md_escape(r.detail, 300), r.reproducer);
  }
  write_file_atomically(path, f.str());
}

void write_junit(const std::string& path, const RunSummary& s,
                 const std::vector<CaseResult>& results) {
  std::ostringstream f;
  int failures = 0, errors = 0, skipped = 0;
  for (const CaseResult& r : results) {
    if (r.status == Status::Failed || r.status == Status::InvalidCase ||
        r.status == Status::CompileError)
      ++failures;
    if (r.status == Status::Crashed || r.status == Status::TimedOut ||
        r.status == Status::MemoryLimit)
      ++errors;
    if (r.status == Status::Skipped) ++skipped;
    // Unsupported counts against the backend: reported as a failure, not a skip.
    if (r.status == Status::Unsupported) ++failures;
  }
  f << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  f << fmt::format(
      "<testsuites name=\"crucible\" tests=\"{}\" failures=\"{}\" errors=\"{}\" "
      "skipped=\"{}\" time=\"{:.3f}\">\n",
      results.size(), failures, errors, skipped, s.seconds);
  f << fmt::format(
      "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" "
      "skipped=\"{}\">\n",
      xml_escape(s.suite + " on " + s.backend), results.size(), failures, errors, skipped);
  for (const CaseResult& r : results) {
    f << fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.6f}\">",
                     xml_escape(r.op), xml_escape(r.case_id + " " + r.call), r.seconds);
    std::string msg = xml_escape(r.detail);
    switch (r.status) {
      case Status::Passed:
        break;
      case Status::Skipped:
        f << "<skipped message=\"" << msg << "\"/>";
        break;
      case Status::Crashed:
      case Status::TimedOut:
      case Status::MemoryLimit:
        f << fmt::format("<error type=\"{}\" message=\"{}\">{}</error>", status_name(r.status), msg,
                         xml_escape(r.reproducer));
        break;
      default:
        f << fmt::format("<failure type=\"{}\" message=\"{}\">{}</failure>", status_name(r.status),
                         msg, xml_escape(r.reproducer));
    }
    f << "</testcase>\n";
  }
  f << "  </testsuite>\n</testsuites>\n";
  write_file_atomically(path, f.str());
}

std::string console_table(const RunSummary& s, const std::string& out_dir) {
  std::ostringstream o;
  o << fmt::format("\n{} on {} (reference {}{})\n", s.suite, s.backend, s.reference,
                   s.timed ? ", baseline " + s.baseline : "");
  o << fmt::format("  ops    {:>6} total {:>6} supported {:>6} correct\n", s.ops_total,
                   s.ops_supported, s.ops_passed);
  o << fmt::format("  cases  {:>6} total: {}\n", s.cases_total, status_counts_text(s, false));
  o << fmt::format("  correctness {}   coverage {}", pct(s.correctness_score), pct(s.coverage));
  if (s.timed)
    o << fmt::format("   perf score {}   perf@{} {}",
                     s.perf_score > 0 ? fmt::format("{:.3f}x", s.perf_score) : "n/a", s.p,
                     pct(s.perf_at_p));
  o << "\n";
  int shown = 0;
  for (const OpSummary& op : s.ops) {
    if (op.passed || op.first_failure.empty()) continue;
    if (shown == 0) o << "  failing ops:\n";
    if (++shown > 15) {
      o << "    ... (see SUMMARY.md)\n";
      break;
    }
    std::string why = op.first_failure;
    if (why.size() > 110) why = why.substr(0, 110) + "...";
    o << fmt::format("    {:<34} {}\n", op.op, why);
  }
  // Ops the candidate does not (fully) implement: they count against it, so say which and why.
  int unsupported_ops = 0;
  for (const OpSummary& op : s.ops) unsupported_ops += !op.first_unsupported.empty();
  if (unsupported_ops > 0) {
    o << fmt::format("  unsupported by {}: {} op(s){}\n", s.backend, unsupported_ops,
                     unsupported_ops > 10 ? " (the first 10; see SUMMARY.md)" : "");
    int n = 0;
    for (const OpSummary& op : s.ops) {
      if (op.first_unsupported.empty()) continue;
      if (++n > 10) break;
      std::string why = op.first_unsupported;
      if (why.size() > 110) why = why.substr(0, 110) + "...";
      o << fmt::format("    {:<34} {}\n", op.op, why);
    }
  }
  if (s.timed && !s.families.empty()) {
    o << "  speed-up by family (geometric mean over correct ops; slowest op):\n";
    for (const FamilySpeed& fs : s.families)
      o << fmt::format("    {:<20} {:>3} ops {:>8.3f}x   {} {:.3f}x\n", fs.family, fs.ops,
                       fs.speedup, fs.slowest_op, fs.min_speedup);
  }
  if (s.timed) {
    int timed_shown = 0;
    for (const OpSummary& op : s.ops) {
      if (!op.timed) continue;
      if (timed_shown++ == 0) o << "  speed-ups (baseline / candidate, median):\n";
      if (timed_shown > 15) {
        o << "    ... (see operator_summary.csv)\n";
        break;
      }
      o << fmt::format("    {:<34} {:>9}  {:>10.3g} GB/s {:>10.3g} GFLOP/s\n", op.op,
                       speedup_text(op), op.gbps, op.gflops);
    }
    if (std::any_of(s.ops.begin(), s.ops.end(),
                    [](const OpSummary& x) { return x.timed && !x.speedup_reliable(); }))
      o << "    ~1.234x?: " << kUnreliableNote << "\n";
  }
  if (s.timing_errors > 0) {
    o << fmt::format("  timing errors: {} case(s); these ops' timing is incomplete:\n",
                     s.timing_errors);
    int n = 0;
    for (const OpSummary& op : s.ops) {
      if (op.timing_errors == 0) continue;
      if (++n > 10) {
        o << "    ... (see SUMMARY.md)\n";
        break;
      }
      std::string why = op.first_timing_error;
      if (why.size() > 110) why = why.substr(0, 110) + "...";
      o << fmt::format("    {:<34} {}\n", op.op, why);
    }
  }
  for (const std::string& w : timing_warnings(s)) o << "  warning: " << w << "\n";
  o << fmt::format("  results: {}/\n", out_dir);
  return o.str();
}

}  // namespace crucible
