// `crucible opbyop`: every unique node alone on its real inputs, the chained run naming the
// first divergent node, the JSON/Markdown/XLSX reports and reproducers that replay a failure.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "e2e/cli_helpers.h"
#include "graph/graph_test_util.h"

namespace crucible::e2e {
namespace {

using graph::testing::example;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// faulty's relu returns its input; with --fallback ref the chained model runs everything else
// on ref, so exactly one operator in the middle of the model is wrong.
TEST(OpByOp, NamesTheOneWrongOperatorInEveryReportAndItsReproducerReplaysIt) {
  const std::string dir = temp_dir("opbyop-faulty");
  const std::string mlp = example("mlp.graph");
  Output o = crucible("opbyop " + mlp + " --backend faulty --fallback ref --quiet --out " + dir);
  EXPECT_EQ(o.status, 1) << o.out;

  const nlohmann::json j = nlohmann::json::parse(slurp(dir + "/opbyop.json"));
  ASSERT_EQ(j["models"].size(), 1u);
  const auto& m = j["models"][0];
  EXPECT_EQ(m["model"], "mlp-tiny");
  EXPECT_EQ(m["unique_nodes"], 6);  // two t and two addmm of different shapes
  EXPECT_EQ(m["chained"]["status"], "failed");
  EXPECT_EQ(m["chained"]["first_divergence_line"], 16);
  EXPECT_EQ(m["chained"]["first_divergence"], "%a = aten.relu.default(%h) -> T([4, 16], f32)");
  std::string reproducer;
  for (const auto& n : m["nodes"]) {
    if (n["op"] == "aten.relu.default") {
      EXPECT_EQ(n["status"], "wrong") << n.dump();
      reproducer = n["reproducer"];
    } else {
      EXPECT_EQ(n["status"], "unsupported") << n.dump();  // faulty alone lacks them
    }
  }
  EXPECT_EQ(m["statuses"]["wrong"], 1);
  EXPECT_EQ(m["statuses"]["unsupported"], 5);

  const std::string md = slurp(dir + "/opbyop.md");
  EXPECT_NE(md.find("line 16: `%a = aten.relu.default(%h) -> T([4, 16], f32)`"), std::string::npos)
      << md;

  const std::string py =
      "import zipfile,sys; z=zipfile.ZipFile(sys.argv[1]); "
      "print(z.read('xl/workbook.xml').decode()); print(z.read('xl/sharedStrings.xml').decode())";
  Output x;
  {
    FILE* p = popen(("python3 -c \"" + py + "\" " + dir + "/opbyop.xlsx 2>&1").c_str(), "r");
    ASSERT_NE(p, nullptr);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) x.out.append(buf, n);
    x.status = pclose(p);
  }
  EXPECT_EQ(x.status, 0) << x.out;
  EXPECT_NE(x.out.find("name=\"summary\""), std::string::npos) << x.out;
  EXPECT_NE(x.out.find("name=\"mlp-tiny\""), std::string::npos) << x.out;
  EXPECT_NE(x.out.find("%a = aten.relu.default(%h) -&gt; T([4, 16], f32)"), std::string::npos)
      << x.out;

  // The reproducer replays the node on its real inputs, and fails as it did.
  ASSERT_EQ(reproducer.rfind("crucible run ", 0), 0u) << reproducer;
  EXPECT_NE(reproducer.find("--inputs " + dir + "/mlp-tiny/reproducers/"), std::string::npos);
  Output r = crucible(reproducer.substr(std::string("crucible ").size()) + " --quiet --out " + dir +
                      "/replay");
  EXPECT_EQ(r.status, 1) << r.out;
  const auto replay = read_jsonl(dir + "/replay/results.jsonl");
  bool found = false;
  for (const auto& c : replay)
    if (c.value("record", "") == "case") {
      found = true;
      EXPECT_EQ(c["status"], "failed") << c.dump();
      EXPECT_EQ(c["label"], "saved inputs");
    }
  EXPECT_TRUE(found);
}

TEST(OpByOp, ARealModelPassesOnCpuNodeByNodeAndChained) {
  const std::string dir = temp_dir("opbyop-cpu");
  Output o = crucible("opbyop " + std::string(CRUCIBLE_SOURCE_DIR) +
                      "/data/models/gpt2-tiny-fwd.graph --backend cpu --quiet --out " + dir);
  EXPECT_EQ(o.status, 0) << o.out;
  const nlohmann::json j = nlohmann::json::parse(slurp(dir + "/opbyop.json"));
  const auto& m = j["models"][0];
  EXPECT_EQ(m["chained"]["status"], "passed");
  EXPECT_EQ(m["statuses"]["passed"], m["unique_nodes"]);
  int64_t repeated = 0;
  for (const auto& n : m["nodes"]) repeated += n["occurrences"].get<int64_t>() > 1 ? 1 : 0;
  EXPECT_GT(repeated, 0);  // two identical layers: their nodes are run once each
}

TEST(OpByOp, BadInputIsExitTwo) {
  const std::string dir = temp_dir("opbyop-bad");
  Output o = crucible("opbyop " + dir + "/absent.graph --out " + dir + "/r");
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_NE(o.out.find("absent.graph: no such graph file or folder"), std::string::npos) << o.out;
  o = crucible("opbyop " + example("mlp.graph") + " --no-chained --fallback ref --out " + dir);
  EXPECT_EQ(o.status, 2) << o.out;
  o = crucible("run --op aten.relu.default --case '((T([2], f32),), {})' --inputs " + dir +
               "/none.safetensors --out " + dir + "/r2");
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_NE(o.out.find("none.safetensors"), std::string::npos) << o.out;
}

}  // namespace
}  // namespace crucible::e2e
