// `crucible run`'s flags, each parsed straight into a validated value: a value that cannot mean
// anything (a timeout of nan seconds, a seed of -1, an empty --ops term, 0 workers) is a Usage
// error naming the flag (exit status 2), thrown while the command line is parsed.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <tuple>

#include <fmt/format.h>

#include "cli/commands.h"
#include "crucible/core/error.h"
#include "crucible/quant/recipe.h"
#include "eval/sanitize.h"

namespace crucible {

namespace {

// "--flag value: why", the value quoted when it is empty or holds spaces.
[[noreturn]] void refuse(const std::string& flag, const std::string& text, const std::string& why) {
  const bool plain = !text.empty() && std::none_of(text.begin(), text.end(), [](char c) {
    return std::isspace(static_cast<unsigned char>(c)) != 0;
  });
  usage_error(fmt::format("{} {}: {}", flag, plain ? text : "'" + text + "'", why));
}

// A whole number written in decimal digits with an optional leading '-': not "0x10", "010" read
// as octal, " 5", "+5", "1e3" or "2.0". Out of range: the nearest of int64's bounds.
std::optional<int64_t> decimal_integer(const std::string& t) {
  const size_t start = !t.empty() && t[0] == '-' ? 1 : 0;
  if (start == t.size() || t.find_first_not_of("0123456789", start) != std::string::npos)
    return std::nullopt;
  int64_t v = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec == std::errc::result_out_of_range)
    return start == 1 ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
  if (ec != std::errc{} || end != t.data() + t.size()) return std::nullopt;
  return v;
}

// A finite decimal number ("30", "0.5", "2e9"): not "nan", "inf", hex floats or "1e999".
std::optional<double> decimal_real(const std::string& t) {
  if (t.empty() || t.find_first_not_of("0123456789.eE+-") != std::string::npos ||
      t.find_first_of("0123456789") == std::string::npos)
    return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// --workers / --threads: 1 .. 4 x the cores.
int parallelism(const std::string& flag, const std::string& text, const std::string& what) {
  const auto v = decimal_integer(text);
  if (!v) refuse(flag, text, fmt::format("not a whole number of {}; e.g. {} 4", what, flag));
  if (*v < 1)
    refuse(flag, text,
           fmt::format("give at least 1 (leave {} out for one per core, {} here)", flag,
                       max_parallelism() / 4));
  if (*v > max_parallelism())
    refuse(flag, text,
           fmt::format("at most {} (4 x the {} cores); more {} only compete for them",
                       max_parallelism(), max_parallelism() / 4, what));
  return static_cast<int>(*v);
}

// A comma-separated list: refused when empty or when a term is empty ("relu,,add").
std::vector<std::string> csv_terms(const std::string& flag, const std::string& text,
                                   const std::string& example) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (std::all_of(out.begin(), out.end(), [](const std::string& s) { return s.empty(); }))
    usage_error(fmt::format("{} is empty; name at least one (comma-separated), e.g. {} {}", flag,
                            flag, example));
  for (size_t i = 0; i < out.size(); ++i)
    if (out[i].empty())
      refuse(
          flag, text,
          fmt::format("term {} of {} is empty; separate the names with single commas, e.g. {} {}",
                      i + 1, out.size(), flag, example));
  return out;
}

std::optional<DType> dtype_named(const std::string& flag, const std::string& code) {
  auto t = parse_dtype(code);
  if (!t) {
    std::string valid;
    for (DType x : all_dtypes())
      valid += std::string(valid.empty() ? "" : " ") + std::string(dtype_code(x));
    refuse(flag, code, "unknown dtype '" + code + "'; valid: " + valid);
  }
  return t;
}

// A string flag given as '' means nothing: its absence already has a meaning.
// A value starting with '-' is the next flag taken as this one's value (`--out --quiet`).
std::string non_empty(const std::string& flag, const std::string& text, const std::string& want) {
  if (text.empty()) usage_error(fmt::format("{} is empty; give {}", flag, want));
  if (text[0] == '-') refuse(flag, text, "a flag, not a value; give " + want);
  return text;
}

}  // namespace

int max_parallelism() { return 4 * static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN))); }

