// `crucible opbyop <graph or folder>... --backend B`: the op-by-op flow. For each model graph,
// every unique node runs alone on the candidate with its real inputs (a run of the suite
// opbyop:<graph>: isolated workers, timeouts, a run folder), then the whole graph runs chained
// on the candidate (the model suite's judge), naming the first node that diverges. Reports:
// opbyop.json, opbyop.md, opbyop.xlsx; each failing node gets a reproducer with its real input
// tensors saved beside it.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "crucible/backends/backend.h"
#include "crucible/cases/trace.h"
#include "crucible/core/error.h"
#include "crucible/eval/run.h"
#include "crucible/eval/saved_inputs.h"
#include "crucible/graph/node_inputs.h"
#include "crucible/graph/safetensors.h"
#include "crucible/report/opbyop_report.h"
#include "crucible/results/result.h"
#include "crucible/suites/opbyop.h"

namespace crucible {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> graph_files(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const std::string& p : paths)
    for (std::string& f : graph::graph_files(p)) out.push_back(std::move(f));
  return out;
}

// A run folder's records: case results and, when timed, speed-ups, by case id (one pass).
struct RunRecordsById {
  std::map<std::string, CaseResult> results;
  std::map<std::string, double> speedups;
};

RunRecordsById records_of(const std::string& dir) {
  RunRecordsById out;
  std::ifstream in(dir + "/results.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded()) continue;
    const std::string record = j.value("record", "");
    if (record == "case") {
      CaseResult r = case_result_from_json(j);
      out.results[r.case_id] = std::move(r);
    } else if (record == "timing") {
      TimingRecord t = timing_record_from_json(j);
      if (t.error.empty()) out.speedups[t.case_id] = t.speedup;
    }
  }
  return out;
}

// The op-by-op status of a node's verdict.
std::string node_status(const CaseResult& r) {
  switch (r.status) {
    case Status::Passed:
      return "passed";
    case Status::Unsupported:
    case Status::CompileError:
      return "unsupported";
    case Status::Crashed:
    case Status::MemoryLimit:
      return "crashed";
    case Status::TimedOut:
      return "timed_out";
    case Status::Failed:
      return r.detail.starts_with("unexpected error: the candidate raised") ? "raised" : "wrong";
    default:
      return "wrong";
  }
}

std::string join_lines(const std::vector<int>& lines) {
  std::string s;
  for (int l : lines) s += (s.empty() ? "" : ", ") + std::to_string(l);
  return s;
}

// "first divergence at <file>:<line>: <statement> (...)" in the chained verdict.
void read_divergence(const std::string& detail, const std::string& file, OpByOpModel& m) {
  const std::string key = "first divergence at " + file + ":";
  const size_t at = detail.find(key);
  if (at == std::string::npos) return;
  size_t p = at + key.size();
  int line = 0;
  while (p < detail.size() && std::isdigit(static_cast<unsigned char>(detail[p])))
    line = line * 10 + (detail[p++] - '0');
  m.first_divergence_line = line;
  if (detail.compare(p, 2, ": ") == 0) p += 2;
  const size_t end = detail.find(" (", p);
  m.first_divergence = detail.substr(p, end == std::string::npos ? std::string::npos : end - p);
}

}  // namespace

CLI::App* add_opbyop_command(CLI::App& app, OpByOpFlags& f) {
  CLI::App* c = app.add_subcommand(
      "opbyop", "every unique node of a model alone on its real inputs, then the model chained");
  c->add_option("graphs", f.graphs, "model graph files or folders of them")->required();
  c->add_option("--backend", f.backend, "the candidate backend (default: the build's default)");
  c->add_option("--out", f.out, "the report folder (default: runs/opbyop-<backend>-<time>)");
  c->add_option("--seed", f.seed, "seed of the graph's values");
  c->add_option("--timeout", f.timeout_s, "seconds per node (and per chained model)")
      ->check(CLI::PositiveNumber);
  c->add_option("--workers", f.workers, "worker processes (default: one per core)")
      ->check(CLI::Range(1, max_parallelism()));
  c->add_flag("--perf", f.perf, "also time every passing node against --baseline");
  c->add_option("--baseline", f.baseline, "the backend timed against (default: ref)");
  c->add_flag("--no-chained", f.no_chained, "skip the chained run of each whole model");
  c->add_option("--fallback", f.fallback,
                "the chained run: a backend for the ops --backend lacks (each node still runs "
                "on --backend alone)");
  c->add_flag("--no-sandbox", f.no_sandbox, "run untrusted kernels without the sandbox");
  c->add_flag("-q,--quiet", f.quiet, "no progress output");
  return c;
}

