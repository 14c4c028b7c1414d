// ResNet (see ResNet.h).
#include "models/ResNet/ResNet.h"

#include "models/zoo_util.h"

namespace crucible::models {

namespace {

// The shortcut of a block that changes the shape: a strided 1x1 convolution and batch norm
// (downsample.0, downsample.1); none (the identity) otherwise.
struct Shortcut {
  nn::Conv2d* conv = nullptr;
  nn::BatchNorm2d* bn = nullptr;
  nn::Var forward(nn::Tracer& t, const nn::Var& x) const {
    return conv ? bn->forward(t, conv->forward(t, x)) : x;
  }
};

template <class Block>
Shortcut make_shortcut(Block& block, int64_t in, int64_t out, int64_t stride) {
  Shortcut s;
  if (stride == 1 && in == out) return s;
  auto& ds = block.add("downsample", std::make_unique<nn::ModuleList>());
  s.conv = &ds.push_back(std::make_unique<nn::Conv2d>(in, out, 1, stride, 0, 1, false));
  s.bn = &ds.push_back(std::make_unique<nn::BatchNorm2d>(out));
  return s;
}

class BasicBlock : public ResidualBlock {
 public:
  static constexpr int64_t kExpansion = 1;
  BasicBlock(int64_t in, int64_t planes, int64_t stride) {
    conv1_ = &add("conv1", std::make_unique<nn::Conv2d>(in, planes, 3, stride, 1, 1, false));
    bn1_ = &add("bn1", std::make_unique<nn::BatchNorm2d>(planes));
    conv2_ = &add("conv2", std::make_unique<nn::Conv2d>(planes, planes, 3, 1, 1, 1, false));
    bn2_ = &add("bn2", std::make_unique<nn::BatchNorm2d>(planes));
    shortcut_ = make_shortcut(*this, in, planes, stride);
  }
  template <class M>
  M& add(const std::string& name, std::unique_ptr<M> m) {
    return register_module(name, std::move(m));
  }
  nn::Var forward(nn::Tracer& t, const nn::Var& x) const override {
    nn::Var h = nn::F::relu(t, bn1_->forward(t, conv1_->forward(t, x)));
    h = bn2_->forward(t, conv2_->forward(t, h));
    return nn::F::relu(t, nn::F::add(t, h, shortcut_.forward(t, x)));
  }

 private:
  nn::Conv2d *conv1_, *conv2_;
  nn::BatchNorm2d *bn1_, *bn2_;
  Shortcut shortcut_;
};

// torchvision's Bottleneck: the stride on the 3x3 convolution.
class Bottleneck : public ResidualBlock {
 public:
  static constexpr int64_t kExpansion = 4;
  Bottleneck(int64_t in, int64_t planes, int64_t stride, int64_t width_per_group) {
    const int64_t mid = planes * width_per_group / 64, out = planes * kExpansion;
    conv1_ = &add("conv1", std::make_unique<nn::Conv2d>(in, mid, 1, 1, 0, 1, false));
    bn1_ = &add("bn1", std::make_unique<nn::BatchNorm2d>(mid));
    conv2_ = &add("conv2", std::make_unique<nn::Conv2d>(mid, mid, 3, stride, 1, 1, false));
    bn2_ = &add("bn2", std::make_unique<nn::BatchNorm2d>(mid));
    conv3_ = &add("conv3", std::make_unique<nn::Conv2d>(mid, out, 1, 1, 0, 1, false));
    bn3_ = &add("bn3", std::make_unique<nn::BatchNorm2d>(out));
    shortcut_ = make_shortcut(*this, in, out, stride);
  }
  template <class M>
  M& add(const std::string& name, std::unique_ptr<M> m) {
    return register_module(name, std::move(m));
  }
  nn::Var forward(nn::Tracer& t, const nn::Var& x) const override {
    nn::Var h = nn::F::relu(t, bn1_->forward(t, conv1_->forward(t, x)));
    h = nn::F::relu(t, bn2_->forward(t, conv2_->forward(t, h)));
    h = bn3_->forward(t, conv3_->forward(t, h));
    return nn::F::relu(t, nn::F::add(t, h, shortcut_.forward(t, x)));
  }

 private:
  nn::Conv2d *conv1_, *conv2_, *conv3_;
  nn::BatchNorm2d *bn1_, *bn2_, *bn3_;
  Shortcut shortcut_;
};

}  // namespace

ResNet::ResNet(const Json& args) {
  std::vector<int64_t> layers = {2, 2, 2, 2};
  if (args.contains("layers")) {
    if (!args["layers"].is_array()) usage_error("ResNet: init_args.layers is not a list");
    layers.clear();
    for (const Json& n : args["layers"]) {
      if (!n.is_number_integer() || n.get<int64_t>() < 1)
        usage_error("ResNet: init_args.layers holds " + n.dump() + ", not a block count >= 1");
      layers.push_back(n.get<int64_t>());
    }
  }
  const int64_t width = detail::int_arg(args, "width", 64);
  const int64_t classes = detail::int_arg(args, "num_classes", 1000);
  const int64_t in_ch = detail::int_arg(args, "in_channels", 3);
  const std::string block = detail::str_arg(args, "block", "basic");
  const int64_t width_per_group = detail::int_arg(args, "width_per_group", 64);
  if (block != "basic" && block != "bottleneck")
    usage_error("ResNet: init_args.block is '" + block + "', not basic or bottleneck");
  if (block == "basic" && width_per_group != 64)
    usage_error("ResNet: init_args.width_per_group applies to bottleneck blocks only");
  if (width <= 0 || width_per_group <= 0 || (width * width_per_group) % 64 != 0)
    usage_error("ResNet: width * width_per_group must be a positive multiple of 64");
  conv1_ = &register_module("conv1", std::make_unique<nn::Conv2d>(in_ch, width, 7, 2, 3, 1, false));
  bn1_ = &register_module("bn1", std::make_unique<nn::BatchNorm2d>(width));
  int64_t ch = width;
  for (size_t s = 0; s < layers.size(); ++s) {
    auto& stage =
        register_module("layer" + std::to_string(s + 1), std::make_unique<nn::ModuleList>());
    const int64_t planes = width << s;
    for (int64_t b = 0; b < layers[s]; ++b) {
      const int64_t stride = (s > 0 && b == 0) ? 2 : 1;
      if (block == "basic") {
        blocks_.push_back(&stage.push_back(std::make_unique<BasicBlock>(ch, planes, stride)));
        ch = planes * BasicBlock::kExpansion;
      } else {
        blocks_.push_back(
            &stage.push_back(std::make_unique<Bottleneck>(ch, planes, stride, width_per_group)));
        ch = planes * Bottleneck::kExpansion;
      }
    }
  }
  fc_ = &register_module("fc", std::make_unique<nn::Linear>(ch, classes));
}

nn::Var ResNet::forward(nn::Tracer& t, const std::vector<nn::Var>& inputs) const {
  nn::Var h = nn::F::relu(t, bn1_->forward(t, conv1_->forward(t, inputs.at(0))));
  h = nn::F::max_pool2d(t, h, 3, 2, 1);
  for (const ResidualBlock* b : blocks_) h = b->forward(t, h);
  h = nn::F::adaptive_avg_pool2d(t, h, 1, 1);
  h = nn::F::view(t, h, {h.size(0), h.size(1)});
  return fc_->forward(t, h);
}

}  // namespace crucible::models
