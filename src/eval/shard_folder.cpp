// A shard's run folder read back and checked, for crucible merge.
#include "eval/shard_folder.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "crucible/core/error.h"

namespace crucible {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json read_json_file(const std::string& path, const std::string& what) {
  std::ifstream f(path);
  if (!f) input_error(path, fmt::format("cannot read {}: {}", what, std::strerror(errno)));
  json j = json::parse(f, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    input_error(path, fmt::format("not a JSON object; {} is damaged", what));
  return j;
}

// The records of results.jsonl: every line complete and valid and of a case of the shard.
void read_records(ShardFolder& s) {
  const std::string path = s.dir + "/results.jsonl";
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    input_error(s.dir, "no results.jsonl: the shard has not run (crucible run --resume " + s.dir +
                           " runs it)");
  std::ifstream f(path);
  if (!f) input_error(path, std::string("cannot read: ") + std::strerror(errno));
  const std::set<std::string> ids(s.shard.case_ids.begin(), s.shard.case_ids.end());
  std::set<std::string> seen_cases, seen_timings;
  std::string line;
  int lineno = 0;
  while (std::getline(f, line)) {
    ++lineno;
    const std::string where = fmt::format("{}:{}", path, lineno);
    if (f.eof())
      input_error(where, fmt::format("shard {} did not finish: the last line is torn (the shard "
                                     "was killed while writing it); crucible run --resume {} "
                                     "finishes it",
                                     s.shard.spec.text(), s.dir));
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded()) input_error(where, "not a JSON line; the file is damaged");
    if (!j.is_object() || !j.contains("record") || !j["record"].is_string() ||
        (j["record"] != "case" && j["record"] != "timing"))
      input_error(where, "not a crucible record (no \"record\": \"case\" or \"timing\")");
    // A field of the wrong type, a missing field, an unknown status: refused with the place.
    auto read = [&](auto from_json) {
      try {
        return from_json(j);
      } catch (const Error& e) {
        input_error(where, e.what());
      }
    };
    if (j["record"] == "case") {
      CaseResult r = read(case_result_from_json);
      if (!ids.count(r.case_id))
        input_error(where, fmt::format("case {} is not a case of shard {}; the file belongs to "
                                       "another run",
                                       r.case_id, s.shard.spec.text()));
      if (seen_cases.insert(r.case_id).second) s.results.push_back(std::move(r));
    } else {
      TimingRecord t = read(timing_record_from_json);
      if (!ids.count(t.case_id))
        input_error(where, fmt::format("timing of case {}, which is not a case of shard {}; the "
                                       "file belongs to another run",
                                       t.case_id, s.shard.spec.text()));
      if (seen_timings.insert(t.case_id).second) s.timings.push_back(std::move(t));
    }
  }
  if (seen_cases.size() != ids.size())
    input_error(
        s.dir, fmt::format("shard {} did not finish: {} of its {} cases have no result "
                           "in results.jsonl; crucible run --resume {} finishes it",
                           s.shard.spec.text(), ids.size() - seen_cases.size(), ids.size(), s.dir));
}

}  // namespace

ShardFolder read_shard_folder(const std::string& dir) {
  ShardFolder s;
  s.dir = dir;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) input_error(dir, "not a folder; give the shards' run folders");
  const std::string mpath = dir + "/manifest.json";
  if (!fs::is_regular_file(mpath, ec))
    input_error(dir, "no manifest.json: not a crucible run folder");
  s.manifest = read_json_file(mpath, "the manifest");
  if (!s.manifest.contains("shard"))
    input_error(dir,
                "not a shard: the run was not started with --shard i/n, so there is "
                "nothing to merge it with");
  s.shard = shard_info_from_json(s.manifest["shard"], mpath);
  for (const char* key : {"options", "backends"})
    if (!s.manifest.contains(key))
      input_error(mpath, fmt::format("not a crucible manifest (no \"{}\")", key));
  read_records(s);
  const std::string spath = dir + "/summary.json";
  if (!fs::is_regular_file(spath, ec))
    input_error(dir, fmt::format("shard {} did not finish: no summary.json (it is written when "
                                 "the run ends); crucible run --resume {} finishes it",
                                 s.shard.spec.text(), dir));
  s.summary = read_json_file(spath, "the summary");
  if (s.manifest.contains("machine") && s.manifest["machine"].is_object() &&
      s.manifest["machine"].contains("peaks")) {
    const json& p = s.manifest["machine"]["peaks"];
    if (p.is_object()) {
      if (p.contains("triad_gbps") && p["triad_gbps"].is_number())
        s.peaks.triad_gbps = p["triad_gbps"].get<double>();
      if (p.contains("peak_f32_gflops") && p["peak_f32_gflops"].is_number())
        s.peaks.peak_gflops = p["peak_f32_gflops"].get<double>();
    }
  }
  return s;
}

}  // namespace crucible
