// The model zoo (crucible/models) in the model suite: each zoo model's training graph, captured
// from its config's first model test, judged as any model graph is (loss and every parameter
// gradient under a random upstream gradient), then trained a few SGD steps on golden (f64),
// baseline and candidate alike, each step's loss judged by the same arbiter.
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
inline constexpr double kZooSgdLr = 0.05;

// The zoo's cases ("model:zoo-<Name>"), those the filter selects.
std::vector<SuiteCase> zoo_suite_cases(const SuiteOptions& o);

// `steps` SGD steps with learning rate `lr` on the training graph `g`: golden, baseline and
// candidate each follow their own trajectory from the same initial weights; the loss before each
// step and after the last is a check ("sgd loss 0", ...). Failed when one is wrong.
void judge_sgd(const graph::Graph& g, Backend& candidate, const ModelJudgeOptions& options,
               int steps, double lr, CaseResult& r);

}  // namespace crucible
