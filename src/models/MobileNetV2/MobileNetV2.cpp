// MobileNetV2 (see MobileNetV2.h).
#include "models/MobileNetV2/MobileNetV2.h"

#include "models/zoo_util.h"

namespace crucible::models {

namespace {

// Conv2d (no bias) + BatchNorm2d (+ ReLU6): torchvision's Conv2dNormActivation, children 0, 1.
class ConvBn : public nn::Module {
 public:
  ConvBn(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t groups, bool relu6)
      : relu6_(relu6) {
    conv_ = &register_module(
        "0", std::make_unique<nn::Conv2d>(in, out, k, stride, (k - 1) / 2, groups, false));
    bn_ = &register_module("1", std::make_unique<nn::BatchNorm2d>(out));
  }
  nn::Var forward(nn::Tracer& t, const nn::Var& x) const {
    const nn::Var y = bn_->forward(t, conv_->forward(t, x));
    return relu6_ ? nn::F::relu6(t, y) : y;
  }

 private:
  bool relu6_;
  nn::Conv2d* conv_;
  nn::BatchNorm2d* bn_;
};

class InvertedResidual : public nn::Module {
 public:
  InvertedResidual(int64_t in, int64_t out, int64_t stride, int64_t t)
      : residual_(stride == 1 && in == out) {
    auto& conv = register_module("conv", std::make_unique<nn::ModuleList>());
    const int64_t hidden = in * t;
    if (t != 1)
      layers_.push_back(&conv.push_back(std::make_unique<ConvBn>(in, hidden, 1, 1, 1, true)));
    layers_.push_back(
        &conv.push_back(std::make_unique<ConvBn>(hidden, hidden, 3, stride, hidden, true)));
    project_ = &conv.push_back(std::make_unique<nn::Conv2d>(hidden, out, 1, 1, 0, 1, false));
    bn_ = &conv.push_back(std::make_unique<nn::BatchNorm2d>(out));
  }
  nn::Var forward(nn::Tracer& t, const nn::Var& x) const {
    nn::Var h = x;
    for (const ConvBn* l : layers_) h = l->forward(t, h);
    h = bn_->forward(t, project_->forward(t, h));
    return residual_ ? nn::F::add(t, x, h) : h;
  }

 private:
  bool residual_;
  std::vector<const ConvBn*> layers_;
  nn::Conv2d* project_;
  nn::BatchNorm2d* bn_;
};

}  // namespace

MobileNetV2::MobileNetV2(const Json& args) {
  std::vector<std::vector<int64_t>> setting = {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2},
                                               {6, 64, 4, 2}, {6, 96, 3, 1}, {6, 160, 3, 2},
                                               {6, 320, 1, 1}};
  if (args.contains("inverted_residual_setting")) {
    setting.clear();
    for (const Json& row : args["inverted_residual_setting"]) {
      if (!row.is_array() || row.size() != 4)
        usage_error("MobileNetV2: inverted_residual_setting rows are [t, c, n, s]");
      setting.push_back(row.get<std::vector<int64_t>>());
    }
  }
  const int64_t stem = detail::int_arg(args, "stem_channels", 32);
  const int64_t last = detail::int_arg(args, "last_channel", 1280);
  const int64_t classes = detail::int_arg(args, "num_classes", 1000);
  const double p = detail::num_arg(args, "dropout", 0.2);
  auto& features = register_module("features", std::make_unique<nn::ModuleList>());
  auto& stem_layer = features.push_back(std::make_unique<ConvBn>(3, stem, 3, 2, 1, true));
  features_.push_back(&stem_layer);
  int64_t ch = stem;
  for (const auto& row : setting) {
    for (int64_t i = 0; i < row[2]; ++i) {
      features_.push_back(&features.push_back(
          std::make_unique<InvertedResidual>(ch, row[1], i == 0 ? row[3] : 1, row[0])));
      ch = row[1];
    }
  }
  auto& last_layer = features.push_back(std::make_unique<ConvBn>(ch, last, 1, 1, 1, true));
  features_.push_back(&last_layer);
  auto& classifier = register_module("classifier", std::make_unique<nn::ModuleList>());
  dropout_ = &classifier.push_back(std::make_unique<nn::Dropout>(p));
  head_ = &classifier.push_back(std::make_unique<nn::Linear>(last, classes));
}

nn::Var MobileNetV2::forward(nn::Tracer& t, const std::vector<nn::Var>& inputs) const {
  nn::Var h = inputs.at(0);
  for (size_t i = 0; i < features_.size(); ++i) {
    if (i == 0 || i + 1 == features_.size())
      h = static_cast<const ConvBn*>(features_[i])->forward(t, h);
    else
      h = static_cast<const InvertedResidual*>(features_[i])->forward(t, h);
  }
  h = nn::F::adaptive_avg_pool2d(t, h, 1, 1);
  h = nn::F::view(t, h, {h.size(0), h.size(1)});
  return head_->forward(t, dropout_->forward(t, h));
}

}  // namespace crucible::models
