// `crucible generate`: per op, attempts of a model's kernel, each compiled and evaluated on the
// feedback cases, the next prompt carrying what went wrong; then the best attempt judged on the
// held-out scoring cases. The journal (generation.jsonl) makes a generation resumable.
#include "crucible/eval/generate.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backends/dir/kernel_compiler.h"
#include "crucible/core/error.h"
#include "crucible/llm/journal.h"
#include "eval/generate_internal.h"

namespace crucible {

namespace fs = std::filesystem;
using gen::Evaluation;
using gen::OpRecord;
using nlohmann::json;

namespace {

// Prompts show at most this many of the feedback calls, and this many failing cases.
constexpr size_t kPromptCases = 24;
constexpr size_t kFeedbackFailures = 6;

std::string folder_of(const std::string& op) { return op.starts_with("aten.") ? op.substr(5) : op; }

void write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  if (!f) input_error(path, "cannot write the file");
}

std::string timestamp_id() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  return buf;
}

// What every op's generation shares.
struct Shared {
  const GenerateOptions& o;
  std::string dir;
  std::string prompts;
  llm::Provider& provider;
  llm::Journal& journal;
  std::map<std::pair<std::string, int>, json> calls;  // journaled calls, by (op, attempt)
  std::mutex print_mu;
};

// The completion of attempt `n` of `op`: the journaled one when the journal holds it (the call
// is not made again), else a new call, journaled at once.
llm::Completion call_model(Shared& sh, const std::string& op, int n, const std::string& prompt,
                           bool& reused) {
  llm::Completion c;
  if (auto it = sh.calls.find({op, n}); it != sh.calls.end()) {
    const json& j = it->second;
    reused = true;
    c.ok = j.value("ok", false);
    c.text = j.value("text", "");
    c.raw = j.value("raw", "");
    c.error = j.value("error", "");
    c.http_status = j.value("http_status", 0);
    c.tries = j.value("tries", 0);
    c.input_tokens = j.value("input_tokens", int64_t{0});
    c.output_tokens = j.value("output_tokens", int64_t{0});
    c.cost_usd = j.value("cost_usd", 0.0);
    c.priced = j.value("priced", false);
    c.seconds = j.value("seconds", 0.0);
    return c;
  }
  reused = false;
  c = sh.provider.complete(prompt);
  sh.journal.append({{"event", "call"},
                     {"op", op},
                     {"attempt", n},
                     {"ok", c.ok},
                     {"text", c.text},
                     {"raw", c.ok ? std::string() : c.raw},
                     {"error", c.error},
                     {"http_status", c.http_status},
                     {"tries", c.tries},
                     {"input_tokens", c.input_tokens},
                     {"output_tokens", c.output_tokens},
                     {"cost_usd", c.cost_usd},
                     {"priced", c.priced},
                     {"seconds", c.seconds}});
  return c;
}

std::vector<llm::PromptCase> prompt_cases(const OpCases& cases) {
  std::vector<llm::PromptCase> out;
  const size_t n = cases.feedback.size();
  const size_t take = std::min(n, kPromptCases);
  for (size_t i = 0; i < take; ++i) {
    const GenCase& g = cases.feedback[i * n / take];
    out.push_back({cases::print_call(g.call), g.label, g.error});
  }
  return out;
}

// The compile of an attempt's source: true when it compiled; `log` gets the command and what the
// compiler said.
bool compile_attempt(const std::string& source, llm::Language lang, std::string& log) {
  dir::CompilerConfig cfg = dir::default_compiler_config();
  cfg.jobs = 1;
  const dir::CompileOutcome out =
      dir::compile_kernels({{fs::absolute(source).string(), lang == llm::Language::Cuda}}, cfg)
          .front();
  log = "command: " + out.command + "\ncompiler: " + out.compiler + "\n";
  if (!out.problem.empty()) log += "problem: " + out.problem + "\n";
  log += out.diagnostics;
  if (out.output_bytes > out.diagnostics.size())
    log += fmt::format("\n[{} more bytes]\n", out.output_bytes - out.diagnostics.size());
  return out.ok;
}

