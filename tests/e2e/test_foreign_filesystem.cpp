// crucible next to a library that exports its own std::filesystem (libtorch from pip does): a
// sandboxed run must end with its summary and leave no scratch folder, whatever remove_all that
// library would run (tests/fixtures/interpose/filesystem_abort.cc aborts in it).
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

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

// The test above covers the scratch folder of a run; any other call of remove_all would crash
// the same way where libtorch exports its copy: the tests' temp_dir() and their global tear-down
// did, in the libtorch-linked test binary of a GPU machine (SIGSEGV before a test's first
// assertion, and at exit). So no source of crucible or of its tests calls it: they call
// remove_tree. (This file and the preloaded fixture name it on purpose.)
TEST(ForeignFilesystem, NoSourceCallsStdFilesystemRemoveAll) {
  const fs::path root(CRUCIBLE_SOURCE_DIR);
  const std::regex call(R"((fs|filesystem)::remove_all\s*\()");
  std::vector<fs::path> files;
  for (const char* dir : {"src", "tests"})
    for (const auto& e : fs::recursive_directory_iterator(root / dir)) {
      const std::string p = e.path().string();
      if (!e.is_regular_file() || p.find("fixtures/interpose") != std::string::npos ||
          p.find("test_foreign_filesystem.cpp") != std::string::npos)
        continue;
      if (e.path().extension() == ".cpp" || e.path().extension() == ".h" ||
          e.path().extension() == ".cc" || e.path().extension() == ".hpp")
        files.push_back(e.path());
    }
  size_t scanned = 0;
  for (const fs::path& f : files) {
    std::ifstream in(f);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      const std::string code = line.substr(0, line.find("//"));
      if (std::regex_search(code, call)) ADD_FAILURE() << f << ":" << n << ": " << line;
    }
    ++scanned;
  }
  EXPECT_GT(scanned, 100u);
}

}  // namespace
}  // namespace crucible::e2e
