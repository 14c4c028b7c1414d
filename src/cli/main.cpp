// The `crucible` command: thin — parses flags and calls the library.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "crucible/backends/blas_core.h"
#include "crucible/build_info.h"
#include "crucible/core/error.h"
#include "sandbox/inherited_fds.h"

using namespace crucible;

namespace {

int run_cli(int argc, char** argv) {
  CLI::App app{"crucible: verify and benchmark machine-learning operator backends"};
  app.require_subcommand(1);
  app.set_version_flag(
      "--version", std::string("crucible ") + CRUCIBLE_VERSION + " (" + CRUCIBLE_GIT_COMMIT + ")");
  std::vector<std::string> args(argv, argv + argc);

  RunFlags rf;
  CLI::App* run = app.add_subcommand("run", "run a suite of cases on a backend");
  add_run_flags(*run, rf);

  std::string ops_backend;
  bool ops_json = false;
  CLI::App* ops = app.add_subcommand("ops", "list the op catalog and what a backend supports");
  ops->add_option("--backend", ops_backend, "show which ops and dtypes this backend supports");
  ops->add_flag("--json", ops_json, "print JSON instead of a table");

  bool backends_json = false;
  CLI::App* backends = app.add_subcommand(
      "backends", "list the backends of this build and whether each can run here");
  backends->add_flag("--json", backends_json, "print JSON");

  std::string parse_path;
  bool parse_quiet = false;
  CLI::App* parse = app.add_subcommand("parse", "validate and pretty-print a trace file or folder");
  parse->add_option("path", parse_path, "trace file or folder")->required();
  parse->add_flag("-q,--quiet", parse_quiet, "only validate; print the counts");
  bool parse_meta = false;
  parse->add_flag("--meta", parse_meta,
                  "also check every call of a catalog op with the meta layer (output shapes and "
                  "dtypes, ATen's argument checks) without computing anything");

  GenerateFlags gf;
  CLI::App* generate = app.add_subcommand(
      "generate", "generate kernels with a model, evaluate them, score them on held-out cases");
  add_generate_flags(*generate, gf);

  int cal_threads = 0;
  bool cal_cached = false, cal_json = false;
  CLI::App* calibrate = app.add_subcommand(
      "calibrate", "measure triad bandwidth and peak f32 FLOP/s (the % of peak of --perf runs)");
  calibrate->add_option("--threads", cal_threads, "threads to measure with (default: cores)");
  calibrate->add_flag("--cached", cal_cached, "print the cached peaks if present, else measure");
  calibrate->add_flag("--json", cal_json, "print JSON");

  std::string report_folder;
  CLI::App* report = app.add_subcommand(
      "report", "(re)write a run folder's report.html (scores, table, plots, failing cases)");
  report->add_option("folder", report_folder, "the run folder")->required();

  std::string history_file;
  int history_limit = 20;
  bool history_json = false;
  CLI::App* history = app.add_subcommand("history", "list the runs recorded in the run history");
  history->add_option("--history", history_file,
                      "the history file (default: $XDG_DATA_HOME/crucible/history.db or "
                      "~/.local/share/crucible/history.db)");
  history->add_option("--limit", history_limit, "the newest N runs (0: all)")->default_str("20");
  history->add_flag("--json", history_json, "print JSON");

  CompareFlags cf;
  CLI::App* compare = app.add_subcommand(
      "compare",
      "what changed between two runs (run folders or history ids); exit 1 when something "
      "regressed");
  compare->add_option("before", cf.before, "the earlier run: a run folder or a history id")
      ->required();
  compare->add_option("after", cf.after, "the later run: a run folder or a history id")->required();
  compare->add_option("--history", cf.history, "the history file for run ids (default: as run's)");
  compare->add_flag("--markdown", cf.markdown, "print Markdown");
  compare->add_flag("--json", cf.json, "print JSON");
  compare
      ->add_option("--min-change", cf.min_change,
                   "a speed-up moved when both runs' p10..p90 ranges of the candidate's "
                   "time and their median speed-ups part by at least this factor")
      ->default_str("2");

  GraphFlags graph_flags;
  CLI::App* graph = add_graph_command(app, graph_flags);
  OpByOpFlags opbyop_flags;
  CLI::App* opbyop = add_opbyop_command(app, opbyop_flags);
  MergeFlags merge_flags;
  CLI::App* merge = add_merge_command(app, merge_flags);
  BenchFlags bench_flags;
  CLI::App* bench = add_bench_command(app, bench_flags);
  ModelsFlags models_flags;
  CLI::App* models = add_models_command(app, models_flags);

  // A flag value that cannot mean anything is refused while parsing, as a crucible::Error
  // naming the flag (src/cli/run_flags.cpp); CLI11's own errors (an unknown flag, a missing
  // value) are usage errors too: one line on stderr, exit status 2.
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    const char* sub = run->parsed()         ? "run "
                      : ops->parsed()       ? "ops "
                      : backends->parsed()  ? "backends "
                      : parse->parsed()     ? "parse "
                      : calibrate->parsed() ? "calibrate "
                      : graph->parsed()     ? "graph "
                      : opbyop->parsed()    ? "opbyop "
                      : merge->parsed()     ? "merge "
                      : report->parsed()    ? "report "
                      : history->parsed()   ? "history "
                      : compare->parsed()   ? "compare "
                      : bench->parsed()     ? "bench "
                      : models->parsed()    ? "models "
                      : generate->parsed()  ? "generate "
                                            : nullptr;
    fmt::print(stderr, "crucible: error: {} (crucible {}--help lists the {})\n", e.what(),
               sub ? sub : "", sub ? "flags" : "commands");
    return 2;
  }

  if (run->parsed()) {
    rf.given = given_flags(*run);
    return command_run(rf, args);
  }
  if (ops->parsed()) return command_ops(ops_backend, ops_json);
  if (backends->parsed()) return command_backends(backends_json);
  if (parse->parsed()) return command_parse(parse_path, parse_quiet, parse_meta);
  if (generate->parsed()) return command_generate(gf, args);
  if (calibrate->parsed()) return command_calibrate(cal_threads, cal_cached, cal_json);
  if (graph->parsed()) return command_graph(*graph, graph_flags);
  if (opbyop->parsed()) return command_opbyop(opbyop_flags, args);
  if (merge->parsed()) {
    merge_flags.out_given = merge->get_option("--out")->count() > 0;
    return command_merge(merge_flags, args);
  }
  if (report->parsed()) return command_report(report_folder);
  if (history->parsed()) return command_history(history_file, history_limit, history_json);
  if (compare->parsed()) return command_compare(cf);
  if (bench->parsed()) return command_bench(bench_flags, args);
  if (models->parsed()) return command_models(models_flags);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  // A memory checker's descriptors, kept in crucible's child processes when asked to.
  read_inherited_fds_choice();
  // OpenBLAS chose its kernels when it loaded, before main (crucible/backends/blas_core.h).
  cpu::restart_with_corrected_blas_core(argv);
  try {
    return run_cli(argc, argv);
  } catch (const Error& e) {
    fmt::print(stderr, "crucible: error: {}\n", e.what());
    return e.kind() == ErrorKind::Internal ? 3 : 2;
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "crucible: error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "crucible: internal error: {}\n", e.what());
    return 3;
  }
}
