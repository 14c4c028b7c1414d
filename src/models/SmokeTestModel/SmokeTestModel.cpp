// SmokeTestModel (see SmokeTestModel.h).
#include "models/SmokeTestModel/SmokeTestModel.h"

#include <cmath>
#include "crucible/nn/functional.h"

#include "models/zoo_util.h"

namespace crucible::models {

SmokeTestModel::SmokeTestModel(const Json& args) {
  const int64_t in = detail::int_arg(args, "input_dim", 128);
  const int64_t hidden = detail::int_arg(args, "hidden_dim", 256);
  const int64_t out = detail::int_arg(args, "output_dim", 64);
  // nn.Linear's initialisation (BackendBench's randn gives activations of hundreds).
  const double b1 = 1.0 / std::sqrt(static_cast<double>(in));
  const double b2 = 1.0 / std::sqrt(static_cast<double>(hidden));
  register_parameter("weight1", {in, hidden}, nn::uniform_init(-b1, b1));
  register_parameter("weight2", {hidden, out}, nn::uniform_init(-b2, b2));
  register_parameter("bias1", {hidden}, nn::uniform_init(-b1, b1));
  register_parameter("bias2", {out}, nn::uniform_init(-b2, b2));
}

nn::Var SmokeTestModel::forward(nn::Tracer& t, const std::vector<nn::Var>& inputs) const {
  nn::Var x = nn::F::mm(t, inputs.at(0), param(t, "weight1"));
  x = nn::F::relu(t, nn::F::add(t, x, param(t, "bias1")));
  x = nn::F::mm(t, x, param(t, "weight2"));
  return nn::F::add(t, x, param(t, "bias2"));
}

}  // namespace crucible::models
