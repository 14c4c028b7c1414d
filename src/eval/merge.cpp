// crucible merge: the shards of one run joined into the run folder of the unsplit run.
#include "crucible/eval/merge.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "crucible/core/error.h"
#include "crucible/eval/calibrate.h"
#include "crucible/eval/run.h"
#include "crucible/report/atomic_file.h"
#include "eval/run_folder.h"
#include "eval/run_reports.h"
#include "eval/shard_folder.h"

namespace crucible {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string text_of(const json& j) { return j.is_string() ? j.get<std::string>() : j.dump(); }

// What differs between two shards that must agree to be one run: the first difference found,
// in words, or "" when they agree. Only --workers and --threads may differ (each machine
// chooses its own); everything that changes a case's verdict must be the same.
std::string difference(const ShardFolder& a, const ShardFolder& b) {
  const json& ma = a.manifest;
  const json& mb = b.manifest;
  for (const char* key : {"tool", "version", "git_commit", "build_type", "compiler"}) {
    const json va = ma.value(key, json(nullptr)), vb = mb.value(key, json(nullptr));
    if (va != vb)
      return fmt::format("they were made by different builds of crucible ({} {} and {})", key,
                         text_of(va), text_of(vb));
  }
  json oa = ma["options"], ob = mb["options"];
  if (!oa.is_object() || !ob.is_object()) return "a manifest's \"options\" is not an object";
  for (const char* key : {"workers", "threads"}) {
    oa.erase(key);
    ob.erase(key);
  }
  std::set<std::string> keys;
  for (const auto& [k, v] : oa.items()) keys.insert(k);
  for (const auto& [k, v] : ob.items()) keys.insert(k);
  for (const std::string& k : keys) {
    const json va = oa.value(k, json(nullptr)), vb = ob.value(k, json(nullptr));
    if (va != vb)
      return fmt::format("they ran with different options ({} {} and {})", k, text_of(va),
                         text_of(vb));
  }
  if (ma["backends"] != mb["backends"]) {
    auto describe = [](const json& list) {
      std::string out;
      if (!list.is_array()) return list.dump();
      for (const json& bk : list)
        out += fmt::format("{}{} {} {} on {}", out.empty() ? "" : ", ",
                           text_of(bk.value("role", json(""))), text_of(bk.value("name", json(""))),
                           text_of(bk.value("version", json(""))),
                           text_of(bk.value("device", json(""))));
      return out;
    };
    return fmt::format("their backends differ ({}; and {})", describe(ma["backends"]),
                       describe(mb["backends"]));
  }
  if (a.shard.spec.count != b.shard.spec.count)
    return fmt::format("they are shards of different splits ({} and {})", a.shard.spec.text(),
                       b.shard.spec.text());
  if (a.shard.cases_total != b.shard.cases_total || a.shard.fingerprint != b.shard.fingerprint)
    return fmt::format(
        "they split different case lists ({} cases, fingerprint {}; and {} cases, fingerprint "
        "{})",
        a.shard.cases_total, a.shard.fingerprint, b.shard.cases_total, b.shard.fingerprint);
  return "";
}

// Each shard 1..n exactly once.
void check_every_shard_once(const std::vector<ShardFolder>& shards) {
  const int n = shards[0].shard.spec.count;
  std::map<int, const ShardFolder*> by_index;
  for (const ShardFolder& s : shards) {
    auto [it, fresh] = by_index.emplace(s.shard.spec.index, &s);
    if (!fresh)
      usage_error(fmt::format("{} and {} are both shard {}: give each shard's run folder once",
                              it->second->dir, s.dir, s.shard.spec.text()));
  }
  std::vector<std::string> missing;
  for (int i = 1; i <= n; ++i)
    if (!by_index.count(i)) missing.push_back(fmt::format("{}/{}", i, n));
  if (missing.empty()) return;
  std::string given;
  int64_t held = 0;
  for (const auto& [i, s] : by_index) {
    given += fmt::format("{}{} ({})", given.empty() ? "" : ", ", s->shard.spec.text(), s->dir);
    held += static_cast<int64_t>(s->shard.case_ids.size());
  }
  usage_error(fmt::format(
      "shard{} {} of the run {} missing (given: {}); the merged run would lack {} of its {} "
      "cases: give every shard's run folder",
      missing.size() == 1 ? "" : "s", fmt::join(missing, ", "), missing.size() == 1 ? "is" : "are",
      given, shards[0].shard.cases_total - held, shards[0].shard.cases_total));
}

// The suite's case ids in order, joined from the shards' shares and checked against the
// fingerprint every shard computed from the whole list.
std::vector<std::string> join_case_lists(const std::vector<ShardFolder>& shards) {
  const ShardInfo& first = shards[0].shard;
  std::vector<std::string> ids(static_cast<size_t>(first.cases_total));
  std::vector<const ShardFolder*> owner(ids.size(), nullptr);
  for (const ShardFolder& s : shards)
    for (size_t k = 0; k < s.shard.case_ids.size(); ++k) {
      const auto pos = static_cast<size_t>(s.shard.positions[k]);
      if (owner[pos])
        input_error(s.dir + "/manifest.json",
                    fmt::format("case {} (place {} in the suite) is also a case of {}; the "
                                "shards' splits overlap",
                                s.shard.case_ids[k], pos, owner[pos]->dir));
      owner[pos] = &s;
      ids[pos] = s.shard.case_ids[k];
    }
  for (size_t pos = 0; pos < ids.size(); ++pos)
    if (!owner[pos])
      input_error(shards[0].dir + "/manifest.json",
                  fmt::format("no shard holds place {} of the suite's {} cases; the shards' "
                              "splits do not cover the suite",
                              pos, ids.size()));
  const std::string fp = case_list_fingerprint(ids);
  if (fp != first.fingerprint)
    input_error(shards[0].dir + "/manifest.json",
                fmt::format("the shards' cases joined give fingerprint {}, not the suite's {}: "
                            "a manifest was changed",
                            fp, first.fingerprint));
  return ids;
}

// The merged run's options, as its shards ran (the reports need these).
RunOptions merged_options(const json& opts) {
  RunOptions o;
  auto str = [&](const char* key) { return opts.contains(key) ? text_of(opts[key]) : ""; };
  o.suite.suite = str("suite");
  o.backend = str("backend");
  o.reference = str("reference");
  o.baseline = str("baseline");
  o.perf = opts.value("perf", false);
  o.p = opts.value("p", 1.0);
  return o;
}

// The shards' command line as one run: without --shard, and without --out (the merged folder
// is the run's folder; --resume <merged folder> re-reads this).
std::vector<std::string> unsplit_argv(const json& argv) {
  std::vector<std::string> out;
  if (!argv.is_array()) return out;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string a = text_of(argv[i]);
    if (a == "--shard" || a == "--out") {
      ++i;
      continue;
    }
    if (a.starts_with("--shard=") || a.starts_with("--out=")) continue;
    out.push_back(a);
  }
  return out;
}

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return stamp;
}

