// ResNet in torchvision's layout (conv1, bn1, layerN.M.{conv1, bn1, conv2, bn2[, conv3, bn3],
// downsample.0, downsample.1}, fc), batch norm in train mode when trained. `layers` lists the
// blocks per stage (ResNet-18: [2, 2, 2, 2]; ResNet-50: [3, 4, 6, 3]); `width` is the stem's
// channels and the first stage's planes (torchvision: 64), doubled at each stage. `block`:
// "basic" (two 3x3 convolutions, ResNet-18/34) or "bottleneck" (1x1, 3x3 with the stride, 1x1
// expanding the planes 4 times: ResNet-50/101/152, torchvision's "v1.5"); a bottleneck's inner
// channels are planes * width_per_group / 64 (torchvision's width_per_group, 64 by default).
#pragma once

#include "crucible/models/zoo.h"
#include "crucible/nn/layers.h"

namespace crucible::models {

// One residual block (basic or bottleneck).
class ResidualBlock : public nn::Module {
 public:
  virtual nn::Var forward(nn::Tracer& t, const nn::Var& x) const = 0;
};

class ResNet : public ZooModel {
 public:
  explicit ResNet(const Json& args);
  std::string class_name() const override { return "ResNet"; }
  nn::Var forward(nn::Tracer& t, const std::vector<nn::Var>& inputs) const override;

 private:
  nn::Conv2d* conv1_;
  nn::BatchNorm2d* bn1_;
  nn::Linear* fc_;
  std::vector<const ResidualBlock*> blocks_;
};

}  // namespace crucible::models
