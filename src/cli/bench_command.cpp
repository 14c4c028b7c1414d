// `crucible bench --config <yaml> [--output <json>]`: the quantization micro-benchmark
// (docs/quantization.md). The config is read and checked in full before anything runs; the
// rows are printed as a grid and written to the run folder as CSV, OSS benchmark JSON and
// JSON lines, beside manifest.json.
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "crucible/backends/backend.h"
#include "crucible/build_info.h"
#include "crucible/core/error.h"
#include "crucible/quant/bench.h"
#include "crucible/quant/bench_report.h"
#include "crucible/report/atomic_file.h"
#include "crucible/report/manifest.h"
#include "eval/run_folder.h"

namespace crucible {
namespace {

double parse_number(const std::string& flag, const std::string& s, double lo, double hi) {
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc{} || end != s.data() + s.size() || !(v >= lo) || !(v <= hi))
    usage_error(fmt::format("{} '{}': expected a number in [{}, {}]", flag, s, lo, hi));
  return v;
}

std::string default_folder(const std::string& parent, const std::string& backend) {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::gmtime(&now));
  std::string safe = backend;
  for (char& c : safe)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '_';
  return fmt::format("{}/bench-{}-{}-{}", parent.empty() ? "runs" : parent, safe, stamp, getpid());
}

}  // namespace

CLI::App* add_bench_command(CLI::App& app, BenchFlags& f) {
  CLI::App* b = app.add_subcommand(
      "bench", "quantization micro-benchmark: recipes x shapes x model types, speed and SQNR");
  b->add_option("--config", f.config, "the YAML config (TorchAO's keys; docs/quantization.md)")
      ->required();
  b->add_option("--output", f.output, "also write the OSS benchmark JSON records to this file");
  b->add_option("--out", f.out, "the run folder (default: <output_dir or runs>/bench-...)");
  b->add_option("--backend", f.backend, "the backend that runs both models (default: cpu)");
  b->add_option_function<std::string>(
      "--min-sqnr",
      [&f](const std::string& s) { f.min_sqnr = parse_number("--min-sqnr", s, 0, 300); },
      "fail a row whose SQNR against the high-precision output is below this (dB)");
  b->add_option_function<std::string>(
      "--samples",
      [&f](const std::string& s) {
        f.samples = static_cast<int>(parse_number("--samples", s, 1, 1000));
        if (f.samples != parse_number("--samples", s, 1, 1000))
          usage_error("--samples '" + s + "': expected a whole number");
      },
      "timed samples per row (default 5)");
  b->add_option_function<std::string>(
      "--max-seconds",
      [&f](const std::string& s) {
        f.max_seconds = parse_number("--max-seconds", s, 0.001, 86400);
      },
      "stop sampling a row after this long (default 20)");
  b->add_flag("-q,--quiet", f.quiet, "print the grid only at the end");
  return b;
}

int command_bench(const BenchFlags& f, const std::vector<std::string>& argv) {
  // Everything that can be refused is refused before anything runs.
  const quant::BenchConfig config = quant::read_bench_config(f.config);
  quant::BenchOptions o;
  o.backend = f.backend;
  o.min_sqnr = f.min_sqnr;
  o.samples = f.samples;
  o.max_seconds = f.max_seconds;
  auto probe = BackendRegistry::instance().create(o.backend);
  const std::string dir = f.out.empty() ? default_folder(config.output_dir, o.backend) : f.out;
  prepare_out_dir(dir);
  RunFolderLock lock(dir);
  nlohmann::json options = {{"config", f.config},           {"backend", o.backend},
                            {"min_sqnr", o.min_sqnr},       {"samples", o.samples},
                            {"max_seconds", o.max_seconds}, {"recipes", nlohmann::json::array()}};
  for (const quant::Recipe& r : config.recipes) options["recipes"].push_back(r.name);
  const nlohmann::json manifest =
      make_manifest(argv, o.seed, options,
                    {{"candidate", probe->name(), probe->version(), probe->device().str()},
                     {"reference", "ref", "", "cpu"}});
  write_file_atomically(dir + "/manifest.json", manifest.dump(2) + "\n");

  const std::vector<quant::BenchRow> rows =
      quant::run_bench(config, o, [&](const quant::BenchRow& r) {
        if (f.quiet) return;
        fmt::print(stderr, "  {} {}x{}x{} {} {}: {}{}\n", r.model_type, r.m, r.k, r.n,
                   dtype_code(r.dtype), r.recipe, r.status,
                   r.status == "ok" || r.status == "failed"
                       ? fmt::format(" speedup {:.3f}, SQNR {:.1f} dB", r.speedup, r.sqnr_db)
                       : "");
      });
  const MachineInfo m = machine_info();
  const nlohmann::json runner = {
      {"name", "crucible " + o.backend},
      {"type", "cpu"},
      {"cpu_info", m.cpu_model},
      {"cpu_count", m.cores},
      {"avail_mem_in_gb", static_cast<double>(m.memory_bytes) / (1 << 30)},
      {"gpu_info", ""},
      {"gpu_count", 0},
      {"avail_gpu_mem_in_gb", 0},
      {"extra_info", {{"backend", o.backend}}}};
  const nlohmann::json deps = {{"crucible",
                                {{"repo", "crucible"},
                                 {"branch", ""},
                                 {"sha", CRUCIBLE_GIT_COMMIT},
                                 {"version", CRUCIBLE_VERSION}}}};
  const nlohmann::json records = quant::oss_records(rows, runner, deps);
  const std::string grid = quant::bench_grid(rows);
  std::string jsonl;
  for (const nlohmann::json& r : records) jsonl += r.dump() + "\n";
  write_file_atomically(dir + "/grid.txt", grid);
  write_file_atomically(dir + "/bench.csv", quant::bench_csv(rows));
  write_file_atomically(dir + "/bench.json", records.dump(2) + "\n");
  write_file_atomically(dir + "/bench.jsonl", jsonl);
  if (!f.output.empty()) write_file_atomically(f.output, records.dump(2) + "\n");
  fmt::print("{}", grid);
  int failed = 0, errors = 0;
  for (const quant::BenchRow& r : rows) {
    failed += r.status == "failed";
    errors += r.status == "error";
  }
  fmt::print("{} rows ({} failed the SQNR gate, {} errors); run folder: {}\n", rows.size(), failed,
             errors, dir);
  return failed + errors > 0 ? 1 : 0;
}

}  // namespace crucible
