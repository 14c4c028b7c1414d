// The judged step of `crucible models --run` (a zoo model's training graph under a kernel
// policy) in an isolated worker process, as every evaluation runs: the worker makes the
// policy's backends after the fork and runs judge_model (suites/model_judge.h) there; a kernel
// that crashes, a hang past the timeout or an allocation past the memory limit is the run's
// verdict (crashed, timed_out, memory_limit), never the end of the process that asked. Kernels
// from outside (plugin:, dir:) run in their sandboxed candidate processes, as in `crucible run`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "crucible/graph/graph.h"
#include "crucible/models/kernel_policy.h"
#include "crucible/results/result.h"
#include "suites/model_judge.h"

namespace crucible {

struct PolicyJudgeOptions {
  double timeout_s = 600;
  size_t memory_limit = size_t{4} << 30;  // bytes, 0: none
  bool sandbox = true;                    // untrusted backends' candidates run sandboxed
};

struct PolicyJudgeResult {
  CaseResult result;  // the verdict; its op and case_id as given
  // What the worker reported it ran: op -> (backend, calls); empty when it died.
  std::map<std::string, std::pair<std::string, int64_t>> ran;
};

// Judges `g` on a PolicyBackend of `choices` over `backends` in a worker. `base` names the case
// (op, case_id); its status and detail are the verdict's.
PolicyJudgeResult judge_policy_isolated(const graph::Graph& g,
                                        const std::vector<models::OpChoice>& choices,
                                        const std::vector<std::string>& backends,
                                        const ModelJudgeOptions& options,
                                        const PolicyJudgeOptions& isolation, CaseResult base);

}  // namespace crucible