// What the kernel ABI's guards caught in `results` (a cheat's signature), as short phrases.
std::vector<std::string> guard_findings(const std::vector<CaseResult>& results) {
  static const std::pair<const char*, const char*> kGuards[] = {
      {"returned the result of an earlier call", "replays earlier answers"},
      {"gave a different result when called again", "answers differ on a repeated call"},
      {"aliases input", "returns its input"},
      {"points at input", "returns its input"},
      {"which the op must not mutate", "writes into an input"},
      {"wrote past the end", "writes out of bounds"},
      {"wrote before the start", "writes out of bounds"},
      {"changed the process state", "changes the process state"},
      {"changed after the kernel returned", "writes after returning"},
  };
  std::vector<std::string> out;
  for (const CaseResult& r : results)
    for (const auto& [needle, phrase] : kGuards)
      if (r.detail.find(needle) != std::string::npos &&
          std::find(out.begin(), out.end(), phrase) == out.end())
        out.push_back(phrase);
  return out;
}

std::string with_findings(std::string reason, const std::vector<std::string>& findings) {
  if (findings.empty()) return reason;
  reason += "; the guards caught: ";
  for (size_t i = 0; i < findings.size(); ++i) reason += (i ? ", " : "") + findings[i];
  return reason;
}

OpRecord generate_op(Shared& sh, const OpDef& op) {
  const GenerateOptions& o = sh.o;
  const auto start = std::chrono::steady_clock::now();
  OpRecord rec;
  rec.op = op.name;
  rec.folder = folder_of(op.name);
  const std::string opdir = sh.dir + "/" + rec.folder;
  fs::create_directories(opdir + "/attempts");
  const OpCases cases = generation_cases(op, o.suite, o.scoring_cases);
  rec.held_out = cases.held_out;
  const std::string feedback_file = opdir + "/feedback_cases.txt";
  const std::string scoring_file = opdir + "/scoring_cases.txt";
  gen::write_case_file(feedback_file, op.name, cases.feedback);
  gen::write_case_file(scoring_file, op.name, cases.scoring);
  const std::vector<llm::PromptCase> shown = prompt_cases(cases);
  const std::string ext = llm::source_extension(o.language);

  std::vector<llm::PriorAttempt> history;
  int best = 0, best_passed = -1, best_total = 0;
  std::vector<CaseResult> best_results;
  bool done = false;
  for (int n = 1; n <= o.max_attempts && !done; ++n) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::string ad = fmt::format("{}/attempts/{}", opdir, n);
    fs::create_directories(ad);
    const std::string prompt = llm::build_prompt({&op, o.language, shown, history}, sh.prompts);
    write_text(ad + "/prompt.txt", prompt);
    bool reused = false;
    const llm::Completion c = call_model(sh, op.name, n, prompt, reused);
    write_text(ad + "/answer.txt", c.ok ? c.text : c.raw);
    rec.input_tokens += c.input_tokens;
    rec.output_tokens += c.output_tokens;
    rec.cost_usd += c.cost_usd;

    std::string stage, outcome, feedback, source;
    int passed = 0, total = 0;
    if (!c.ok) {
      stage = "provider_error";
      outcome = "the provider failed: " + c.error;
      feedback = "(no answer reached crucible: " + c.error + ")";
    } else {
      std::string why;
      source = llm::extract_code(c.text, o.language, why);
      if (source.empty()) {
        stage = "no_code";
        outcome = "no code: " + why;
        feedback = why + "; answer with the whole source file in one ```" +
                   llm::language_name(o.language) + " block";
      } else {
        const std::string kdir = ad + "/kernel/" + rec.folder;
        fs::create_directories(kdir);
        const std::string src = kdir + "/" + rec.folder + ext;
        write_text(src, source);
        std::string log;
        const bool compiled = compile_attempt(src, o.language, log);
        write_text(ad + "/compile.log", log);
        if (!compiled) {
          stage = "compile_error";
          outcome = "did not compile";
          feedback = "The compiler said:\n" + log;
        } else {
          const Evaluation ev =
              gen::evaluate_folder(ad + "/kernel", feedback_file, o.seed, ad + "/feedback_run", o);
          if (!ev.ran) {
            stage = "evaluation_error";
            outcome = "could not be evaluated: " + ev.problem;
            feedback = ev.problem;
          } else {
            passed = ev.passed;
            total = ev.total;
            stage = passed == total ? "passed" : "failed";
            outcome = fmt::format("passed {} of {} feedback cases", passed, total);
            feedback = passed == total
                           ? "every feedback case passed"
                           : "Failing cases:\n" + gen::failing_cases_text(ev, kFeedbackFailures);
            if (passed > best_passed) {
              best = n;
              best_passed = passed;
              best_total = total;
              best_results = ev.results;
            }
            done = passed == total && total > 0;
          }
        }
      }
    }
    write_text(ad + "/feedback.txt", feedback + "\n");
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    json aj = {{"attempt", n},
               {"stage", stage},
               {"outcome", outcome},
               {"feedback_passed", passed},
               {"feedback_total", total},
               {"input_tokens", c.input_tokens},
               {"output_tokens", c.output_tokens},
               {"cost_usd", c.cost_usd},
               {"priced", c.priced},
               {"call_seconds", c.seconds},
               {"tries", c.tries},
               {"http_status", c.http_status},
               {"provider_error", c.error},
               {"call_reused_from_journal", reused},
               {"seconds", secs}};
    write_text(ad + "/attempt.json", aj.dump(2) + "\n");
    sh.journal.append({{"event", "attempt"}, {"op", op.name}, {"result", aj}});
    rec.attempt_list.push_back(aj);
    rec.attempts = n;
    history.push_back({n, source, outcome, feedback});
  }

  // The best attempt, in the kernel-folder layout, judged on the scoring cases.
  const std::string best_src = opdir + "/" + rec.folder + ext;
  std::error_code ec;
  fs::remove(best_src, ec);
  if (best == 0) {
    rec.verdict = "no_kernel";
    rec.reason =
        rec.attempt_list.empty() ? "no attempt" : rec.attempt_list.back().value("outcome", "");
  } else {
    rec.best_attempt = best;
    rec.feedback_passed = best_passed;
    rec.feedback_total = best_total;
    const std::string kernels = fmt::format("{}/attempts/{}/kernel", opdir, best);
    fs::copy_file(kernels + "/" + rec.folder + "/" + rec.folder + ext, best_src,
                  fs::copy_options::overwrite_existing);
    const Evaluation sc = gen::evaluate_folder(kernels, scoring_file, scoring_seed(o.seed),
                                               opdir + "/scoring_run", o);
    rec.scoring_passed = sc.passed;
    rec.scoring_total = sc.ran ? sc.total : static_cast<int>(cases.scoring.size());
    const bool feedback_ok = best_passed == best_total;
    const bool scoring_ok = sc.ran && sc.total > 0 && sc.passed == sc.total;
    write_text(opdir + "/scoring_failures.txt",
               sc.ran ? gen::failing_cases_text(sc, 50) : sc.problem + "\n");
    if (feedback_ok && scoring_ok) {
      rec.verdict = "correct";
      rec.reason = "every feedback and every held-out scoring case passed";
    } else if (feedback_ok) {
      rec.verdict = "fails_held_out";
      rec.reason = sc.ran ? fmt::format(
                                "passed every feedback case but {} of {} held-out "
                                "scoring cases",
                                sc.passed, sc.total)
                          : "the scoring run failed: " + sc.problem;
    } else {
      rec.verdict = "incorrect";
      rec.reason = fmt::format("the best attempt ({}) passed {} of {} feedback cases", best,
                               best_passed, best_total);
    }
    if (rec.verdict != "correct") {
      std::vector<CaseResult> all = best_results;
      all.insert(all.end(), sc.results.begin(), sc.results.end());
      rec.reason = with_findings(rec.reason, guard_findings(all));
    }
  }
  rec.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  write_text(opdir + "/summary.json", gen::to_json(rec).dump(2) + "\n");
  sh.journal.append({{"event", "op"}, {"record", gen::to_json(rec)}});
  return rec;
}