// The merged manifest: the first shard's, as the unsplit run's, with each shard's machine,
// start and wall time under "merged".
json merged_manifest(const std::vector<const ShardFolder*>& by_index,
                     const std::vector<std::string>& argv, const MergeOptions& mo) {
  json m = by_index[0]->manifest;
  m.erase("shard");
  m.erase("resumed");
  m["argv"] = argv;
  json list = json::array();
  std::string started = text_of(m.value("started_at", json("")));
  for (const ShardFolder* s : by_index) {
    const json& sm = s->manifest;
    const std::string at = text_of(sm.value("started_at", json("")));
    if (!at.empty() && (started.empty() || at < started)) started = at;
    list.push_back({{"folder", s->dir},
                    {"shard", s->shard.spec.text()},
                    {"cases", s->shard.case_ids.size()},
                    {"estimated_cost_s", s->shard.estimated_cost_s},
                    {"started_at", sm.value("started_at", json(nullptr))},
                    {"resumed", sm.value("resumed", json::array())},
                    {"seconds", s->summary.value("seconds", json(nullptr))},
                    {"workers", sm["options"].value("workers", json(nullptr))},
                    {"threads", sm["options"].value("threads", json(nullptr))},
                    {"machine", sm.value("machine", json(nullptr))},
                    {"sandbox", sm.value("sandbox", json(nullptr))}});
  }
  m["started_at"] = started;
  m["merged"] = {{"argv", mo.argv},
                 {"merged_at", utc_now()},
                 {"shards", list},
                 {"cases_total", by_index[0]->shard.cases_total},
                 {"fingerprint", by_index[0]->shard.fingerprint}};
  return m;
}

