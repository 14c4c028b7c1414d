// ResNet with basic blocks (torchvision's layout: conv1, bn1, layerN.M.{conv1, bn1, conv2, bn2,
// downsample.0, downsample.1}, fc), batch norm in train mode when trained. `layers` lists the
// blocks per stage (ResNet-18: [2, 2, 2, 2]); `width` is the first stage's channels.
#pragma once

#include "crucible/models/zoo.h"
#include "crucible/nn/layers.h"

namespace crucible::models {

class ResNet : public ZooModel {
 public:
  explicit ResNet(const Json& args);
  std::string class_name() const override { return "ResNet"; }
  nn::Var forward(nn::Tracer& t, const std::vector<nn::Var>& inputs) const override;

 private:
  nn::Conv2d* conv1_;
  nn::BatchNorm2d* bn1_;
  nn::Linear* fc_;
  std::vector<const nn::Module*> blocks_;
};

}  // namespace crucible::models
