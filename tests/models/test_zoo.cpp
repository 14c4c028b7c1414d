// The model zoo: every config loads and names its class; its op lists equal the ops of the
// captured forward and backward graphs (an extra or a missing op fails), all catalog ops; every
// model test captures; the training graphs run.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "crucible/core/error.h"
#include "crucible/graph/executor.h"
#include "crucible/models/zoo.h"
#include "sandbox/remove_tree.h"

namespace {

namespace fs = std::filesystem;
using namespace crucible::models;

std::string zoo_root() { return std::string(CRUCIBLE_SOURCE_DIR) + "/src/models"; }

TEST(Zoo, EveryClassHasItsFolderFileAndConfig) {
  ASSERT_GE(zoo().size(), 5u);
  for (const ZooEntry& e : zoo()) {
    const ModelConfig c = load_config(e.name, zoo_root());
    EXPECT_EQ(fs::path(c.file).parent_path().filename().string(), e.name);
    EXPECT_TRUE(fs::exists(zoo_root() + "/" + e.name + "/" + e.name + ".h")) << e.name;
    EXPECT_TRUE(fs::exists(zoo_root() + "/" + e.name + "/" + e.name + ".cpp")) << e.name;
    EXPECT_EQ(e.make(c.init_args)->class_name(), e.name);
    EXPECT_FALSE(c.tests.empty());
    EXPECT_FALSE(c.description.empty());
  }
}

TEST(Zoo, OpListsEqualTheCapturedGraphs) {
  for (const ZooEntry& e : zoo()) {
    const ModelConfig c = load_config(e.name, zoo_root());
    const auto model = e.make(c.init_args);
    const Captured cap = capture(*model, e.name + "-train", c.tests.front().second, true);
    const std::vector<std::string> problems = check_config_ops(c, cap);
    for (const std::string& p : problems) ADD_FAILURE() << p;
    EXPECT_FALSE(cap.backward_ops.empty()) << e.name;
  }
}

TEST(Zoo, AnExtraOrAMissingOpIsCaught) {
  const ModelConfig good = load_config("SmokeTestModel", zoo_root());
  const auto model = make_model("SmokeTestModel", good.init_args);
  const Captured cap = capture(*model, "smoke", good.tests.front().second, true);
  ASSERT_TRUE(check_config_ops(good, cap).empty());
  ModelConfig extra = good;
  extra.forward_ops.push_back("aten.tanh.default");
  auto p = check_config_ops(extra, cap);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_NE(p[0].find("ops.forward lists aten.tanh.default, which the model's forward graph "
                      "does not use"),
            std::string::npos)
      << p[0];
  ModelConfig missing = good;
  missing.backward_ops.erase(missing.backward_ops.begin());
  p = check_config_ops(missing, cap);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_NE(p[0].find("ops.backward misses " + good.backward_ops.front()), std::string::npos)
      << p[0];
  ModelConfig unknown = good;
  unknown.backward_ops.push_back("aten.not_an_op.default");
  p = check_config_ops(unknown, cap);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_NE(p[0].find("not a catalog op"), std::string::npos) << p[0];
}

TEST(Zoo, EveryModelTestCapturesAndTheTrainingGraphsRun) {
  for (const ZooEntry& e : zoo()) {
    const ModelConfig c = load_config(e.name, zoo_root());
    const auto model = e.make(c.init_args);
    for (const auto& [name, call] : c.tests) {
      const Captured fwd = capture(*model, e.name + "-" + name, call, false);
      EXPECT_EQ(fwd.graph.kind, "forward");
    }
    const Captured train = capture(*model, e.name + "-train", c.tests.front().second, true);
    crucible::graph::ExecOptions o;
    o.seed = 1;
    const auto r = crucible::graph::execute(train.graph, "cpu", o);
    ASSERT_EQ(r.outputs.size(), train.graph.outputs.size());
    const double loss = r.outputs[0].get(0);
    EXPECT_TRUE(std::isfinite(loss)) << e.name;
    // Every parameter gets a gradient.
    EXPECT_EQ(train.graph.outputs.size(), 1 + model->parameters().size()) << e.name;
  }
}

TEST(Zoo, AMalformedConfigIsANamedError) {
  const fs::path dir = fs::temp_directory_path() / "crucible_zoo_bad";
  fs::create_directories(dir / "Bad");
  {
    std::ofstream(dir / "Bad" / "Bad.json") << R"({"model_config": {"init_args": {}},
      "ops": {"forward": ["aten.mm.default"]}, "model_tests": {}, "metadata": {}})";
  }
  try {
    load_config("Bad", dir.string());
    FAIL() << "a config without ops.backward loaded";
  } catch (const crucible::Error& e) {
    EXPECT_NE(std::string(e.what()).find("Bad.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("backward"), std::string::npos) << e.what();
  }
  crucible::remove_tree(std::filesystem::path(dir).string());
}

}  // namespace
