// The subcommands of `crucible`. Each returns the process exit status.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "crucible/eval/generate.h"
#include "crucible/eval/run.h"

namespace crucible {

// Cases of a traces suite with more elements (or estimated FLOPs) than these are skipped by
// default, and reported as skipped with the reason. The reference computes real-model calls in
// f64 with BLAS products and threaded loops, so the caps are only a safety net above the largest
// shipped call (data/traces: 5.3e8 elements, 1.2e11 FLOPs); `--max-numel 0 --max-flops 0` lifts
// them. See docs/architecture.md.
constexpr int64_t kDefaultTraceMaxNumel = int64_t{1} << 30;
constexpr double kDefaultTraceMaxFlops = 1e12;

// The values of `crucible generate`'s flags as given; generate_options checks them.
struct GenerateFlags {
  std::string suite = "smoke";
  std::vector<std::string> ops;
  std::string max_attempts = "5";
  std::string run_id;
  std::string out_root = "generated_kernels";
  std::string provider = "anthropic";
  std::string model, base_url;
  std::string language = "cpp";
  std::string jobs = "1";
  bool resume = false;
  std::string seed = "0";
  std::string scoring_cases = "32";
  std::string timeout = "60";
  std::string call_timeout = "300";
  std::string max_tries = "4";
  std::string backoff = "1";
  std::string concurrency = "4";
  std::string max_tokens = "8192";
  std::string prices, prompts, workers;
  bool no_sandbox = false;
  bool quiet = false;
};
// The values of `crucible run`'s flags, each validated as it is parsed (add_run_flags): a value
// that cannot mean anything is a Usage error naming the flag. command_run checks the flags
// against each other.
struct RunFlags {
  std::string gpus = "auto";
  std::string suite = "smoke";
  std::string backend;
  std::string reference = "ref";
  std::string baseline;
  bool perf = false;
  bool warm_cache = false;
  std::vector<std::string> ops;     // --ops terms (empty: not given)
  std::set<DType> dtypes;           // --dtypes (empty: not given)
  std::optional<DType> perf_dtype;  // --perf-dtype f32: timed cases' floating tensors as this
  int calls_per_op = 0;             // --calls-per-op N: traces, at most N distinct calls per op
  std::vector<std::string> model_filter;  // --model-filter: model suite, name terms
  double model_k = 3.0;                   // --model-k: the f64 arbiter's multiplier
  std::string fallback;                   // --fallback: model suite, runs the ops --backend lacks
  std::string quant;                      // --quant: model suite, a quantization recipe
  uint64_t seed = 0;
  int workers = 0;  // 1 .. max_parallelism(); 0: not given (one per core)
  int threads = 0;  // 1 .. max_parallelism(); 0: not given (one per core)
  double timeout = 60;
  size_t memory_limit = kMemoryLimitAuto;  // 0: no limit
  std::string out;
  std::string history;  // --history <file> | none (empty: the default)
  std::string resume;
  std::string op;
  std::string case_text;
  std::string inputs;  // --inputs: the single case's tensors from a safetensors file
  ShardSpec shard;     // --shard i/n: this machine's share of the suite (count 0: all of it)
  double p = 1.0;
  int64_t max_numel = kDefaultTraceMaxNumel;  // 0: no cap
  double max_flops = kDefaultTraceMaxFlops;   // 0: no cap
  bool quiet = false;
  bool profile = false;  // --profile: profile.json and where the time went
  bool no_sandbox = false;
  std::string sanitize;       // --sanitize memcheck: failing cases again under a memory checker
  std::string ops_directory;  // BackendBench's --backend directory --ops-directory <folder>
  std::string kernels_dir;    // BackendBench's --backend pregenerated --kernels-dir <folder>
  std::vector<std::string> given;  // the long names of the flags given on the command line
  // --backend llm: `crucible generate`'s flags of the same names (the kernels are generated into
  // generated_kernels/<run-id>/, then evaluated as a kernel folder).
  GenerateFlags llm;
};

// The flags of `app` given on its command line (their long names), for RunFlags::given.
std::vector<std::string> given_flags(const CLI::App& app);
// The most worker processes or threads a flag may ask for: 4 x the cores (more only thrash).
int max_parallelism();

// Adds `crucible run`'s flags to `app`; parsing fills `f` (src/cli/run_flags.cpp).
void add_run_flags(CLI::App& app, RunFlags& f);
// Parses "4G", "512M", "65536" into bytes; a Usage error names the flag otherwise.
// Refuses values that cannot mean anything: not finite, or above 2^50 bytes (1 PiB).
size_t parse_bytes(const std::string& text, const std::string& flag);

void add_generate_flags(CLI::App& app, GenerateFlags& f);
// The options of the flags; a value that cannot mean anything is a Usage error naming its flag.
GenerateOptions generate_options(const GenerateFlags& f, const std::vector<std::string>& argv);
int command_generate(const GenerateFlags& f, const std::vector<std::string>& argv);

int command_run(RunFlags flags, const std::vector<std::string>& argv);
int command_ops(const std::string& backend, bool json);
// `crucible backends`: every backend with its state (a backend that needs something from the
// machine, such as flag_gems, says whether it can run here and why not).
int command_backends(bool json);
// meta: each call of a catalog op also goes through the op's meta function (outputs printed,
// invalid calls listed with file:line, exit status 1 when there are any).
int command_parse(const std::string& path, bool quiet, bool meta);
// `crucible graph check|run` (src/cli/graph_command.cpp).
struct GraphFlags {
  std::string file;
  std::string backend;
  std::string weights;
  std::string inputs;
  uint64_t seed = 0;
  bool golden = false;
  double timeout_s = 600;
  size_t memory_limit = size_t{4} << 30;
  bool no_sandbox = false;
};
CLI::App* add_graph_command(CLI::App& app, GraphFlags& f);
int command_graph(const CLI::App& graph, const GraphFlags& f);
// `crucible opbyop` (src/cli/opbyop_command.cpp).
struct OpByOpFlags {
  std::vector<std::string> graphs;
  std::string backend;
  std::string out;
  uint64_t seed = 0;
  double timeout_s = 60;
  int workers = 0;
  bool perf = false;
  std::string baseline;
  bool no_chained = false;
  std::string fallback;  // the chained run: a backend for the ops --backend lacks
  bool no_sandbox = false;
  bool quiet = false;
};
CLI::App* add_opbyop_command(CLI::App& app, OpByOpFlags& f);
int command_opbyop(const OpByOpFlags& f, const std::vector<std::string>& argv);
// `crucible merge` (src/cli/merge_command.cpp).
struct MergeFlags {
  std::vector<std::string> folders;
  std::string out;
  bool out_given = false;
  bool quiet = false;
};
CLI::App* add_merge_command(CLI::App& app, MergeFlags& f);
int command_merge(const MergeFlags& f, const std::vector<std::string>& argv);
// `crucible report <run folder>`: (re)writes the folder's report.html.
int command_report(const std::string& folder);
// `crucible history`: the runs of the history, newest first (limit 0: all).
int command_history(const std::string& history, int limit, bool json);
// `crucible compare <run|id> <run|id>`: 0 nothing regressed, 1 something did.
struct CompareFlags {
  std::string before, after;
  std::string history;  // empty: the default
  bool markdown = false, json = false;
  double min_change = 2.0;
};
int command_compare(const CompareFlags& f);
// `crucible models` (src/cli/models_command.cpp): the zoo, or one model's graph exported.
struct ModelsFlags {
  bool ops = false;                   // list each model's ops
  std::string export_name;            // --export <Name>: write the model's graph
  std::string test;                   // --test <model test> (default: the config's first)
  bool training = false;              // --training: the training graph
  std::string out;                    // -o <file.graph>
  std::string weights_out;            // --weights-out <file.safetensors>: its state dict
  std::string checkpoint;             // --checkpoint <file.safetensors>: the state dict to use
  bool hf = false;                    // --hf: the checkpoint is in Hugging Face's layout
  std::string run_name;               // --run <Name>: train-step the model under a policy
  std::vector<std::string> backends;  // --backends a,b: the policy's backends, in preference
  std::string policy = "first";       // --policy first|fastest
  std::vector<std::string> force;     // --force op=backend
  std::string cache;                  // --policy-cache <file.json>
  uint64_t seed = 0;
  double timeout_s = 600;  // --timeout: the judged step's worker
};
CLI::App* add_models_command(CLI::App& app, ModelsFlags& f);
int command_models(const ModelsFlags& f);
// threads 0: number of cores; cached: reuse this machine's cached peaks when present.
int command_calibrate(int threads, bool cached, bool json);

// `crucible bench` (bench_command.cpp): the quantization micro-benchmark.
struct BenchFlags {
  std::string config, output, out;
  std::string backend = "cpu";
  double min_sqnr = 0;
  int samples = 5;
  double max_seconds = 20;
  bool quiet = false;
};
CLI::App* add_bench_command(CLI::App& app, BenchFlags& f);
int command_bench(const BenchFlags& f, const std::vector<std::string>& argv);

}  // namespace crucible
