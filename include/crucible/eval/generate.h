// `crucible generate`: kernels written by a model, attempt after attempt, each compiled and
// evaluated in sandboxed workers on the op's *feedback cases* (the suite's cases of the op); the
// next prompt carries the compile errors or the failing cases and the history of the earlier
// attempts. The best attempt is then judged on *scoring cases* the model never saw (other
// shapes, another seed): the op's verdict. Everything lands in generated_kernels/<run-id>/
// (docs/llm.md), a kernel folder that `--backend dir:` evaluates as it stands.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "crucible/cases/literal.h"
#include "crucible/llm/prompt.h"
#include "crucible/llm/provider.h"
#include "crucible/ops/op.h"

namespace crucible {

struct GenerateOptions {
  std::string suite = "smoke";   // smoke | opinfo: the feedback cases of each op
  std::vector<std::string> ops;  // --ops terms (empty: every op of the catalog)
  int max_attempts = 5;
  std::string run_id;  // empty: a timestamp
  std::string out_root = "generated_kernels";
  llm::ProviderConfig provider;
  llm::Language language = llm::Language::Cpp;
  int jobs = 1;  // ops generated at once
  bool resume = false;
  uint64_t seed = 0;       // feedback cases' seed; the scoring cases use another
  int scoring_cases = 32;  // at most this many scoring cases per op
  double timeout_s = 60;   // per case
  int workers = 0;         // per evaluation; 0: cores / jobs
  bool sandbox = true;
  std::string prompts;  // the template folder; empty: the default (llm::prompts_dir)
  bool progress = true;
  std::vector<std::string> argv;
};

// One call of an op's feedback or scoring cases.
struct GenCase {
  cases::CallSpec call;
  std::string label;
  std::string error;  // ATen's error for the call (from the meta layer); "" when it computes
};

struct OpCases {
  std::vector<GenCase> feedback;
  std::vector<GenCase> scoring;
  // How the scoring cases differ from the feedback cases: "shapes" (other shapes, another seed;
  // no call of one set is a call of the other) or "values" (the op's calls keep their shapes:
  // only the seed differs).
  std::string held_out = "shapes";
};

// The feedback and scoring cases of `op` (generate_cases.cpp).
OpCases generation_cases(const OpDef& op, const std::string& suite, int scoring_limit);

// The seed of the scoring cases for feedback seed `seed` (never equal to it).
uint64_t scoring_seed(uint64_t seed);

// Generates (or resumes) the run and returns the exit status: 0 every op ended correct on its
// scoring cases, 1 some did not. Usage and input errors are thrown.
int generate(const GenerateOptions& opts);

// The run folder of `opts`: <out_root>/<run_id>.
std::string generation_folder(const GenerateOptions& opts);

}  // namespace crucible
