// ResNet (see ResNet.h).
#include "models/ResNet/ResNet.h"

#include "models/zoo_util.h"

namespace crucible::models {

namespace {

class BasicBlock : public nn::Module {
 public:
  BasicBlock(int64_t in, int64_t out, int64_t stride) {
    conv1_ =
        &register_module("conv1", std::make_unique<nn::Conv2d>(in, out, 3, stride, 1, 1, false));
    bn1_ = &register_module("bn1", std::make_unique<nn::BatchNorm2d>(out));
    conv2_ = &register_module("conv2", std::make_unique<nn::Conv2d>(out, out, 3, 1, 1, 1, false));
    bn2_ = &register_module("bn2", std::make_unique<nn::BatchNorm2d>(out));
    if (stride != 1 || in != out) {
      auto& ds = register_module("downsample", std::make_unique<nn::ModuleList>());
      down_conv_ = &ds.push_back(std::make_unique<nn::Conv2d>(in, out, 1, stride, 0, 1, false));
      down_bn_ = &ds.push_back(std::make_unique<nn::BatchNorm2d>(out));
    }
  }
  nn::Var forward(nn::Tracer& t, const nn::Var& x) const {
    nn::Var h = nn::F::relu(t, bn1_->forward(t, conv1_->forward(t, x)));
    h = bn2_->forward(t, conv2_->forward(t, h));
    const nn::Var id = down_conv_ ? down_bn_->forward(t, down_conv_->forward(t, x)) : x;
    return nn::F::relu(t, nn::F::add(t, h, id));
  }

 private:
  nn::Conv2d *conv1_, *conv2_, *down_conv_ = nullptr;
  nn::BatchNorm2d *bn1_, *bn2_, *down_bn_ = nullptr;
};

}  // namespace

ResNet::ResNet(const Json& args) {
  std::vector<int64_t> layers = {2, 2, 2, 2};
  if (args.contains("layers")) {
    if (!args["layers"].is_array()) usage_error("ResNet: init_args.layers is not a list");
    layers.clear();
    for (const Json& n : args["layers"]) layers.push_back(n.get<int64_t>());
  }
  const int64_t width = detail::int_arg(args, "width", 64);
  const int64_t classes = detail::int_arg(args, "num_classes", 1000);
  const int64_t in_ch = detail::int_arg(args, "in_channels", 3);
  conv1_ = &register_module("conv1", std::make_unique<nn::Conv2d>(in_ch, width, 7, 2, 3, 1, false));
  bn1_ = &register_module("bn1", std::make_unique<nn::BatchNorm2d>(width));
  int64_t ch = width;
  for (size_t s = 0; s < layers.size(); ++s) {
    auto& stage =
        register_module("layer" + std::to_string(s + 1), std::make_unique<nn::ModuleList>());
    const int64_t out = width << s;
    for (int64_t b = 0; b < layers[s]; ++b) {
      const int64_t stride = (s > 0 && b == 0) ? 2 : 1;
      blocks_.push_back(&stage.push_back(std::make_unique<BasicBlock>(ch, out, stride)));
      ch = out;
    }
  }
  fc_ = &register_module("fc", std::make_unique<nn::Linear>(ch, classes));
}

nn::Var ResNet::forward(nn::Tracer& t, const std::vector<nn::Var>& inputs) const {
  nn::Var h = nn::F::relu(t, bn1_->forward(t, conv1_->forward(t, inputs.at(0))));
  h = nn::F::max_pool2d(t, h, 3, 2, 1);
  for (const nn::Module* b : blocks_) h = static_cast<const BasicBlock*>(b)->forward(t, h);
  h = nn::F::adaptive_avg_pool2d(t, h, 1, 1);
  h = nn::F::view(t, h, {h.size(0), h.size(1)});
  return fc_->forward(t, h);
}

}  // namespace crucible::models