// Wall time, load and peaks of the merged run: the longest shard's wall time (the shards ran
// side by side), the busiest shard's load, each timing's % of peak against its own machine's
// peaks (the first shard's peaks head the report).
void add_measurements(RunSummary& s, const std::vector<const ShardFolder*>& by_index,
                      const std::vector<TimingRecord>& timings, bool perf) {
  double worst = -1;
  for (const ShardFolder* sh : by_index) {
    s.seconds = std::max(s.seconds, sh->summary.value("seconds", 0.0));
    if (!sh->summary.contains("timing_load") || !sh->summary["timing_load"].is_object()) continue;
    const json& l = sh->summary["timing_load"];
    const int cores = std::max(1, l.value("cores", 1));
    const double load =
        std::max(l.value("loadavg_before", -1.0), l.value("loadavg_after", -1.0)) / cores;
    if (load <= worst) continue;
    worst = load;
    s.cores = cores;
    s.load_before = l.value("loadavg_before", -1.0);
    s.load_after = l.value("loadavg_after", -1.0);
    s.running_before = l.value("runnable_before", -1);
    s.running_after = l.value("runnable_after", -1);
  }
  if (!perf) return;
  std::map<std::string, const MachinePeaks*> peaks_of;
  for (const ShardFolder* sh : by_index)
    for (const std::string& id : sh->shard.case_ids) peaks_of[id] = &sh->peaks;
  s.peak_triad_gbps = by_index[0]->peaks.triad_gbps;
  s.peak_gflops = by_index[0]->peaks.peak_gflops;
  for (OpSummary& o : s.ops) {
    double best = 0;
    for (const TimingRecord& t : timings)
      if (t.op == o.op && t.error.empty() && t.speedup > 0)
        best = std::max(best, peak_fraction(t, *peaks_of.at(t.case_id)));
    o.pct_of_peak = 100.0 * best;
  }
}

// The merged run folder: created, locked, and empty of any run.
std::unique_ptr<RunFolderLock> take_out_folder(const std::string& out,
                                               const std::vector<ShardFolder>& shards) {
  std::error_code ec;
  const fs::path canon_out = fs::weakly_canonical(out, ec);
  for (const ShardFolder& s : shards)
    if (fs::weakly_canonical(s.dir, ec) == canon_out)
      usage_error(fmt::format("--out {} is the shard folder {}; write the merged run elsewhere",
                              out, s.dir));
  prepare_out_dir(out);
  auto lock = std::make_unique<RunFolderLock>(out);
  for (const char* file : {"manifest.json", "results.jsonl"})
    if (fs::exists(out + "/" + file, ec))
      usage_error(
          fmt::format("--out {} already holds a run ({}); choose another --out", out, file));
  return lock;
}

}  // namespace

int merge_runs(const MergeOptions& mo) {
  if (mo.folders.empty())
    usage_error(
        "crucible merge needs the run folders of the shards: crucible merge runs/shard-1 "
        "runs/shard-2 ... --out runs/merged");
  std::map<fs::path, std::string> seen;
  for (const std::string& f : mo.folders) {
    std::error_code ec;
    auto [it, fresh] = seen.emplace(fs::weakly_canonical(f, ec), f);
    if (!fresh)
      usage_error(fmt::format("{} and {} are the same folder: give each shard's run folder once",
                              it->second, f));
  }

  std::vector<ShardFolder> shards;
  for (const std::string& f : mo.folders) shards.push_back(read_shard_folder(f));
  for (size_t k = 1; k < shards.size(); ++k)
    if (const std::string d = difference(shards[0], shards[k]); !d.empty())
      usage_error(
          fmt::format("{} and {} are not shards of one run: {}", shards[0].dir, shards[k].dir, d));
  check_every_shard_once(shards);
  const std::vector<std::string> ids = join_case_lists(shards);
  std::vector<const ShardFolder*> by_index(shards.size());
  for (const ShardFolder& s : shards) by_index[static_cast<size_t>(s.shard.spec.index - 1)] = &s;

  // The records, in the suite's order.
  std::map<std::string, size_t> position;
  for (size_t k = 0; k < ids.size(); ++k) position.emplace(ids[k], k);
  std::vector<CaseResult> results;
  std::vector<TimingRecord> timings;
  for (const ShardFolder* s : by_index) {
    results.insert(results.end(), s->results.begin(), s->results.end());
    timings.insert(timings.end(), s->timings.begin(), s->timings.end());
  }
  order_records(results, timings, position);

  RunOptions o = merged_options(by_index[0]->manifest["options"]);
  o.progress = mo.progress;
  o.out = mo.out.empty() ? default_out_dir(o) + "-merged" : mo.out;
  const auto lock = take_out_folder(o.out, shards);

  std::string lines;
  for (const CaseResult& r : results)
    lines += to_json(r).dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  for (const TimingRecord& t : timings)
    lines += to_json(t).dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  write_file_atomically(o.out + "/results.jsonl", lines);
  const std::vector<std::string> argv = unsplit_argv(by_index[0]->manifest.value("argv", json()));
  write_file_atomically(o.out + "/manifest.json",
                        merged_manifest(by_index, argv, mo).dump(2) + "\n");

  RunSummary s = summarize_run(o, results, timings);
  add_measurements(s, by_index, timings, o.perf);
  std::string command;
  for (const std::string& a : argv) command += (command.empty() ? "" : " ") + a;
  const int status = write_run_reports(o, s, results, command);
  if (mo.progress)
    fmt::print("merged {} shards ({} cases) into {}\n", shards.size(), ids.size(), o.out);
  return status;
}

}  // namespace crucible
