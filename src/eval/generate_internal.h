// The parts of `crucible generate` (src/eval/generate*.cpp): evaluating an attempt with the
// crucible binary, and the artifacts of a run.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "crucible/eval/generate.h"
#include "crucible/results/result.h"

namespace crucible::gen {

// The cases of a call set as a trace file (`crucible run --suite traces:<file>` reads it).
void write_case_file(const std::string& path, const std::string& op,
                     const std::vector<GenCase>& cases);

// The outcome of evaluating one kernel folder on a case file.
struct Evaluation {
  bool ran = false;     // the run finished and its results were read
  std::string problem;  // why not (crucible's own words)
  std::vector<CaseResult> results;
  int passed = 0;
  int total = 0;
};

// Runs `crucible run --suite traces:<cases> --backend dir:<kernels> --seed <seed> --out <out>`
// as a child process of this very binary (its output in <out>.log) and reads its results.
Evaluation evaluate_folder(const std::string& kernels, const std::string& cases_file, uint64_t seed,
                           const std::string& out, const GenerateOptions& o);

// The failing cases of an evaluation as the next prompt shows them (at most `limit`).
std::string failing_cases_text(const Evaluation& e, size_t limit);

// The per-op record the summaries are made from.
struct OpRecord {
  std::string op;       // aten.relu.default
  std::string folder;   // relu.default
  std::string verdict;  // correct | fails_held_out | incorrect | no_kernel
  std::string reason;   // one line
  int attempts = 0;
  int best_attempt = 0;  // 0: none compiled
  int feedback_passed = 0, feedback_total = 0;
  int scoring_passed = 0, scoring_total = 0;
  std::string held_out;  // shapes | values
  int64_t input_tokens = 0, output_tokens = 0;
  double cost_usd = 0;
  double seconds = 0;
  nlohmann::json attempt_list = nlohmann::json::array();
};

nlohmann::json to_json(const OpRecord& r);
OpRecord op_record_from_json(const nlohmann::json& j);

// OVERALL_SUMMARY.txt and README.md of the run; returns the summary's text.
std::string write_run_summaries(const std::string& dir, const GenerateOptions& o,
                                const std::string& provider, const std::string& model,
                                const std::vector<OpRecord>& ops);

}  // namespace crucible::gen
