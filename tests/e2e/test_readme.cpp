// README.md's worked example is what the binary prints (scripts/readme_example.sh regenerates
// it; this test fails when the two drift apart).
#include <gtest/gtest.h>

#include "e2e/cli_helpers.h"

namespace crucible::e2e {
namespace {

TEST(E2EReadme, WorkedExampleIsWhatTheRunPrints) {
  std::string cmd = std::string(CRUCIBLE_SOURCE_DIR) + "/scripts/readme_example.sh --check " +
                    std::string(CRUCIBLE_BINARY) + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int st = pclose(p);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << out;
  // The example lists the overloads the faulty backend does not implement.
  std::string readme = read_text(std::string(CRUCIBLE_SOURCE_DIR) + "/README.md");
  EXPECT_NE(readme.find("unsupported by faulty:"), std::string::npos);
}

}  // namespace
}  // namespace crucible::e2e
