// The model suite: whole model graphs (crucible/graph) as cases, each judged in a worker by the
// f64 arbiter (model_judge.h). `model` runs the shipped models' tiny configurations
// (data/models/*-tiny-*.graph); `model:<file or folder>` runs the given .graph files.
#pragma once

#include <string>
#include <vector>

#include "crucible/suites/suite.h"

namespace crucible {

std::vector<SuiteCase> model_suite(const SuiteOptions& o, const std::string& path);

}  // namespace crucible
