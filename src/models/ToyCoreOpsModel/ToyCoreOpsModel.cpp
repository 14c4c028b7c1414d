// ToyCoreOpsModel (see ToyCoreOpsModel.h).
#include "models/ToyCoreOpsModel/ToyCoreOpsModel.h"

#include "models/zoo_util.h"

namespace crucible::models {

ToyCoreOpsModel::ToyCoreOpsModel(const Json& args) {
  const int64_t in = detail::int_arg(args, "in_channels", 3);
  const int64_t hidden = detail::int_arg(args, "hidden_channels", 32);
  const int64_t out = detail::int_arg(args, "out_channels", 8);
  const int64_t groups = detail::int_arg(args, "num_groups", 8);
  conv1_ = &register_module("conv1", std::make_unique<nn::Conv2d>(in, hidden, 3, 1, 1));
  gn1_ = &register_module("group_norm1", std::make_unique<nn::GroupNorm>(groups, hidden));
  conv2_ = &register_module("conv2", std::make_unique<nn::Conv2d>(hidden, hidden, 3, 1, 1));
  gn2_ = &register_module("group_norm2", std::make_unique<nn::GroupNorm>(groups, hidden));
  conv_out_ = &register_module("conv_out", std::make_unique<nn::Conv2d>(hidden, out, 1));
}

nn::Var ToyCoreOpsModel::forward(nn::Tracer& t, const std::vector<nn::Var>& inputs) const {
  nn::Var x = nn::F::relu(t, gn1_->forward(t, conv1_->forward(t, inputs.at(0))));
  x = nn::F::max_pool2d(t, x, 2, 2);
  x = nn::F::relu(t, gn2_->forward(t, conv2_->forward(t, x)));
  x = nn::F::avg_pool2d(t, x, 2, 2);
  x = nn::F::adaptive_avg_pool2d(t, x, 4, 4);
  return conv_out_->forward(t, x);
}

}  // namespace crucible::models
