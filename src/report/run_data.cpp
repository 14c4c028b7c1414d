// A run folder read back: summary.json, manifest.json and results.jsonl (see run_data.h).
#include "crucible/report/run_data.h"

#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "crucible/core/error.h"

namespace crucible {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json read_json_file(const std::string& path, const std::string& what) {
  std::ifstream f(path);
  if (!f) input_error(path, "cannot read " + what);
  json j = json::parse(f, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    input_error(path, "not a JSON object; the file is damaged");
  return j;
}

}  // namespace

RunData read_run_folder(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) input_error(dir, "not a run folder (no such folder)");
  RunData d;
  d.folder = dir;
  const std::string summary = dir + "/summary.json";
  if (!fs::exists(summary, ec))
    input_error(dir,
                "not a finished run folder: it has no summary.json (a run writes it at its "
                "end; `crucible run --resume " +
                    dir + "` finishes a killed run)");
  d.summary = read_json_file(summary, "the run's summary");
  const std::string manifest = dir + "/manifest.json";
  if (fs::exists(manifest, ec)) d.manifest = read_json_file(manifest, "the run's manifest");

  const std::string results = dir + "/results.jsonl";
  std::ifstream f(results);
  if (!f) input_error(results, "cannot read the run's results");
  std::map<std::string, size_t> index;  // case id -> position in d.cases
  std::vector<TimingRecord> timings;
  std::string line;
  int lineno = 0;
  while (std::getline(f, line)) {
    ++lineno;
    if (line.empty()) continue;
    const std::string where = fmt::format("{}:{}", results, lineno);
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object())
      input_error(where, "not a JSON line; the file is damaged");
    const std::string kind = j.value("record", "");
    if (kind != "case" && kind != "timing")
      input_error(where, "not a crucible record (expected \"record\": \"case\" or \"timing\")");
    // A field of the wrong type, a missing field, an unknown status: refused with the place.
    auto read = [&](auto from_json) {
      try {
        return from_json(j);
      } catch (const Error& e) {
        input_error(where, e.what());
      }
    };
    if (kind == "timing") {
      timings.push_back(read(timing_record_from_json));
      continue;
    }
    CaseResult r = read(case_result_from_json);
    if (index.count(r.case_id)) continue;  // a case counts once (the first record)
    index[r.case_id] = d.cases.size();
    CaseRow c;
    c.case_id = r.case_id;
    c.op = r.op;
    c.call = r.call;
    c.status = status_name(r.status);
    c.detail = r.detail;
    c.reproducer = r.reproducer;
    c.source = r.source;
    c.cnt = r.cnt;
    c.checks = std::move(r.checks);
    d.cases.push_back(std::move(c));
  }
  for (const TimingRecord& t : timings) {
    auto it = index.find(t.case_id);
    if (it == index.end())
      input_error(results, "a timing of case " + t.case_id + ", which has no case record");
    CaseRow& c = d.cases[it->second];
    if (c.timed || !c.timing_error.empty()) continue;  // the first record counts
    c.timing_error = t.error;
    c.timed = t.error.empty() && t.speedup > 0;
    c.candidate = t.candidate;
    c.baseline = t.baseline;
    c.speedup = t.speedup;
    c.flops = t.flops;
    c.bytes = t.bytes;
    c.gflops = t.gflops;
    c.gbps = t.gbps;
    c.reliable = t.reliable;
  }
  return d;
}

}  // namespace crucible
