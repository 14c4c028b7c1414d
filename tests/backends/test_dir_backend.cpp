// Kernel folders: folder names, the source picked in each, the compiler cache, and the backend
// (a kernel that does not compile costs only its own op).
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "backends/dir/elf_symbols.h"
#include "backends/dir/kernel_compiler.h"
#include "backends/dir/kernel_folder.h"
#include "crucible/backends/backend.h"
#include "crucible/core/error.h"
#include "crucible/ops/op.h"
#include "sandbox/remove_tree.h"

namespace crucible::dir {
namespace {

namespace fs = std::filesystem;

std::string fresh_dir(const std::string& name) {
  fs::path d =
      fs::temp_directory_path() / ("crucible-dir-" + name + "-" + std::to_string(getpid()));
  crucible::remove_tree(std::filesystem::path(d).string());
  fs::create_directories(d);
  return d.string();
}

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

const char* kRelu = R"(#include <crucible/kernel.hpp>
extern "C" int32_t relu_default_kernel_impl(crucible_call* call) {
  crucible::kernel::Call k(call);
  crucible::kernel::Tensor x = k.tensor(0), out = k.output(0);
  crucible::kernel::for_each(out.shape(), {x.strides(), out.strides()}, [&](const int64_t* o) {
    double v = x.load(o[0]);
    out.store(o[1], v < 0 ? 0.0 : v);
  });
  return CRUCIBLE_OK;
}
)";

const char* kBroken = R"(#include <crucible/kernel.hpp>
extern "C" int32_t add_Tensor_kernel_impl(crucible_call* call) { return not_declared_here(call); }
)";

TEST(DirFolderNames, DotsDoubleUnderscoresAndBaseNames) {
  std::string why;
  EXPECT_EQ(op_of_folder_name("relu.default", &why), "aten.relu.default");
  EXPECT_EQ(op_of_folder_name("aten.relu.default", &why), "aten.relu.default");
  EXPECT_EQ(op_of_folder_name("relu__default", &why), "aten.relu.default");
  EXPECT_EQ(op_of_folder_name("add___Tensor", &why), "aten.add_.Tensor");
  EXPECT_EQ(op_of_folder_name("add__Tensor", &why), "aten.add.Tensor");
  EXPECT_EQ(op_of_folder_name("relu", &why), "aten.relu.default");
  EXPECT_EQ(op_of_folder_name("add", &why), "");
  EXPECT_NE(why.find("add.Tensor"), std::string::npos) << why;
  EXPECT_EQ(op_of_folder_name("not_an_op.default", &why), "");
  EXPECT_NE(why.find("not an op in crucible's catalog"), std::string::npos) << why;
  EXPECT_EQ(op_of_folder_name("add.NoSuchOverload", &why), "");
  EXPECT_NE(why.find("add.Tensor"), std::string::npos) << why;
}

TEST(DirFolderNames, KernelFunctionNames) {
  EXPECT_EQ(kernel_impl_symbols("aten.relu.default"),
            (std::vector<std::string>{"relu__default_kernel_impl", "relu_default_kernel_impl",
                                      "relu_kernel_impl"}));
  EXPECT_EQ(kernel_impl_symbols("aten.add_.Tensor"),
            (std::vector<std::string>{"add___Tensor_kernel_impl", "add__Tensor_kernel_impl",
                                      "add__kernel_impl"}));
}

TEST(DirFolderScan, PicksOneSourcePerOpAndReportsTheRest) {
  fs::path d = fresh_dir("scan");
  write(d / "relu.default" / "relu.default.cpp", "");
  write(d / "relu.default" / "notes.txt", "");
  write(d / "neg__default" / "neg.default.cu", "");  // named like the op, a CUDA source
  write(d / "exp.default" / "kernel_v2.cc", "");     // the folder's only source
  write(d / "abs.default" / "a.cpp", "");
  write(d / "abs.default" / "b.cpp", "");      // two sources, neither named: ambiguous
  write(d / "sin.default" / "README.md", "");  // no source
  write(d / "bogus.op" / "bogus.op.cpp", "");  // not an op
  write(d / ".git" / "x.cpp", "");             // hidden: not looked at
  FolderScan s = scan_kernel_folder(d.string());
  ASSERT_EQ(s.kernels.size(), 3u);
  EXPECT_EQ(s.kernels[0].op, "aten.exp.default");
  EXPECT_EQ(fs::path(s.kernels[0].source).filename(), "kernel_v2.cc");
  EXPECT_EQ(s.kernels[1].op, "aten.neg.default");
  EXPECT_TRUE(s.kernels[1].cuda);
  EXPECT_EQ(s.kernels[2].op, "aten.relu.default");
  EXPECT_FALSE(s.kernels[2].cuda);
  EXPECT_TRUE(fs::path(s.kernels[2].source).is_absolute());
  ASSERT_EQ(s.ignored.size(), 3u);
  std::string all;
  for (const std::string& i : s.ignored) all += i + "\n";
  EXPECT_NE(all.find("abs.default/: several kernel sources (a.cpp, b.cpp)"), std::string::npos)
      << all;
  EXPECT_NE(all.find("bogus.op/: 'bogus.op' is not an op"), std::string::npos) << all;
  EXPECT_NE(all.find("sin.default/: no kernel source"), std::string::npos) << all;
  crucible::remove_tree(std::filesystem::path(d).string());
  try {
    scan_kernel_folder(d.string());
    FAIL() << "a missing folder must be a usage error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_NE(std::string(e.what()).find("no such folder"), std::string::npos) << e.what();
  }
}

