// The example kernels through the plugin backend, as docs/kernel-abi.md tells a user to do it:
// (1) the in-build library of examples/kernels/ through `crucible run`, (2) examples/plugin built
// as its own CMake project against an installed crucible (find_package(crucible)).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "e2e/cli_helpers.h"
#include "sandbox/remove_tree.h"

namespace crucible {
namespace {

namespace fs = std::filesystem;

// Every case line of a run folder passed, and there were some of each op.
void expect_all_passed(const std::string& out_dir, const std::vector<std::string>& ops) {
  std::map<std::string, int> passed;
  for (const auto& j : e2e::read_jsonl(out_dir + "/results.jsonl")) {
    if (j.value("record", "") != "case") continue;
    EXPECT_EQ(j["status"], "passed") << j["op"] << " " << j["case"] << ": " << j["detail"];
    passed[j["op"].get<std::string>()] += j["status"] == "passed";
  }
  for (const std::string& op : ops) EXPECT_GT(passed[op], 0) << op;
}

const std::vector<std::string> kOps = {"aten.relu.default",     "aten.add.Tensor",
                                       "aten.add.Scalar",       "aten.add.out",
                                       "aten._softmax.default", "aten.mm.default"};

TEST(ExamplesPlugin, OpinfoPassesThroughTheCli) {
  const std::string dir = e2e::temp_dir("examples-plugin");
  const std::string lib = std::string(CRUCIBLE_TEST_PLUGIN_DIR) + "/libexamples.so";
  auto o = e2e::crucible(
      "run --suite opinfo --backend plugin:" + lib +
      " --ops relu.default,relu_.default,add.Tensor,add.Scalar,add.out,_softmax.default,mm.default "
      "--workers 2 --timeout 20 --out " +
      dir + "/run");
  EXPECT_EQ(o.status, 0) << o.out;
  auto ops = kOps;
  ops.push_back("aten.relu_.default");
  expect_all_passed(dir + "/run", ops);
  crucible::remove_tree(std::filesystem::path(dir).string());
}

TEST(ExamplesPlugin, BuildsAgainstAnInstalledCrucibleAndPasses) {
  const std::string dir = e2e::temp_dir("installed");
  const std::string cmake = CRUCIBLE_CMAKE_COMMAND;
  auto o = e2e::run_shell(cmake + " --install " + CRUCIBLE_BINARY_DIR + " --prefix " + dir +
                          "/prefix --component devel");
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_TRUE(fs::exists(dir + "/prefix/include/crucible/kernel.h"));
  EXPECT_TRUE(fs::exists(dir + "/prefix/include/crucible/kernel.hpp"));
  o = e2e::run_shell(cmake + " -S " + CRUCIBLE_SOURCE_DIR + "/examples/plugin -B " + dir +
                     "/build -DCMAKE_PREFIX_PATH=" + dir + "/prefix -DCMAKE_BUILD_TYPE=Release");
  ASSERT_EQ(o.status, 0) << o.out;
  o = e2e::run_shell(cmake + " --build " + dir + "/build -j 2");
  ASSERT_EQ(o.status, 0) << o.out;
  const std::string lib = dir + "/build/libexample_plugin.so";
  ASSERT_TRUE(fs::exists(lib)) << o.out;
  o = e2e::crucible("run --suite opinfo --backend plugin:" + lib +
                    " --ops relu.default,add.Tensor,add.Scalar,add.out,_softmax.default,mm.default "
                    "--workers 2 --timeout 20 --out " +
                    dir + "/run");
  EXPECT_EQ(o.status, 0) << o.out;
  expect_all_passed(dir + "/run", kOps);
  // The manifest names the backend by its library.
  auto manifest = e2e::read_json(dir + "/run/manifest.json");
  EXPECT_NE(manifest.dump().find("libexample_plugin.so"), std::string::npos);
  crucible::remove_tree(std::filesystem::path(dir).string());
}

}  // namespace
}  // namespace crucible
