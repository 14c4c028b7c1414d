// `crucible run --suite model`: whole model graphs judged by the f64 arbiter, through the real
// binary. The shipped models' tiny configurations run on cpu; a backend wrong in one op fails the
// model and the verdict names that node as the first divergence.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "e2e/cli_helpers.h"
#include "graph/graph_test_util.h"

namespace crucible::e2e {
namespace {

using graph::testing::example;

std::vector<nlohmann::json> cases_of(const std::string& dir) {
  std::vector<nlohmann::json> out;
  for (const nlohmann::json& j : read_jsonl(dir + "/results.jsonl"))
    if (j.value("record", "") == "case") out.push_back(j);
  return out;
}

TEST(ModelSuite, ExampleGraphPassesOnCpuWithItsChecks) {
  const std::string dir = temp_dir("model-mlp");
  Output o =
      crucible("run --suite model:" + example("mlp.graph") + " --backend cpu --quiet --out " + dir);
  ASSERT_EQ(o.status, 0) << o.out;
  auto cases = cases_of(dir);
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(cases[0]["op"], "model:mlp-tiny");
  EXPECT_EQ(cases[0]["status"], "passed") << cases[0].dump();
  ASSERT_EQ(cases[0]["checks"].size(), 1u);
  const auto& c = cases[0]["checks"][0];
  EXPECT_EQ(c["what"], "output 0");
  EXPECT_GE(c["rmse"].get<double>(), 0.0);
  EXPECT_LE(c["rmse"].get<double>(), c["allowed_rmse"].get<double>());
  EXPECT_GT(c["pcc"].get<double>(), 0.9999);
}

TEST(ModelSuite, ShippedTinyModelsPassOnCpuForwardAndTraining) {
  const std::string dir = temp_dir("model-shipped");
  Output o = crucible(
      "run --suite model --model-filter gpt2-tiny,vit-tiny --backend cpu --quiet --out " + dir);
  EXPECT_EQ(o.status, 0) << o.out;
  auto cases = cases_of(dir);
  ASSERT_EQ(cases.size(), 4u) << o.out;  // forward and training of each
  for (const auto& c : cases) {
    EXPECT_EQ(c["status"], "passed") << c.dump();
    if (c["label"] == "training") {
      // The loss and a gradient per parameter.
      EXPECT_EQ(c["checks"][0]["what"], "loss") << c.dump();
      EXPECT_GT(c["checks"].size(), 10u);
    }
  }
}

TEST(ModelSuite, OneWrongOpFailsTheModelAndIsNamedAsTheFirstDivergence) {
  // faulty's relu returns its input; every other op runs on the named fallback.
  const std::string dir = temp_dir("model-faulty");
  Output o = crucible("run --suite model:" + example("mlp.graph") +
                      " --backend faulty --fallback ref --quiet --out " + dir);
  EXPECT_EQ(o.status, 1) << o.out;
  auto cases = cases_of(dir);
  ASSERT_EQ(cases.size(), 1u);
  const std::string detail = cases[0]["detail"];
  EXPECT_EQ(cases[0]["status"], "failed") << detail;
  EXPECT_NE(detail.find("first divergence at " + example("mlp.graph") +
                        ":16: %a = "
                        "aten.relu.default(%h)"),
            std::string::npos)
      << detail;
  EXPECT_NE(detail.find("2 node(s) downstream"), std::string::npos) << detail;
  EXPECT_NE(detail.find("ran on ref: aten._log_softmax.default, aten.addmm.default, "
                        "aten.t.default"),
            std::string::npos)
      << detail;
  EXPECT_NE(cases[0]
                .value("reproducer", "")
                .find("--suite model:" + example("mlp.graph") +
                      " --backend faulty --seed 0 --fallback ref"),
            std::string::npos)
      << cases[0].dump();
}

TEST(ModelSuite, MissingOpsMakeTheModelUnsupportedWithTheirList) {
  const std::string dir = temp_dir("model-unsupported");
  Output o = crucible("run --suite model:" + example("mlp.graph") +
                      " --backend faulty --quiet --out " + dir);
  EXPECT_EQ(o.status, 1) << o.out;
  auto cases = cases_of(dir);
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(cases[0]["status"], "unsupported");
  const std::string detail = cases[0]["detail"];
  EXPECT_NE(detail.find("lacks 3 op(s) of the model"), std::string::npos) << detail;
  EXPECT_NE(detail.find("aten.addmm.default"), std::string::npos) << detail;
}

TEST(ModelSuite, BadInputIsAUsageErrorNamingThePlace) {
  const std::string dir = temp_dir("model-bad");
  const std::string bad = dir + "/bad.graph";
  std::ofstream(bad) << "crucible-graph 1\nname t\nkind forward\ninput %x : T([2], f32)\n"
                        "%y = aten.relu(%z)\noutput %y\n";
  Output o = crucible("run --suite model:" + bad + " --backend cpu --quiet --out " + dir + "/r");
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_NE(o.out.find(bad + ":5:"), std::string::npos) << o.out;
  o = crucible("run --suite model:" + example("mlp.graph") +
               " --model-filter nothing --backend cpu --quiet --out " + dir + "/r2");
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_NE(o.out.find("--model-filter nothing matches no model; the models are: mlp-tiny"),
            std::string::npos)
      << o.out;
  o = crucible("run --suite smoke --fallback ref --quiet --out " + dir + "/r3");
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_NE(o.out.find("--fallback applies to --suite model"), std::string::npos) << o.out;
  o = crucible("run --suite model:" + example("mlp.graph") + " --model-k 0.5 --out " + dir + "/r4");
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_NE(o.out.find("--model-k 0.5"), std::string::npos) << o.out;
  o = crucible("run --suite model:" + example("mlp.graph") + " --fallback nonesuch --out " + dir +
               "/r5");
  EXPECT_EQ(o.status, 2) << o.out;
  o = crucible("run --suite model:" + example("mlp.graph") + " --ops relu --out " + dir + "/r6");
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_NE(o.out.find("--ops does not apply to --suite model"), std::string::npos) << o.out;
}

}  // namespace
}  // namespace crucible::e2e