size_t parse_bytes(const std::string& text, const std::string& flag) {
  constexpr double kMaxBytes = 1125899906842624.0;  // 2^50: 1 PiB
  std::string t = text;
  if (t.empty()) usage_error(flag + " is empty; give a size like 4G or 512M");
  double mult = 1;
  char last = static_cast<char>(std::toupper(static_cast<unsigned char>(t.back())));
  if (last == 'B') {
    t.pop_back();
    last = t.empty() ? '0' : static_cast<char>(std::toupper(static_cast<unsigned char>(t.back())));
  }
  if (last == 'K' || last == 'M' || last == 'G' || last == 'T') {
    mult = last == 'K'   ? 1024.0
           : last == 'M' ? 1048576.0
           : last == 'G' ? 1073741824.0
                         : 1099511627776.0;
    t.pop_back();
  }
  // Digits and a decimal point only: no "inf", "nan", signs, hex or exponents.
  double v = 0;
  bool ok = !t.empty() && t.find_first_not_of("0123456789.") == std::string::npos &&
            t.find_first_of("0123456789") != std::string::npos;
  if (ok) {
    char* end = nullptr;
    v = std::strtod(t.c_str(), &end);
    ok = end == t.c_str() + t.size();
  }
  if (!ok)
    usage_error(
        fmt::format("{} '{}' is not a size; use e.g. 4G, 512M, a number of bytes, or 0 "
                    "for no limit",
                    flag, text));
  if (!std::isfinite(v * mult) || v * mult > kMaxBytes)
    usage_error(fmt::format("{} '{}' is beyond any machine's memory (at most 1024T, 2^50 bytes)",
                            flag, text));
  return static_cast<size_t>(v * mult);
}

std::vector<std::string> given_flags(const CLI::App& app) {
  std::vector<std::string> out;
  for (const CLI::Option* opt : app.get_options())
    if (opt->count() > 0) out.push_back(opt->get_name(false, false));
  return out;
}

