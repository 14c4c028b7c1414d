// End-to-end: a kernel folder of bad kernels (tests/fixtures/bad_kernels) through the real
// binary. Each kernel gets its own verdict with its cause, and the run evaluates all of them.
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "e2e/cli_helpers.h"

namespace crucible::e2e {
namespace {

struct Verdicts {
  std::map<std::string, std::multiset<std::string>> status;
  std::map<std::string, std::vector<std::string>> details;

  explicit Verdicts(const std::vector<nlohmann::json>& lines) {
    for (const auto& l : lines) {
      if (l.value("record", "case") != "case") continue;
      std::string op = l["op"];
      status[op].insert(l["status"].get<std::string>());
      details[op].push_back(l["detail"].get<std::string>());
    }
  }
  // Every case of `op` has status `s`.
  bool all(const std::string& op, const std::string& s) const {
    auto it = status.find(op);
    return it != status.end() && !it->second.empty() && it->second.count(s) == it->second.size();
  }
  bool any(const std::string& op, const std::string& s) const {
    auto it = status.find(op);
    return it != status.end() && it->second.count(s) > 0;
  }
  // Some case of `op` has status `s` and a detail holding `needle`.
  bool cause(const std::string& op, const std::string& needle) const {
    auto it = details.find(op);
    if (it == details.end()) return false;
    for (const std::string& d : it->second)
      if (d.find(needle) != std::string::npos) return true;
    return false;
  }
  std::string dump(const std::string& op) const {
    std::string s;
    auto st = status.find(op);
    if (st != status.end())
      for (const std::string& x : st->second) s += x + " ";
    auto it = details.find(op);
    if (it != details.end())
      for (size_t i = 0; i < it->second.size() && i < 3; ++i) s += "\n  " + it->second[i];
    return op + ": " + s;
  }
};

std::string fixture() { return std::string(CRUCIBLE_SOURCE_DIR) + "/tests/fixtures/bad_kernels"; }

// A kernel cache shared by the tests of this machine (content-addressed, so sharing is safe):
// a second run of the suite compiles nothing.
std::string kernel_cache() {
  return (std::filesystem::temp_directory_path() / "crucible-test-kernel-cache").string();
}

#ifdef CRUCIBLE_SANITIZED
constexpr const char* kTimeout = "4";
#else
constexpr const char* kTimeout = "0.5";  // the hanging kernel costs this per case
#endif

TEST(BadKernels, EachGetsItsOwnVerdictAndTheRunEvaluatesThemAll) {
  std::string out = temp_dir("bad-kernels");
  std::string ops =
      "relu.default,add_.Tensor,neg.default,abs.default,exp.default,sigmoid.default,"
      "tanh.default,sin.default,cos.default,sqrt.default,ceil.default,trunc.default,"
      "reciprocal.default,floor.default";
#ifndef CRUCIBLE_SANITIZED
  // Sanitizer builds run without the address-space limit that stops an unbounded allocation.
  ops += ",log.default";
#endif
  setenv("CRUCIBLE_KERNEL_CACHE", kernel_cache().c_str(), 1);
  Output o = crucible("run --suite opinfo --dtypes f32 --backend dir:" + shell_quote(fixture()) +
                      " --ops " + ops + " --timeout " + kTimeout +
                      " --memory-limit 1G --workers 2 -q --out " + out);
  unsetenv("CRUCIBLE_KERNEL_CACHE");
  ASSERT_EQ(o.status, 1) << o.out;
  // The folder that names no op is reported, and so is the kernel that does not compile.
  EXPECT_NE(o.out.find("ignored not_an_op.default/: 'not_an_op.default' is not an op"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("aten.reciprocal.default has no usable kernel"), std::string::npos) << o.out;

  Verdicts v(read_jsonl(out + "/results.jsonl"));
  // Identity relu: wrong on negative inputs.
  EXPECT_TRUE(v.any("aten.relu.default", "failed")) << v.dump("aten.relu.default");
  EXPECT_TRUE(v.cause("aten.relu.default", "wrong values in output 0"))
      << v.dump("aten.relu.default");
  // add_ that does nothing: judged on the argument it must mutate.
  EXPECT_TRUE(v.cause("aten.add_.Tensor", "mutated argument 'self'")) << v.dump("aten.add_.Tensor");
  // Writes outside the output, in front of it or behind it.
  EXPECT_TRUE(v.cause("aten.neg.default", "wrote past the end of output 0"))
      << v.dump("aten.neg.default");
  EXPECT_TRUE(v.cause("aten.abs.default", "wrote before the start of output 0"))
      << v.dump("aten.abs.default");
  // The last element left as crucible's poison.
  EXPECT_TRUE(v.cause("aten.exp.default", "unwritten")) << v.dump("aten.exp.default");
  // Writes into an input it must not change.
  EXPECT_TRUE(v.any("aten.sigmoid.default", "failed")) << v.dump("aten.sigmoid.default");
  EXPECT_TRUE(v.cause("aten.sigmoid.default", "wrote into input 'self'"))
      << v.dump("aten.sigmoid.default");
  // Returns its input.
  EXPECT_TRUE(v.any("aten.tanh.default", "failed")) << v.dump("aten.tanh.default");
  EXPECT_TRUE(v.cause("aten.tanh.default", "points at input 'self'"))
      << v.dump("aten.tanh.default");
  // Caches its first answer (crucible calls it first on decoy inputs).
  EXPECT_TRUE(v.cause("aten.sin.default", "result of an earlier call"))
      << v.dump("aten.sin.default");
  // Crashes, hangs and runaway allocations cost their own cases only.
  EXPECT_TRUE(v.all("aten.cos.default", "crashed")) << v.dump("aten.cos.default");
  EXPECT_TRUE(v.cause("aten.cos.default", "SIGSEGV")) << v.dump("aten.cos.default");
  EXPECT_TRUE(v.all("aten.sqrt.default", "timed_out")) << v.dump("aten.sqrt.default");
#ifndef CRUCIBLE_SANITIZED
  EXPECT_TRUE(v.all("aten.log.default", "memory_limit")) << v.dump("aten.log.default");
#endif
  // The sandbox stops the kernel that reaches for the network and the one that starts a program.
  EXPECT_TRUE(v.all("aten.ceil.default", "crashed")) << v.dump("aten.ceil.default");
  EXPECT_TRUE(v.cause("aten.ceil.default", "sandbox: blocked socket() (network access)"))
      << v.dump("aten.ceil.default");
  EXPECT_TRUE(v.all("aten.trunc.default", "crashed")) << v.dump("aten.trunc.default");
  EXPECT_TRUE(v.cause("aten.trunc.default", "sandbox: blocked")) << v.dump("aten.trunc.default");
  // The kernel that does not compile: every case, with the compiler's message.
  EXPECT_TRUE(v.all("aten.reciprocal.default", "compile_error"))
      << v.dump("aten.reciprocal.default");
  EXPECT_TRUE(v.cause("aten.reciprocal.default", "undeclared_bias"))
      << v.dump("aten.reciprocal.default");
  // ... and the correct kernel next to them all passes.
  EXPECT_TRUE(v.all("aten.floor.default", "passed")) << v.dump("aten.floor.default");
  // No bad kernel passes as a whole.
  for (const auto& [op, st] : v.status)
    if (op != "aten.floor.default") {
      EXPECT_FALSE(v.all(op, "passed")) << v.dump(op);
    }

  nlohmann::json m = read_json(out + "/manifest.json");
  EXPECT_NE(m["sandbox"].get<std::string>().find("seccomp"), std::string::npos) << m.dump();
}

TEST(BadKernels, BackendBenchSpellingsAndNoSandbox) {
  std::string out = temp_dir("bad-kernels-directory");
  setenv("CRUCIBLE_KERNEL_CACHE", kernel_cache().c_str(), 1);
  // Without the sandbox the socket kernel runs (and computes ceil correctly).
  Output o = crucible("run --suite smoke --dtypes f32 --backend directory --ops-directory " +
                      shell_quote(fixture()) +
                      " --ops ceil.default,floor.default --no-sandbox -q --out " + out);
  ASSERT_EQ(o.status, 0) << o.out;
  // BackendBench runs a folder's kernels on CUDA; where CUDA does not start, the CPU, said so.
  if (!gpu_visible()) {
    EXPECT_NE(o.out.find("CUDA does not start here"), std::string::npos) << o.out;
  }
  EXPECT_NE(o.out.find(gpu_visible() ? "run on CUDA, as BackendBench runs them"
                                     : "Python kernels run on the CPU (--backend dir:"),
            std::string::npos)
      << o.out;
  Verdicts v(read_jsonl(out + "/results.jsonl"));
  EXPECT_TRUE(v.all("aten.ceil.default", "passed")) << v.dump("aten.ceil.default");
  EXPECT_EQ(read_json(out + "/manifest.json")["sandbox"], "off");

  std::string out2 = temp_dir("bad-kernels-pregenerated");
  o = crucible("run --suite smoke --dtypes f32 --backend pregenerated --kernels-dir " +
               shell_quote(fixture()) + " --ops floor.default -q --out " + out2);
  unsetenv("CRUCIBLE_KERNEL_CACHE");
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_TRUE(Verdicts(read_jsonl(out2 + "/results.jsonl")).all("aten.floor.default", "passed"));

  o = crucible("run --backend directory --ops floor.default");
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.out.find("--backend directory needs --ops-directory <folder>"), std::string::npos)
      << o.out;
  o = crucible("run --backend ref --kernels-dir " + shell_quote(fixture()));
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.out.find("--kernels-dir goes with --backend pregenerated"), std::string::npos)
      << o.out;
}

// The acceptance command: the example kernels, compiled from their folder, pass.
TEST(KernelFolders, ExampleKernelsPassThroughTheDirBackend) {
  std::string out = temp_dir("examples-dir");
  setenv("CRUCIBLE_KERNEL_CACHE", kernel_cache().c_str(), 1);
  Output o = crucible(
      "run --suite opinfo --backend dir:" +
      shell_quote(std::string(CRUCIBLE_SOURCE_DIR) + "/examples/kernels") +
      " --ops relu.default,relu_.default,add.Tensor,add.Scalar,add.out,_softmax.default,mm.default "
      "-q --out " +
      out);
  unsetenv("CRUCIBLE_KERNEL_CACHE");
  ASSERT_EQ(o.status, 0) << o.out;
  Verdicts v(read_jsonl(out + "/results.jsonl"));
  for (const char* op :
       {"aten.relu.default", "aten.add.Tensor", "aten._softmax.default", "aten.mm.default"})
    EXPECT_TRUE(v.all(op, "passed")) << v.dump(op);
  EXPECT_NE(read_json(out + "/manifest.json")["sandbox"].get<std::string>().find("seccomp"),
            std::string::npos);
}

}  // namespace
}  // namespace crucible::e2e
