// The zoo through the real binary: `crucible models` lists it; `crucible run --suite model:zoo`
// judges forward, backward and SGD steps, passing on cpu and failing a backend with a wrong op.
#include <gtest/gtest.h>

#include <string>

#include "e2e/cli_helpers.h"

namespace crucible::e2e {
namespace {

std::vector<nlohmann::json> zoo_cases(const std::string& dir) {
  std::vector<nlohmann::json> out;
  for (const nlohmann::json& j : read_jsonl(dir + "/results.jsonl"))
    if (j.value("record", "") == "case") out.push_back(j);
  return out;
}

TEST(ZooSuite, ModelsListsTheZooWithParametersAndOps) {
  const Output o = crucible("models --ops");
  ASSERT_EQ(o.status, 0) << o.out;
  for (const char* name : {"SmokeTestModel", "ToyCoreOpsModel", "GPT2", "Llama", "ResNet",
                           "MobileNetV2", "ViT", "BERT"})
    EXPECT_NE(o.out.find(name), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("49472"), std::string::npos) << o.out;  // SmokeTestModel's parameters
  EXPECT_NE(o.out.find("aten.native_layer_norm_backward.default"), std::string::npos) << o.out;
}

TEST(ZooSuite, ZooModelsPassOnCpuWithSgdSteps) {
  const std::string dir = temp_dir("zoo-cpu");
  const Output o = crucible(
      "run --suite model:zoo --model-filter zoo-SmokeTestModel,zoo-GPT2,zoo-ResNet,zoo-BERT "
      "--backend cpu --quiet --out " +
      dir);
  EXPECT_EQ(o.status, 0) << o.out;
  const auto cases = zoo_cases(dir);
  ASSERT_EQ(cases.size(), 4u) << o.out;
  for (const auto& c : cases) {
    EXPECT_EQ(c["status"], "passed") << c.dump();
    EXPECT_EQ(c["checks"][0]["what"], "loss") << c.dump();
    bool sgd = false;
    for (const auto& check : c["checks"]) sgd |= check["what"] == "sgd step 3 loss";
    EXPECT_TRUE(sgd) << c.dump();
    EXPECT_NE(c["detail"].get<std::string>().find("3 SGD steps"), std::string::npos) << c.dump();
  }
}

TEST(ZooSuite, AWrongOpFailsTheZooModel) {
  const std::string dir = temp_dir("zoo-faulty");
  // faulty's add.Tensor is off by a little (and its relu returns its input); the ops it lacks
  // run on ref.
  const Output o = crucible(
      "run --suite model:zoo --model-filter zoo-SmokeTestModel --backend faulty --fallback ref "
      "--quiet --out " +
      dir);
  EXPECT_NE(o.status, 0) << o.out;
  const auto cases = zoo_cases(dir);
  ASSERT_EQ(cases.size(), 1u) << o.out;
  EXPECT_EQ(cases[0]["status"], "failed") << cases[0].dump();
  const std::string detail = cases[0]["detail"].get<std::string>();
  EXPECT_NE(detail.find("first divergence at zoo-SmokeTestModel.graph:"), std::string::npos)
      << detail;
  EXPECT_NE(detail.find("aten.add.Tensor(%mm, %bias1)"), std::string::npos) << detail;
  EXPECT_NE(cases[0]["reproducer"].get<std::string>().find("--fallback ref"), std::string::npos)
      << cases[0].dump();
}

}  // namespace
}  // namespace crucible::e2e
