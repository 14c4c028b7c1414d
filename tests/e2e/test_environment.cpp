// Every run the tests start (through the binary or the library) records itself in a run
// history under a temporary XDG_DATA_HOME, never in the user's own data directory.
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include "sandbox/remove_tree.h"

namespace {

class TemporaryDataHome : public ::testing::Environment {
 public:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("crucible-tests-data-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    ::setenv("XDG_DATA_HOME", dir_.c_str(), 1);
  }
  void TearDown() override { crucible::remove_tree(std::filesystem::path(dir_).string()); }

 private:
  std::filesystem::path dir_;
};

[[maybe_unused]] ::testing::Environment* const kDataHome =
    ::testing::AddGlobalTestEnvironment(new TemporaryDataHome);

}  // namespace
