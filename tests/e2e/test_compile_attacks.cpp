// End-to-end: the attack sources of tests/fixtures/compile_attacks through the real binary. Each
// attack is one op's compile_error with a clear cause, the correct kernel next to them passes,
// and no secret the attacks reach for appears in any output: the console, results.jsonl, the
// summaries, the compiler's logs in the kernel cache.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <gtest/gtest.h>

#include "e2e/cli_helpers.h"
#include "sandbox/remove_tree.h"

namespace crucible::e2e {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSecret = "CRUCIBLE-E2E-SECRET-0d93af launch codes";

std::string all_text_under(const fs::path& root) {
  std::string s;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (it->is_regular_file(ec) && it->path().extension() != ".so")
      s += read_text(it->path().string());
  return s;
}

TEST(CompileAttacks, EachIsACompileErrorAndNoSecretLeaks) {
  const fs::path d = temp_dir("compile-attacks");
  const fs::path k = d / "kernels";
  fs::copy(fs::path(CRUCIBLE_SOURCE_DIR) / "tests/fixtures/compile_attacks", k,
           fs::copy_options::recursive);
  std::ofstream(d / "secret_outside.h") << kSecret << "\n";
  fs::create_symlink(d / "secret_outside.h", k / "exp.default" / "secret.h");
  ASSERT_EQ(mkfifo((k / "sin.default" / "hang.fifo").c_str(), 0600), 0);
  const fs::path out = d / "run", cache = d / "cache";

  // The timeout ends the attack that reads from a fifo; the right kernel must compile within
  // it under ctest's parallel load on two cores (3 s failed there once: the floor kernel's
  // compile was stopped).
  Output o = crucible_env(
      "CRUCIBLE_KERNEL_CACHE=" + shell_quote(cache.string()) +
          " CRUCIBLE_KERNEL_COMPILE_TIMEOUT=10",
      "run --suite smoke --dtypes f32 --workers 2 -q --backend dir:" + shell_quote(k.string()) +
          " --ops floor.default,abs.default,neg.default,exp.default,sin.default,sqrt.default,"
          "cos.default,tanh.default --out " +
          shell_quote(out.string()));
  ASSERT_EQ(o.status, 1) << o.out;

  std::map<std::string, std::string> status, detail;
  for (const auto& l : read_jsonl((out / "results.jsonl").string())) {
    if (l.value("record", "case") != "case") continue;
    const std::string op = l["op"];
    const std::string st = l["status"];
    status[op] = status.count(op) && status[op] != st ? "mixed" : st;
    detail[op] = l["detail"];
  }
  EXPECT_EQ(status["aten.floor.default"], "passed") << detail["aten.floor.default"];
  for (const char* op : {"abs", "neg", "exp", "sin", "sqrt", "cos", "tanh"}) {
    const std::string name = std::string("aten.") + op + ".default";
    EXPECT_EQ(status[name], "compile_error") << name << ": " << detail[name];
    EXPECT_NE(
        detail[name].find(std::string(op) + ".default/" + op + ".default.cpp did not compile"),
        std::string::npos)
        << detail[name];
  }
  for (const char* op : {"abs", "neg", "exp", "sqrt"}) {
    const std::string name = std::string("aten.") + op + ".default";
    EXPECT_NE(detail[name].find("the compiler said (kernel source text, not crucible's): "),
              std::string::npos)
        << detail[name];
    EXPECT_NE(detail[name].find("Permission denied"), std::string::npos) << detail[name];
  }
  EXPECT_NE(detail["aten.sin.default"].find("the compiler did not finish in 10 s"),
            std::string::npos)
      << detail["aten.sin.default"];
  EXPECT_LT(detail["aten.cos.default"].size(), 1500u) << detail["aten.cos.default"];

  // The manifest says how the kernels were compiled.
  nlohmann::json m = read_json((out / "manifest.json").string());
  EXPECT_NE(m.dump().find("compiled in a sandbox: landlock ABI"), std::string::npos) << m.dump();

  // No secret anywhere: console, run folder, kernel cache.
  std::string shadow = read_text("/etc/shadow");
  shadow = shadow.substr(0, shadow.find('\n'));
  const std::string everything = o.out + all_text_under(out) + all_text_under(cache);
  EXPECT_EQ(everything.find("0d93af"), std::string::npos);
  if (!shadow.empty()) {
    EXPECT_EQ(everything.find(shadow), std::string::npos);
  }
  // The forged escape sequence reaches neither the console nor the run's reports (the cache's
  // compile.log keeps the compiler's bytes as they were).
  EXPECT_EQ((o.out + all_text_under(out)).find('\x1b'), std::string::npos);
  crucible::remove_tree(std::filesystem::path(d).string());
}

TEST(CompileSandbox, DLPackFromItsOwnFolderIsOnTheIncludePathAndReadable) {
  // DLPack installed outside the compilers' own folders (a pip or conda environment): kernels
  // compile with -I on the folder crucible names, and the compile sandbox may read it.
  const fs::path d = temp_dir("dlpack-folder");
  fs::create_directories(d / "dlpack" / "dlpack");
  std::ofstream(d / "dlpack" / "dlpack" / "dlpack.h")
      << "#define CRUCIBLE_TEST_DLPACK_FOLDER 1\n#include_next <dlpack/dlpack.h>\n";
  const fs::path k = d / "kernels" / "neg.default";
  fs::create_directories(k);
  std::ofstream(k / "neg.default.cpp")
      << "#include <crucible/kernel.hpp>\n"
         "#ifndef CRUCIBLE_TEST_DLPACK_FOLDER\n#error DLPack was not taken from its "
         "folder\n#endif\n"
         "namespace ck = crucible::kernel;\n"
         "static int32_t neg(ck::Call& k) {\n"
         "  ck::Tensor x = k.tensor(0), out = k.output(0);\n"
         "  if (!ck::is_floating(x.dtype())) return k.unsupported(\"floating only\");\n"
         "  ck::for_each(out.shape(), {x.strides(), out.strides()},\n"
         "               [&](const int64_t* o) { out.store(o[1], -x.load(o[0])); });\n"
         "  return CRUCIBLE_OK;\n}\n"
         "CRUCIBLE_KERNEL(\"aten.neg.default\", neg)\n";
  const fs::path out = d / "run";
  Output o = crucible_env(
      "CRUCIBLE_KERNEL_CACHE=" + shell_quote((d / "cache").string()) +
          " CRUCIBLE_DLPACK_INCLUDE_DIR=" + shell_quote((d / "dlpack").string()),
      "run --suite smoke --dtypes f32 -q --backend dir:" + shell_quote((d / "kernels").string()) +
          " --ops neg.default --out " + shell_quote(out.string()));
  EXPECT_EQ(o.status, 0) << o.out;
  int cases = 0;
  for (const auto& l : read_jsonl((out / "results.jsonl").string())) {
    if (l.value("record", "case") != "case") continue;
    ++cases;
    EXPECT_EQ(l["status"], "passed") << l.dump();
  }
  EXPECT_GT(cases, 0);
}

}  // namespace
}  // namespace crucible::e2e
