// The model zoo (crucible/models) in the model suite: each zoo model's training graph, captured
// from its config's first model test, judged as any model graph is (loss and every parameter
// gradient under a random upstream gradient), then trained a few SGD steps: each step applies
// the f64 run's gradients, and at the trained weights golden, baseline and candidate compute the
// loss and every gradient again, judged by the same arbiter (the candidate is judged along a
// training trajectory; its own rounding does not steer it, so errors do not compound).
#pragma once

#include <string>
#include <vector>

#include "crucible/backends/backend.h"
#include "crucible/graph/graph.h"
#include "crucible/results/result.h"
#include "crucible/suites/suite.h"
#include "suites/model_judge.h"

namespace crucible {

inline constexpr int kZooSgdSteps = 3;
inline constexpr double kZooSgdLr = 0.01;

// The zoo's cases ("model:zoo-<Name>"), those the filter selects.
std::vector<SuiteCase> zoo_suite_cases(const SuiteOptions& o);

// `steps` SGD steps with learning rate `lr` on the training graph `g` from its initial weights;
// after each, the loss is a check ("sgd step 1 loss", ...), and so is any gradient that is
// wrong. Failed when one is wrong.
void judge_sgd(const graph::Graph& g, Backend& candidate, const ModelJudgeOptions& options,
               int steps, double lr, CaseResult& r);

}  // namespace crucible
