// BackendBench's SmokeTestModel: two explicit matrix products (x @ W1 + b1, relu, @ W2 + b2).
#pragma once

#include <memory>

#include "crucible/models/zoo.h"

namespace crucible::models {

class SmokeTestModel : public ZooModel {
 public:
  explicit SmokeTestModel(const Json& args);
  std::string class_name() const override { return "SmokeTestModel"; }
  nn::Var forward(nn::Tracer& t, const std::vector<nn::Var>& inputs) const override;
};

}  // namespace crucible::models
