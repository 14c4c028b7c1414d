// BackendBench's ToyCoreOpsModel: convolution, group norm, max pooling with indices, average
// pooling and adaptive average pooling (conv -> GN -> relu -> maxpool -> conv -> GN -> relu ->
// avgpool -> adaptive avgpool 4x4 -> 1x1 conv).
#pragma once

#include "crucible/models/zoo.h"
#include "crucible/nn/layers.h"

namespace crucible::models {

class ToyCoreOpsModel : public ZooModel {
 public:
  explicit ToyCoreOpsModel(const Json& args);
  std::string class_name() const override { return "ToyCoreOpsModel"; }
  nn::Var forward(nn::Tracer& t, const std::vector<nn::Var>& inputs) const override;

 private:
  nn::Conv2d *conv1_, *conv2_, *conv_out_;
  nn::GroupNorm *gn1_, *gn2_;
};

}  // namespace crucible::models