TEST(DirCompiler, CachesByContentAndRecordsFailures) {
  fs::path d = fresh_dir("compile");
  CompilerConfig cfg = default_compiler_config();
  cfg.cache_dir = (d / "cache").string();
  write(d / "relu.default" / "relu.default.cpp", kRelu);
  write(d / "add.Tensor" / "add.Tensor.cpp", kBroken);
  std::vector<CompileJob> jobs = {{(d / "relu.default" / "relu.default.cpp").string(), false},
                                  {(d / "add.Tensor" / "add.Tensor.cpp").string(), false}};
  std::vector<CompileOutcome> first = compile_kernels(jobs, cfg);
  ASSERT_TRUE(first[0].ok) << first[0].diagnostics;
  EXPECT_FALSE(first[0].cached);
  EXPECT_TRUE(fs::exists(first[0].library));
  EXPECT_NE(first[0].command.find("relu.default.cpp"), std::string::npos) << first[0].command;
  EXPECT_FALSE(first[0].compiler.empty());
  std::vector<std::string> syms = exported_symbols(first[0].library);
  EXPECT_NE(std::find(syms.begin(), syms.end(), "relu_default_kernel_impl"), syms.end());
  EXPECT_FALSE(first[1].ok);
  EXPECT_NE(first[1].diagnostics.find("not_declared_here"), std::string::npos)
      << first[1].diagnostics;
  EXPECT_TRUE(fs::exists(first[1].log));

  // The same sources again: both from the cache, the failure too.
  std::vector<CompileOutcome> again = compile_kernels(jobs, cfg);
  EXPECT_TRUE(again[0].cached);
  EXPECT_EQ(again[0].library, first[0].library);
  EXPECT_TRUE(again[1].cached);
  EXPECT_FALSE(again[1].ok);
  EXPECT_NE(again[1].diagnostics.find("not_declared_here"), std::string::npos);

  // A change to the source, or to a header next to it, is a new library.
  write(d / "relu.default" / "relu.default.cpp", std::string(kRelu) + "// edited\n");
  CompileOutcome edited = compile_kernels({jobs[0]}, cfg)[0];
  EXPECT_FALSE(edited.cached);
  EXPECT_NE(edited.library, first[0].library);
  write(d / "relu.default" / "helper.h", "#pragma once\n");
  CompileOutcome with_header = compile_kernels({jobs[0]}, cfg)[0];
  EXPECT_FALSE(with_header.cached);
  EXPECT_NE(with_header.library, edited.library);
  crucible::remove_tree(std::filesystem::path(d).string());
}

TEST(DirBackend, OneOpThatDoesNotCompileLeavesTheOthersRunning) {
  fs::path d = fresh_dir("backend");
  write(d / "kernels" / "relu.default" / "relu.default.cpp", kRelu);
  write(d / "kernels" / "add.Tensor" / "add.Tensor.cpp", kBroken);
  setenv("CRUCIBLE_KERNEL_CACHE", (d / "cache").c_str(), 1);
  std::unique_ptr<Backend> b =
      BackendRegistry::instance().create("dir:" + (d / "kernels").string());
  unsetenv("CRUCIBLE_KERNEL_CACHE");
  EXPECT_TRUE(b->untrusted());
  EXPECT_NE(b->version().find("2 kernels (1 did not compile)"), std::string::npos) << b->version();
  const OpRegistry& cat = OpRegistry::catalog();
  const OpDef& relu = cat.get("aten.relu.default");
  const OpDef& add = cat.get("aten.add.Tensor");
  EXPECT_TRUE(b->has_op(relu));
  EXPECT_TRUE(b->has_op(add));
  EXPECT_FALSE(b->has_op(cat.get("aten.mul.Tensor")));

  Tensor x = Tensor::empty({4}, DType::Float32);
  for (int i = 0; i < 4; ++i) x.set(i, i % 2 ? i : -i - 0.5);
  Values out = b->run(relu, {Value(x)});
  ASSERT_EQ(out.size(), 1u);
  const Tensor& y = out[0].tensor();
  EXPECT_EQ(y.get(0), 0.0);
  EXPECT_EQ(y.get(1), 1.0);
  EXPECT_EQ(y.get(2), 0.0);
  EXPECT_EQ(y.get(3), 3.0);

  try {
    b->run(add, {Value(x), Value(x), Value(Scalar(1))});
    FAIL() << "a kernel that did not compile must raise a compile error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::CompileError);
    std::string m = e.what();
    EXPECT_NE(m.find("add.Tensor/add.Tensor.cpp did not compile"), std::string::npos) << m;
    EXPECT_NE(m.find("not_declared_here"), std::string::npos) << m;
    EXPECT_NE(m.find("full log: "), std::string::npos) << m;
  }
  crucible::remove_tree(std::filesystem::path(d).string());
}

}  // namespace
}  // namespace crucible::dir
