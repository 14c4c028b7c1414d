// crucible next to a library that exports its own std::filesystem (libtorch from pip does): a
// sandboxed run must end with its summary and leave no scratch folder, whatever remove_all that
// library would run (tests/fixtures/interpose/filesystem_abort.cc aborts in it).
#include <filesystem>

#include <gtest/gtest.h>

#include "e2e/cli_helpers.h"

namespace crucible::e2e {
namespace {

namespace fs = std::filesystem;

TEST(ForeignFilesystem, ASandboxedRunEndsCleanlyAndRemovesItsScratchFolder) {
  const fs::path d = temp_dir("foreign-filesystem");
  const fs::path tmp = d / "tmp";
  fs::create_directories(tmp);
  const std::string plugin = std::string(CRUCIBLE_TEST_PLUGIN_DIR) + "/libexamples.so";
  Output o = crucible_env("LD_PRELOAD=" + shell_quote(CRUCIBLE_INTERPOSE_FILESYSTEM) +
                              " TMPDIR=" + shell_quote(tmp.string()),
                          "run --suite smoke --dtypes f32 --ops relu.default --backend plugin:" +
                              shell_quote(plugin) + " --out " + shell_quote((d / "run").string()));
  EXPECT_EQ(o.status, 0) << o.out;
  EXPECT_EQ(o.out.find("foreign std::filesystem"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("correctness 100.0%"), std::string::npos) << o.out;
  for (const auto& e : fs::directory_iterator(tmp)) ADD_FAILURE() << "left behind: " << e.path();
}

}  // namespace
}  // namespace crucible::e2e
