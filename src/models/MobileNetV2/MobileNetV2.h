// MobileNetV2 (torchvision's layout: features.0 = conv-BN-ReLU6 stem, features.i.conv.* the
// inverted residual blocks: 1x1 expansion, 3x3 depthwise, 1x1 linear projection, each with batch
// norm; the last features.N a 1x1 conv-BN-ReLU6; classifier.1 the linear head after dropout).
// `inverted_residual_setting` lists [t, c, n, s] rows as torchvision's does.
#pragma once

#include "crucible/models/zoo.h"
#include "crucible/nn/layers.h"

namespace crucible::models {

class MobileNetV2 : public ZooModel {
 public:
  explicit MobileNetV2(const Json& args);
  std::string class_name() const override { return "MobileNetV2"; }
  nn::Var forward(nn::Tracer& t, const std::vector<nn::Var>& inputs) const override;

 private:
  std::vector<const nn::Module*> features_;
  nn::Dropout* dropout_;
  nn::Linear* head_;
};

}  // namespace crucible::models
