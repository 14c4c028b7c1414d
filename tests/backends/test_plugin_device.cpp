// The device a plugin declares (crucible_plugin.device): CPU and CUDA plugins are evaluated, the
// probe reports which (before any worker loads the library), and others are refused by name.
#include <cstdio>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "backends/plugin/probe.h"
#include "crucible/core/error.h"
#include "e2e/cli_helpers.h"

namespace crucible {
namespace {

std::string plugin_path(const std::string& name) {
  return std::string(CRUCIBLE_TEST_PLUGIN_DIR) + "/lib" + name + ".so";
}

TEST(PluginDevice, TheProbeReportsACudaPlugin) {
  EXPECT_TRUE(probe_kernel_library(plugin_path("cuda_declared")).cuda);
  EXPECT_FALSE(probe_kernel_library(plugin_path("c_relu")).cuda);
}

TEST(PluginDevice, AnotherDeviceIsRefusedByName) {
  try {
    probe_kernel_library(plugin_path("other_device"));
    FAIL() << "a plugin for another device was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported) << e.what();
    EXPECT_NE(std::string(e.what()).find("other-device"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("kDLCUDA"), std::string::npos) << e.what();
  }
}

TEST(PluginDevice, ACudaPluginWithoutAGpuSaysWhyCudaCouldNotStart) {
  if (e2e::gpu_visible()) GTEST_SKIP() << "a GPU is visible: the plugin would run there";
  const std::string out = e2e::temp_dir("plugin-device");
  const e2e::Output o =
      e2e::crucible("run --suite smoke --backend plugin:" + plugin_path("cuda_declared") +
                    " --ops relu --dtypes f32 --workers 1 -q --out " + out);
  EXPECT_TRUE(o.status == 0 || o.status == 1) << o.out;
  const auto lines = e2e::read_jsonl(out + "/results.jsonl");
  int cases = 0;
  for (const auto& j : lines) {
    // Only relu.default has a kernel (the suite's out= and in-place variants are unsupported).
    if (j.value("record", "case") != "case" || j.value("op", "") != "aten.relu.default") continue;
    ++cases;
    EXPECT_EQ(j.value("status", ""), "failed") << j.dump();
    EXPECT_NE(j.value("detail", "").find("cannot start CUDA in the kernel's process"),
              std::string::npos)
        << j.dump();
  }
  EXPECT_GT(cases, 0) << o.out;
}

}  // namespace
}  // namespace crucible