int command_opbyop(const OpByOpFlags& f, const std::vector<std::string>& argv) {
  if (!f.fallback.empty() && f.no_chained)
    usage_error("--fallback applies to the chained run; drop it or --no-chained");
  if (!f.baseline.empty() && !f.perf)
    usage_error("--baseline only matters with --perf (it is what nodes are timed against)");
  const std::string backend =
      f.backend.empty() ? BackendRegistry::instance().default_backend() : f.backend;
  std::string out = f.out;
  if (out.empty()) {
    const std::time_t now = std::time(nullptr);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
    out = fmt::format("runs/opbyop-{}-{}", backend, stamp);
  }
  fs::create_directories(out);
  std::vector<OpByOpModel> models;
  bool all_passed = true;
  for (const std::string& file : graph_files(f.graphs)) {
    std::shared_ptr<const OpByOpPlan> plan = opbyop_plan(file, f.seed);
    const graph::Graph& g = *plan->graph;
    OpByOpModel m{.model = g.name, .file = file, .kind = g.kind};
    const std::string dir = out + "/" + g.name;
    if (!f.quiet)
      fmt::print("{}: {} nodes, {} unique\n", g.name, g.nodes.size(), plan->nodes.size());

    RunOptions o;
    o.suite.suite = "opbyop:" + file;
    o.suite.seed = f.seed;
    o.backend = backend;
    o.perf = f.perf;
    if (!f.baseline.empty()) o.baseline = f.baseline;
    o.workers = f.workers;
    o.timeout_s = f.timeout_s;
    o.out = dir + "/nodes";
    o.sandbox = !f.no_sandbox;
    o.progress = !f.quiet;
    o.argv = argv;
    run(o);
    const RunRecordsById records = records_of(o.out);
    const auto& results = records.results;
    const auto& speedups = records.speedups;
    const std::vector<SuiteCase> cases = build_suite(o.suite);  // the same nodes, in order
    fs::create_directories(dir + "/reproducers");
    for (size_t i = 0; i < cases.size() && i < plan->nodes.size(); ++i) {
      const OpByOpNode& n = plan->nodes[i];
      const std::string id = cases[i].c.id();
      OpByOpRow row{.op = n.op,
                    .call = cases::print_call(n.call),
                    .lines = join_lines(n.lines),
                    .occurrences = static_cast<int64_t>(n.lines.size())};
      auto it = results.find(id);
      if (it == results.end()) {
        row.status = "crashed";
        row.detail = "no verdict was recorded";
      } else {
        const CaseResult& r = it->second;
        row.status = node_status(r);
        row.detail = r.detail;
        for (const TensorCheck& c : r.checks) {
          row.pcc = std::isnan(row.pcc) ? c.pcc : std::min(row.pcc, c.pcc);
          row.max_abs_err = std::isnan(row.max_abs_err) ? c.max_abs_err
                                                        : std::max(row.max_abs_err, c.max_abs_err);
          row.max_rel_err = std::isnan(row.max_rel_err) ? c.max_rel_err
                                                        : std::max(row.max_rel_err, c.max_rel_err);
        }
      }
      if (auto s = speedups.find(id); s != speedups.end()) row.speedup = s->second;
      if (row.status != "passed" && row.status != "unsupported" && cases[i].op) {
        // The node's real inputs beside the report; `crucible run --inputs` replays them.
        const std::string inputs = fmt::format("{}/reproducers/{}.safetensors", dir, id);
        graph::write_safetensors(inputs, named_input_tensors(*cases[i].op, *n.inputs));
        row.reproducer = cases[i].c.reproducer(backend) + " --inputs " + inputs;
      }
      if (row.status != "passed") all_passed = false;
      m.rows.push_back(std::move(row));
    }

    if (!f.no_chained) {
      RunOptions chained = o;
      chained.suite = SuiteOptions{};
      chained.suite.suite = "model:" + file;
      chained.suite.seed = f.seed;
      chained.suite.fallback = f.fallback;
      chained.perf = false;
      chained.out = dir + "/chained";
      run(chained);
      for (const auto& [id, r] : records_of(chained.out).results) {
        m.chained_status = status_name(r.status);
        m.chained_detail = r.detail;
        read_divergence(r.detail, file, m);
        if (r.status != Status::Passed) all_passed = false;
      }
    }
    models.push_back(std::move(m));
  }
  write_opbyop_reports(out, backend, models);
  if (!f.quiet) {
    for (const OpByOpModel& m : models) {
      std::map<std::string, int> c;
      for (const OpByOpRow& r : m.rows) ++c[r.status];
      std::string counts;
      for (const std::string& s : opbyop_statuses())
        if (c[s] > 0) counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", c[s], s);
      fmt::print("{:<28} {} unique nodes: {}", m.model, m.rows.size(), counts);
      if (!m.chained_status.empty()) fmt::print("; chained {}", m.chained_status);
      if (!m.first_divergence.empty())
        fmt::print("; first divergence line {}: {}", m.first_divergence_line, m.first_divergence);
      fmt::print("\n");
    }
    fmt::print("reports: {}/opbyop.json, opbyop.md, opbyop.xlsx\n", out);
  }
  return all_passed ? 0 : 1;
}

}  // namespace crucible
