// The records and summaries of a generation: <op>/summary.json, OVERALL_SUMMARY.txt, README.md.
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "crucible/core/error.h"
#include "eval/generate_internal.h"

namespace crucible::gen {

using nlohmann::json;

json to_json(const OpRecord& r) {
  return {{"op", r.op},
          {"folder", r.folder},
          {"verdict", r.verdict},
          {"reason", r.reason},
          {"attempts", r.attempts},
          {"best_attempt", r.best_attempt},
          {"feedback_passed", r.feedback_passed},
          {"feedback_total", r.feedback_total},
          {"scoring_passed", r.scoring_passed},
          {"scoring_total", r.scoring_total},
          {"held_out", r.held_out},
          {"input_tokens", r.input_tokens},
          {"output_tokens", r.output_tokens},
          {"cost_usd", r.cost_usd},
          {"seconds", r.seconds},
          {"attempt_list", r.attempt_list}};
}

OpRecord op_record_from_json(const json& j) {
  OpRecord r;
  r.op = j.value("op", "");
  r.folder = j.value("folder", "");
  r.verdict = j.value("verdict", "");
  r.reason = j.value("reason", "");
  r.attempts = j.value("attempts", 0);
  r.best_attempt = j.value("best_attempt", 0);
  r.feedback_passed = j.value("feedback_passed", 0);
  r.feedback_total = j.value("feedback_total", 0);
  r.scoring_passed = j.value("scoring_passed", 0);
  r.scoring_total = j.value("scoring_total", 0);
  r.held_out = j.value("held_out", "");
  r.input_tokens = j.value("input_tokens", int64_t{0});
  r.output_tokens = j.value("output_tokens", int64_t{0});
  r.cost_usd = j.value("cost_usd", 0.0);
  r.seconds = j.value("seconds", 0.0);
  r.attempt_list = j.value("attempt_list", json::array());
  return r;
}

namespace {

void write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  if (!f) input_error(path, "cannot write the file");
}

}  // namespace

std::string write_run_summaries(const std::string& dir, const GenerateOptions& o,
                                const std::string& provider, const std::string& model,
                                const std::vector<OpRecord>& ops) {
  std::map<std::string, int> by_verdict;
  int64_t in_tok = 0, out_tok = 0;
  double cost = 0;
  int attempts = 0;
  for (const OpRecord& r : ops) {
    ++by_verdict[r.verdict];
    in_tok += r.input_tokens;
    out_tok += r.output_tokens;
    cost += r.cost_usd;
    attempts += r.attempts;
  }
  std::string s;
  s += fmt::format("generation {} ({} via {}, {} kernels)\n", o.run_id, model, provider,
                   llm::language_name(o.language));
  s += fmt::format(
      "  ops       {} total: {} correct, {} fail held-out, {} incorrect, {} no kernel\n",
      ops.size(), by_verdict["correct"], by_verdict["fails_held_out"], by_verdict["incorrect"],
      by_verdict["no_kernel"]);
  s += fmt::format("  attempts  {} (at most {} per op)   tokens {} in, {} out   cost ${:.4f}\n",
                   attempts, o.max_attempts, in_tok, out_tok, cost);
  s += fmt::format(
      "  cases     feedback: --suite {} seed {}; held-out scoring: other shapes, seed {}\n",
      o.suite, o.seed, scoring_seed(o.seed));
  s += fmt::format("  {:<32} {:<15} {:>8} {:>9} {:>9} {:>10}  {}\n", "op", "verdict", "attempts",
                   "feedback", "held-out", "cost", "reason");
  for (const OpRecord& r : ops)
    s += fmt::format("  {:<32} {:<15} {:>8} {:>9} {:>9} {:>10}  {}\n", r.op, r.verdict, r.attempts,
                     fmt::format("{}/{}", r.feedback_passed, r.feedback_total),
                     fmt::format("{}/{}", r.scoring_passed, r.scoring_total),
                     fmt::format("${:.4f}", r.cost_usd), r.reason);
  s += fmt::format("  kernels: {}/ (evaluate: crucible run --backend dir:{})\n", dir, dir);
  write_text(dir + "/OVERALL_SUMMARY.txt", s);

  std::string md = fmt::format("# Generated kernels: {}\n\n", o.run_id);
  md += fmt::format(
      "Written by `{}` through `{}` with `crucible generate`, {} kernels, at most {} attempts per "
      "op. Each attempt was compiled and evaluated on the op's feedback cases (`--suite {}`, seed "
      "{}); the next prompt carried what went wrong. The best attempt was then judged on held-out "
      "scoring cases (other shapes, seed {}) that the model never saw: that is the verdict.\n\n",
      model, provider, llm::language_name(o.language), o.max_attempts, o.suite, o.seed,
      scoring_seed(o.seed));
  md += "| op | verdict | attempts | feedback passed | held-out passed | cost (USD) |\n";
  md += "|---|---|---|---|---|---|\n";
  for (const OpRecord& r : ops)
    md += fmt::format("| `{}` | {} | {} | {}/{} | {}/{} | {:.4f} |\n", r.op, r.verdict, r.attempts,
                      r.feedback_passed, r.feedback_total, r.scoring_passed, r.scoring_total,
                      r.cost_usd);
  md += R"(
## Layout

- `<op>/<op>.cpp` (or `.cu`): the best attempt. This folder is a kernel folder:
  `crucible run --backend dir:<this folder>` (or `--backend pregenerated --kernels-dir <this
  folder>`) evaluates it.
- `<op>/summary.json`: the op's verdict, its attempts, tokens, cost and time.
- `<op>/feedback_cases.txt`, `<op>/scoring_cases.txt`: the two case sets, as trace files.
- `<op>/scoring_run/`: the run folder of the held-out score; `<op>/scoring_failures.txt`.
- `<op>/attempts/<n>/`: `prompt.txt` (the exact prompt), `answer.txt` (the model's raw answer),
  `kernel/<op>/<op>.cpp` (the code it held), `compile.log`, `feedback_run/` (the run folder of
  the feedback cases), `feedback.txt` (what the next prompt was told), `attempt.json` (verdict,
  tokens, cost, time).
- `generation.jsonl`: the journal; `crucible generate --run-id <id> --resume` continues an
  interrupted generation without repeating a call it holds.
- `OVERALL_SUMMARY.txt`: the table above, as the console printed it.
)";
  write_text(dir + "/README.md", md);
  return s;
}

}  // namespace crucible::gen
