// Python kernels in kernel folders: which `.py` file of a sub-folder is its op's kernel, in
// crucible's layout and in BackendBench's two (tests/fixtures/python_kernels).
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "backends/dir/kernel_folder.h"
#include "sandbox/remove_tree.h"

namespace crucible::dir {
namespace {

namespace fs = std::filesystem;

const KernelSource* find(const FolderScan& s, const std::string& op) {
  for (const KernelSource& k : s.kernels)
    if (k.op == op) return &k;
  return nullptr;
}

TEST(PythonFolderScan, BothBackendBenchLayoutsAndCruciblesAreFound) {
  const FolderScan s =
      scan_kernel_folder(std::string(CRUCIBLE_SOURCE_DIR) + "/tests/fixtures/python_kernels");
  // <op>/<op>.py
  const KernelSource* relu = find(s, "aten.relu.default");
  ASSERT_NE(relu, nullptr);
  EXPECT_TRUE(relu->python);
  EXPECT_FALSE(relu->cuda);
  EXPECT_EQ(fs::path(relu->source).filename(), "relu.py");
  // <op>__<overload>/<op>__<overload>_implementation_v1.py, in place and out= included.
  for (const char* op : {"aten.add.Tensor", "aten.add_.Tensor", "aten.abs.out"}) {
    const KernelSource* k = find(s, op);
    ASSERT_NE(k, nullptr) << op;
    EXPECT_TRUE(k->python) << op;
    EXPECT_EQ(fs::path(k->source).filename(), k->folder + "_implementation_v1.py") << op;
  }
  // A file that does not parse is still its op's kernel (its cases say why it cannot run).
  const KernelSource* trunc = find(s, "aten.trunc.default");
  ASSERT_NE(trunc, nullptr);
  EXPECT_TRUE(trunc->python);
  // The trace file and README at the top level are not kernels, and nothing is ignored.
  EXPECT_TRUE(s.ignored.empty()) << s.ignored.front();
}

TEST(PythonFolderScan, InitFilesDoNotCountAndAmbiguityIsReported) {
  const fs::path root = fs::temp_directory_path() / ("crucible-pyscan-" + std::to_string(getpid()));
  crucible::remove_tree(std::filesystem::path(root).string());
  fs::create_directories(root / "neg");
  fs::create_directories(root / "exp");
  fs::create_directories(root / "sin.default");
  std::ofstream(root / "neg" / "__init__.py") << "";
  std::ofstream(root / "neg" / "kernel.py") << "def neg_kernel_impl(x):\n    return -x\n";
  std::ofstream(root / "exp" / "a.py") << "";
  std::ofstream(root / "exp" / "b.py") << "";
  std::ofstream(root / "sin.default" / "sin.default.py") << "";
  std::ofstream(root / "sin.default" / "helpers.py") << "";
  const FolderScan s = scan_kernel_folder(root.string());
  // The folder's only source (besides __init__.py).
  const KernelSource* neg = find(s, "aten.neg.default");
  ASSERT_NE(neg, nullptr);
  EXPECT_EQ(fs::path(neg->source).filename(), "kernel.py");
  // The file named like its folder wins over a helper module beside it.
  const KernelSource* sin = find(s, "aten.sin.default");
  ASSERT_NE(sin, nullptr);
  EXPECT_EQ(fs::path(sin->source).filename(), "sin.default.py");
  // Two sources, neither named like the folder: skipped, with what to do.
  EXPECT_EQ(find(s, "aten.exp.default"), nullptr);
  ASSERT_EQ(s.ignored.size(), 1u);
  EXPECT_NE(s.ignored[0].find("exp/: several kernel sources (a.py, b.py); name the one to use"),
            std::string::npos)
      << s.ignored[0];
  crucible::remove_tree(std::filesystem::path(root).string());
}

}  // namespace
}  // namespace crucible::dir
