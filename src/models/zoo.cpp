// The zoo's registry (see zoo.h).
#include "crucible/models/zoo.h"

#include "models/BERT/BERT.h"
#include "models/GPT2/GPT2.h"
#include "models/Llama/Llama.h"
#include "models/MobileNetV2/MobileNetV2.h"
#include "models/ResNet/ResNet.h"
#include "models/SmokeTestModel/SmokeTestModel.h"
#include "models/ToyCoreOpsModel/ToyCoreOpsModel.h"
#include "models/ViT/ViT.h"

namespace crucible::models {

namespace {
template <class M>
ZooEntry entry(const std::string& name) {
  return ZooEntry{
      name, [](const Json& a) -> std::unique_ptr<ZooModel> { return std::make_unique<M>(a); }};
}
}  // namespace

const std::vector<ZooEntry>& zoo() {
  static const std::vector<ZooEntry> z = {
      entry<SmokeTestModel>("SmokeTestModel"),
      entry<ToyCoreOpsModel>("ToyCoreOpsModel"),
      entry<GPT2>("GPT2"),
      entry<Llama>("Llama"),
      entry<ResNet>("ResNet"),
      entry<MobileNetV2>("MobileNetV2"),
      entry<ViT>("ViT"),
      entry<BERT>("BERT"),
  };
  return z;
}

}  // namespace crucible::models
