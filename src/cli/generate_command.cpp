// `crucible generate`: its flags, checked, -> GenerateOptions -> crucible::generate.
#include <charconv>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "cli/commands.h"
#include "crucible/core/error.h"
#include "crucible/eval/generate.h"

namespace crucible {

namespace {

int whole(const std::string& flag, const std::string& text, int lo, int hi, const char* eg) {
  int v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || v < lo || v > hi)
    usage_error(fmt::format("{} '{}': expected a whole number from {} to {}, e.g. {} {}", flag,
                            text, lo, hi, flag, eg));
  return v;
}

double seconds(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v) || v <= 0 || v > 1e6)
    usage_error(fmt::format("{} '{}': expected a positive number of seconds, e.g. {} 120", flag,
                            text, flag));
  return v;
}

}  // namespace

void add_generate_flags(CLI::App& app, GenerateFlags& f) {
  app.add_option("--suite", f.suite, "smoke | opinfo: the feedback cases of each op")
      ->default_str("smoke");
  app.add_option("--ops", f.ops, "comma-separated overloads or base names to generate")
      ->delimiter(',');
  app.add_option("--max-attempts", f.max_attempts, "attempts per op (default 5)");
  app.add_option("--run-id", f.run_id, "the run's name: generated_kernels/<run-id>/");
  app.add_option("--out-dir", f.out_root, "where runs go (default generated_kernels)");
  app.add_option("--provider", f.provider,
                 "anthropic | openai (any OpenAI-compatible server) | command:<program>")
      ->default_str("anthropic");
  app.add_option("--model", f.model, "the model (default: the provider's)");
  app.add_option("--base-url", f.base_url, "the server's URL (a local vLLM, llama.cpp, Ollama)");
  app.add_option("--language", f.language, "cpp | cuda (python, triton: not yet)")
      ->default_str("cpp");
  app.add_option("--jobs", f.jobs, "ops generated at once (default 1)");
  app.add_flag("--resume", f.resume, "continue the generation --run-id names");
  app.add_option("--seed", f.seed, "seed of the feedback cases (default 0)");
  app.add_option("--scoring-cases", f.scoring_cases, "held-out scoring cases per op (default 32)");
  app.add_option("--timeout", f.timeout, "seconds per case (default 60)");
  app.add_option("--call-timeout", f.call_timeout, "seconds per provider call try (default 300)");
  app.add_option("--max-tries", f.max_tries, "tries per provider call (default 4)");
  app.add_option("--backoff", f.backoff, "seconds before the first retry, doubling (default 1)");
  app.add_option("--concurrency", f.concurrency, "provider calls in flight at once (default 4)");
  app.add_option("--max-tokens", f.max_tokens, "the answer's token limit (default 8192)");
  app.add_option("--prices", f.prices, "a JSON price table overriding the built-in one");
  app.add_option("--prompts", f.prompts, "the prompt template folder (default data/prompts)");
  app.add_option("--workers", f.workers, "worker processes per evaluation (default cores/jobs)");
  app.add_flag("--no-sandbox", f.no_sandbox, "evaluate the kernels without the sandbox");
  app.add_flag("-q,--quiet", f.quiet, "no progress and no summary");
}

GenerateOptions generate_options(const GenerateFlags& f, const std::vector<std::string>& argv) {
  GenerateOptions o;
  o.argv = argv;
  o.suite = f.suite;
  if (o.suite != "smoke" && o.suite != "opinfo")
    usage_error("--suite " + o.suite + ": generate takes smoke or opinfo (the feedback cases)");
  for (const std::string& t : f.ops)
    if (t.empty()) usage_error("--ops: an empty term; separate the names with single commas");
  o.ops = f.ops;
  o.max_attempts = whole("--max-attempts", f.max_attempts, 1, 1000, "3");
  o.run_id = f.run_id;
  if (!o.run_id.empty() &&
      (o.run_id.find('/') != std::string::npos || o.run_id == "." || o.run_id == ".."))
    usage_error("--run-id " + o.run_id + ": a name, not a path (use --out-dir for the folder)");
  if (f.out_root.empty()) usage_error("--out-dir is empty; give a folder");
  o.out_root = f.out_root;
  o.provider.spec = f.provider;
  o.provider.model = f.model;
  o.provider.base_url = f.base_url;
  o.language = llm::parse_language(f.language);
  o.jobs = whole("--jobs", f.jobs, 1, 256, "4");
  o.resume = f.resume;
  {
    const std::string& s = f.seed;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), o.seed);
    if (s.empty() || ec != std::errc{} || end != s.data() + s.size())
      usage_error("--seed '" + s + "': expected a non-negative integer below 2^64");
  }
  o.scoring_cases = whole("--scoring-cases", f.scoring_cases, 1, 100000, "32");
  o.timeout_s = seconds("--timeout", f.timeout);
  o.provider.timeout_s = seconds("--call-timeout", f.call_timeout);
  o.provider.max_tries = whole("--max-tries", f.max_tries, 1, 100, "4");
  {
    char* end = nullptr;
    const double b = std::strtod(f.backoff.c_str(), &end);
    if (f.backoff.empty() || end != f.backoff.c_str() + f.backoff.size() || !std::isfinite(b) ||
        b < 0 || b > 3600)
      usage_error("--backoff '" + f.backoff +
                  "': expected seconds from 0 to 3600, e.g. --backoff 1");
    o.provider.backoff_s = b;
  }
  o.provider.concurrency = whole("--concurrency", f.concurrency, 1, 1024, "4");
  o.provider.max_tokens = whole("--max-tokens", f.max_tokens, 1, 10000000, "8192");
  if (!f.prices.empty()) o.provider.prices.load(f.prices);
  o.prompts = f.prompts;
  o.workers = f.workers.empty() ? 0 : whole("--workers", f.workers, 1, max_parallelism(), "2");
  o.sandbox = !f.no_sandbox;
  o.progress = !f.quiet;
  if (o.resume && o.run_id.empty())
    usage_error("--resume needs --run-id <the generation to continue>");
  return o;
}

int command_generate(const GenerateFlags& f, const std::vector<std::string>& argv) {
  return generate(generate_options(f, argv));
}

}  // namespace crucible