void add_run_flags(CLI::App& app, RunFlags& f) {
  // A flag whose text `parse` turns into its value (or refuses, naming the flag).
  auto flag = [&app](const std::string& name, const std::string& help, const std::string& type,
                     std::function<void(const std::string&)> parse) {
    return app.add_option_function<std::string>(name, std::move(parse), help)->type_name(type);
  };
  auto text = [&flag](const std::string& name, std::string& into, const std::string& want,
                      const std::string& help) {
    return flag(name, help, "TEXT",
                [&into, name, want](const std::string& s) { into = non_empty(name, s, want); });
  };

  text("--suite", f.suite, "smoke, opinfo, opinfo:<dtype> or traces:<file or folder>",
       "smoke | opinfo | opinfo:<dtype> (bf16, f16, f32, f64: each op's samples in that dtype, "
       "as BackendBench's default suite) | traces:<file or folder> | model[:<path>] | "
       "opbyop:<graph>")
      ->default_str(f.suite);
  text("--backend", f.backend, "a backend: cpu, aten, ref, plugin:<lib.so> or dir:<folder>",
       "the candidate backend (default: the fastest built-in CPU backend)");
  text("--reference", f.reference, "a backend (default: ref)", "the backend taken as ground truth")
      ->default_str(f.reference);
  // A switch takes no value: --perf=2 or --perf=false is refused, not read as a number.
  auto on_off = [&app](const std::string& names, bool& into, const std::string& help) {
    const std::string name = names.substr(names.find("--"));
    app.add_flag_function(
        names,
        [&into, name](int64_t times) {
          if (times != 1)
            usage_error(fmt::format("{} is a switch: give it once, without a value (not {}=...)",
                                    name, name));
          into = true;
        },
        help);
  };
  on_off("--perf", f.perf, "time the cases (candidate vs baseline, alternating)");
  text("--baseline", f.baseline, "a backend (default: the reference)",
       "the backend timed against (default: the reference)");
  on_off("--warm-cache", f.warm_cache,
         "with --perf: do not flush the caches between timing samples");
  flag("--ops", "comma-separated overloads (add.Tensor) or base names (add = every overload)",
       "LIST", [&f](const std::string& s) { f.ops = csv_terms("--ops", s, "relu,add.Tensor"); });
  flag("--dtypes",
       "comma-separated dtypes of the first tensor (a factory: of its dtype argument): f32,f16,...",
       "LIST", [&f](const std::string& s) {
         f.dtypes.clear();
         for (const std::string& d : csv_terms("--dtypes", s, "f32,f16"))
           f.dtypes.insert(*dtype_named("--dtypes", d));
       });
  flag("--seed", "seed of the materialised inputs (0 .. 2^64-1)", "UINT",
       [&f](const std::string& s) {
         const bool digits = !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
         uint64_t v = 0;
         auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
         if (!digits || ec != std::errc{} || end != s.data() + s.size())
           usage_error("--seed '" + s + "': expected a non-negative integer below 2^64");
         f.seed = v;
       })
      ->default_str("0");
  flag("--workers",
       "worker processes (default: number of cores; with a backend on CUDA, 8 per GPU and 16 at "
       "most; at most 4 x the cores)",
       "INT",
       [&f](const std::string& s) { f.workers = parallelism("--workers", s, "worker processes"); });
  flag("--gpus",
       "GPUs the workers are spread over, one per worker in turn: auto (every visible GPU when "
       "there are several), all, or a list such as 0,1",
       "LIST",
       [&f](const std::string& s) {
         if (s.empty()) refuse("--gpus", s, "give auto, all or a list of devices such as 0,1");
         f.gpus = s;
       })
      ->default_str("auto");
  flag("--threads",
       "threads each backend call may use in the timing phase, the same for candidate and "
       "baseline (default: number of cores; at most 4 x the cores); the correctness phase's "
       "workers share the cores: each uses cores / workers of them, at least 1, at most this",
       "INT", [&f](const std::string& s) { f.threads = parallelism("--threads", s, "threads"); });
  flag("--timeout",
       "seconds per case before it is killed as timed_out (positive, at most 1e6), plus an "
       "allowance for its size: 1 s per million elements of the call and per 1e10 FLOPs",
       "SECONDS",
       [&f](const std::string& s) {
         const auto v = decimal_real(s);
         if (!v)
           refuse("--timeout", s,
                  "not a number of seconds; give a positive number, e.g. --timeout 30");
         if (*v <= 0 || *v > 1e6)
           refuse("--timeout", s,
                  "give a positive number of seconds, at most 1e6 (every case has a timeout), "
                  "e.g. --timeout 30");
         f.timeout = *v;
       })
      ->default_str("60");
  flag("--memory-limit",
       "per-worker memory limit: auto (each worker's share of three quarters of the machine's "
       "memory, at least 1G), a size such as 4G or 512M, or 0 for none",
       "SIZE",
       [&f](const std::string& s) {
         f.memory_limit = s == "auto" ? kMemoryLimitAuto : parse_bytes(s, "--memory-limit");
       })
      ->default_str("auto");
  text("--out", f.out, "a folder (leave --out out for runs/<suite>-<backend>-<timestamp>)",
       "run folder (default: runs/<suite>-<backend>-<timestamp>)");
  text("--history", f.history, "a file, or none (leave --history out for the default)",
       "the run history to record the run in: a SQLite file, or none (default: "
       "$XDG_DATA_HOME/crucible/history.db or ~/.local/share/crucible/history.db)");
  text("--resume", f.resume, "the run folder to continue",
       "continue the run in this folder, skipping finished cases");
  text("--op", f.op, "an op, e.g. --op aten.add.Tensor",
       "with --case: the op of a single case (aten.add.Tensor)");
  text("--case", f.case_text, "a call in the trace grammar, e.g. '((T([2], f32),), {})'",
       "with --op: a single case in the trace grammar");
  flag("--p", "with --perf: threshold of perf@p (speed-up, positive)", "REAL",
       [&f](const std::string& s) {
         const auto v = decimal_real(s);
         if (!v || *v <= 0)
           refuse("--p", s, "expected a positive speed-up threshold, e.g. --p 1.5");
         f.p = *v;
       })
      ->default_str("1");
  flag("--max-numel",
       "traces: skip cases with more tensor elements than this (0: no cap; default 2^30)", "INT",
       [&f](const std::string& s) {
         const auto v = decimal_integer(s);
         if (!v || *v < 0)
           refuse("--max-numel", s,
                  "expected a whole number of elements, or 0 for no cap, e.g. --max-numel "
                  "16777216");
         f.max_numel = *v;
       });
  flag("--max-flops",
       "traces: skip cases whose cost model gives more FLOPs than this (0: no cap; default "
       "1e12)",
       "REAL", [&f](const std::string& s) {
         const auto v = decimal_real(s);
         if (!v || *v < 0)
           refuse("--max-flops", s,
                  "expected a non-negative number of FLOPs, or 0 for no cap, e.g. --max-flops "
                  "2e9");
         f.max_flops = *v;
       });
  flag("--perf-dtype",
       "with --perf: time the cases with floating tensors (f16/bf16/f32/f64) and floating dtype "
       "arguments rewritten to this dtype, e.g. f32",
       "DTYPE", [&f](const std::string& s) {
         const auto t = parse_dtype(s);
         if (!t || !(*t == DType::Float16 || *t == DType::BFloat16 || *t == DType::Float32 ||
                     *t == DType::Float64))
           usage_error("--perf-dtype '" + s + "': expected one of f16, bf16, f32, f64");
         f.perf_dtype = *t;
       });
  flag("--calls-per-op",
       "traces: at most this many distinct calls per op, an even spread of its sizes within the "
       "caps (0: every call); with --perf, the real-model performance run",
       "INT", [&f](const std::string& s) {
         const auto v = decimal_integer(s);
         if (!v || *v < 0 || *v > std::numeric_limits<int>::max())
           refuse("--calls-per-op", s,
                  fmt::format("expected 0 (every call) or a positive count up to {}, e.g. "
                              "--calls-per-op 4",
                              std::numeric_limits<int>::max()));
         f.calls_per_op = static_cast<int>(*v);
       });
  flag("--inputs",
       "with --op/--case: the case's tensors from a safetensors file (a reproducer of the "
       "op-by-op flow)",
       "FILE", [&f](const std::string& s) {
         if (s.empty()) refuse("--inputs", s, "expected a safetensors file");
         f.inputs = s;
       });
  flag("--shard",
       "run shard i of n: a deterministic 1/n of the suite's cases, balanced by estimated cost "
       "(crucible merge joins the shards' run folders)",
       "I/N", [&f](const std::string& s) { f.shard = parse_shard(s, "--shard"); });
  flag("--model-filter",
       "model suite: comma-separated terms; a model runs when its name holds one (gpt2,resnet)",
       "LIST", [&f](const std::string& s) {
         f.model_filter = csv_terms("--model-filter", s, "gpt2,resnet50");
       });
  flag("--model-k",
       "model suite: an output passes when its error against the f64 run is at most K times "
       "the largest of its honest baselines' (default 3)",
       "K", [&f](const std::string& s) {
         const auto v = decimal_real(s);
         if (!v || *v < 1 || *v > 1e6)
           refuse("--model-k", s, "expected a number from 1 to 1e6, e.g. --model-k 3");
         f.model_k = *v;
       });
  flag("--fallback",
       "model suite: a backend that runs the ops --backend lacks (the verdict lists them); "
       "without it such a model is unsupported",
       "BACKEND", [&f](const std::string& s) {
         if (s.empty()) refuse("--fallback", s, "expected a backend name, e.g. --fallback ref");
         f.fallback = s;
       });
  flag("--quant",
       "model suite: run each model with this quantization recipe (int8wo, int8dq, int4wo-128, "
       "...; docs/quantization.md): its error against the unquantized f64 golden and its time "
       "against the unquantized model",
       "RECIPE", [&f](const std::string& s) {
         quant::parse_recipe(s, "--quant");
         f.quant = s;
       });
  flag("--sanitize",
       "memcheck: after the correctness phase, run each failed, crashed or timed-out case again "
       "alone under a memory checker (compute-sanitizer for CUDA candidates, valgrind for CPU "
       "ones) and add its report to the case's detail",
       "CHECKER", [&f](const std::string& s) {
         check_sanitize_value(s);
         f.sanitize = s;
       });
  on_off("-q,--quiet", f.quiet, "no progress and no summary table");
  on_off("--profile", f.profile,
         "write profile.json to the run folder (each phase and what every worker did, for "
         "ui.perfetto.dev) and say on the console where the time went");
  on_off("--no-sandbox", f.no_sandbox,
         "run untrusted kernels (plugin:, dir:) without the sandbox, for debugging them");
  text("--ops-directory", f.ops_directory, "the kernel folder",
       "with --backend directory: the kernel folder (the same as --backend dir:<folder>)");
  // --backend llm: the generation's flags (crucible generate --help says more).
  for (auto [name, into, help] :
       {std::tuple<const char*, std::string*, const char*>{
            "--provider", &f.llm.provider,
            "with --backend llm: anthropic | openai | command:<program>"},
        {"--model", &f.llm.model, "with --backend llm: the model"},
        {"--base-url", &f.llm.base_url, "with --backend llm: the server's URL"},
        {"--max-attempts", &f.llm.max_attempts, "with --backend llm: attempts per op (default 5)"},
        {"--language", &f.llm.language, "with --backend llm: cpp | cuda"},
        {"--run-id", &f.llm.run_id, "with --backend llm: generated_kernels/<run-id>/"}})
    text(name, *into, "a value", help);
  text("--kernels-dir", f.kernels_dir, "the kernel folder",
       "with --backend pregenerated: the kernel folder (the same as --backend dir:<folder>)");
}

}  // namespace crucible
