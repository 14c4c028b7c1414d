// The e2e tests' folders (temp_dir in cli_helpers.h: <tmp>/crucible-e2e-<name>-<pid>) are
// removed once every test of this process has passed; after a failure they stay, to be read.
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sandbox/remove_tree.h"

namespace crucible::e2e {
namespace {

class TempCleanup : public ::testing::Environment {
 public:
  void TearDown() override {
    if (!::testing::UnitTest::GetInstance()->Passed()) return;
    const std::string suffix = "-" + std::to_string(::getpid());
    std::vector<std::filesystem::path> ours;
    std::error_code ec;
    for (const auto& e :
         std::filesystem::directory_iterator(std::filesystem::temp_directory_path(), ec)) {
      const std::string name = e.path().filename().string();
      if (name.starts_with("crucible-e2e-") && name.ends_with(suffix)) ours.push_back(e.path());
    }
    for (const auto& p : ours) remove_tree(p.string());
  }
};

[[maybe_unused]] ::testing::Environment* const g_cleanup =
    ::testing::AddGlobalTestEnvironment(new TempCleanup);

}  // namespace
}  // namespace crucible::e2e