// The options a resumed generation keeps from its start (they define what it generates).
void apply_start(GenerateOptions& o, const json& start) {
  const json& j = start.value("options", json::object());
  if (j.contains("ops")) o.ops = j["ops"].get<std::vector<std::string>>();
  o.suite = j.value("suite", o.suite);
  o.max_attempts = j.value("max_attempts", o.max_attempts);
  o.seed = j.value("seed", o.seed);
  o.scoring_cases = j.value("scoring_cases", o.scoring_cases);
  if (j.contains("language")) o.language = llm::parse_language(j["language"].get<std::string>());
}

json start_options(const GenerateOptions& o) {
  return {{"ops", o.ops},
          {"suite", o.suite},
          {"max_attempts", o.max_attempts},
          {"seed", o.seed},
          {"scoring_seed", scoring_seed(o.seed)},
          {"scoring_cases", o.scoring_cases},
          {"language", llm::language_name(o.language)},
          {"provider", o.provider.spec},
          {"model", o.provider.model},
          {"base_url", o.provider.base_url},
          {"jobs", o.jobs}};
}

}  // namespace

std::string generation_folder(const GenerateOptions& opts) {
  return opts.out_root + "/" + opts.run_id;
}

int generate(const GenerateOptions& opts) {
  GenerateOptions o = opts;
  if (o.run_id.empty()) {
    if (o.resume) usage_error("--resume needs --run-id <the run to continue>");
    o.run_id = timestamp_id();
  }
  const std::string dir = generation_folder(o);
  const std::string journal_path = dir + "/generation.jsonl";
  std::vector<json> events;
  std::error_code ec;
  if (o.resume) {
    if (!fs::is_regular_file(journal_path, ec))
      usage_error(fmt::format("--resume: {} holds no generation.jsonl; is --run-id {} right?", dir,
                              o.run_id));
    events = llm::read_journal(journal_path);
    for (const json& e : events)
      if (e.value("event", "") == "start") {
        apply_start(o, e);
        break;
      }
  } else if (fs::exists(journal_path, ec)) {
    usage_error(fmt::format(
        "--run-id {}: {} already holds a generation; add --resume to continue it, or choose "
        "another --run-id",
        o.run_id, dir));
  }
  const OpRegistry& cat = OpRegistry::catalog();
  std::vector<const OpDef*> ops = o.ops.empty() ? cat.all() : cat.match(o.ops);
  const std::string prompts = llm::prompts_dir(o.prompts);
  std::unique_ptr<llm::Provider> provider = llm::make_provider(o.provider);
  // The templates are checked before anything is asked of the model.
  if (!ops.empty()) llm::build_prompt({ops.front(), o.language, {}, {}}, prompts);
  fs::create_directories(dir, ec);
  if (ec) input_error(dir, "cannot create the generation folder: " + ec.message());

  llm::Journal journal(journal_path);
  json start = {{"event", "start"}, {"options", start_options(o)},  {"resumed", o.resume},
                {"argv", o.argv},   {"provider", provider->name()}, {"model", provider->model()}};
  journal.append(start);
  Shared sh{o, dir, prompts, *provider, journal, {}, {}};
  std::map<std::string, OpRecord> finished;
  for (const json& e : events) {
    const std::string kind = e.value("event", "");
    if (kind == "call") sh.calls[{e.value("op", ""), e.value("attempt", 0)}] = e;
    if (kind == "op") {
      OpRecord r = gen::op_record_from_json(e.at("record"));
      finished[r.op] = r;
    }
  }

  std::vector<OpRecord> records(ops.size());
  std::atomic<size_t> next{0}, completed{0};
  auto worker = [&] {
    for (size_t i = next++; i < ops.size(); i = next++) {
      const OpDef& op = *ops[i];
      bool again = false;
      if (auto it = finished.find(op.name); it != finished.end()) {
        records[i] = it->second;
        again = true;
      } else {
        try {
          records[i] = generate_op(sh, op);
        } catch (const std::exception& e) {
          // One op's failure (a full disk, an unwritable folder) is that op's; the others go on.
          records[i].op = op.name;
          records[i].folder = folder_of(op.name);
          records[i].verdict = "no_kernel";
          records[i].reason = std::string("crucible could not generate it: ") + e.what();
        }
      }
      const OpRecord& r = records[i];
      const size_t k = ++completed;
      if (o.progress) {
        std::lock_guard<std::mutex> lock(sh.print_mu);
        fmt::print(stderr,
                   "[{}/{}] {:<32} {:<15} {} attempt(s), feedback {}/{}, held-out {}/{}{}\n", k,
                   ops.size(), r.op, r.verdict, r.attempts, r.feedback_passed, r.feedback_total,
                   r.scoring_passed, r.scoring_total, again ? " (from the journal)" : "");
      }
    }
  };
  const int jobs = std::max(1, std::min<int>(o.jobs, static_cast<int>(ops.size())));
  std::vector<std::thread> threads;
  for (int t = 1; t < jobs; ++t) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();

  const std::string summary =
      gen::write_run_summaries(dir, o, provider->name(), provider->model(), records);
  if (o.progress) fmt::print("{}", summary);
  for (const OpRecord& r : records)
    if (r.verdict != "correct") return 1;
  return 0;
}

}  // namespace crucible
