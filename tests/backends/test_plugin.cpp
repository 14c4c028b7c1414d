// The plugin backend: loading (entry point, version check, lazy loading), the supports hook,
// the guards around every kernel call (guard zones, poison, input mutation, output pointers,
// decoy calls) and the C ABI's outputs (data-dependent allocation, views). The plugins are
// tests/fixtures/plugins/*, built as MODULE libraries by cmake/kernel_abi.cmake.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "backends/plugin/kernel_library.h"
#include "crucible/backends/backend.h"
#include "crucible/cases/case.h"
#include "crucible/core/error.h"
#include "crucible/eval/evaluate.h"
#include "crucible/ops/materialize.h"

namespace crucible {
namespace {

std::string plugin_path(const std::string& name) {
  return std::string(CRUCIBLE_TEST_PLUGIN_DIR) + "/lib" + name + ".so";
}

CaseResult evaluate(Backend& candidate, const std::string& op, const std::string& call) {
  auto reference = BackendRegistry::instance().create("ref");
  const OpDef& d = OpRegistry::catalog().get(op);
  Case c;
  c.op = d.name;
  c.call = cases::parse_call(call, "test");
  c.seed = 7;
  return evaluate_case(c, d, *reference, candidate);
}

CaseResult evaluate(const std::string& plugin, const std::string& op, const std::string& call) {
  auto candidate = BackendRegistry::instance().create("plugin:" + plugin_path(plugin));
  return evaluate(*candidate, op, call);
}

std::string error_of(const std::function<void()>& f, ErrorKind* kind = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    if (kind) *kind = e.kind();
    return e.what();
  }
  return "";
}

TEST(PluginLoad, MissingLibraryIsAUsageErrorAtCreation) {
  ErrorKind kind = ErrorKind::Internal;
  std::string m = error_of(
      [] { BackendRegistry::instance().create("plugin:/nonexistent/libnothing.so"); }, &kind);
  EXPECT_EQ(kind, ErrorKind::Usage);
  EXPECT_NE(m.find("no such file '/nonexistent/libnothing.so'"), std::string::npos) << m;
  m = error_of([] { BackendRegistry::instance().create("plugin:"); }, &kind);
  EXPECT_NE(m.find("needs a library path"), std::string::npos) << m;
}

TEST(PluginLoad, ALibraryWithoutTheEntryPointIsRefused) {
  ErrorKind kind = ErrorKind::Internal;
  std::string m = error_of([] { load_plugin_library(plugin_path("no_entry"), nullptr); }, &kind);
  EXPECT_EQ(kind, ErrorKind::Input);
  EXPECT_NE(m.find("does not export crucible_plugin_v1()"), std::string::npos) << m;
}

TEST(PluginLoad, AnotherAbiVersionIsRefusedWithBothVersions) {
  std::string m = error_of([] { load_plugin_library(plugin_path("wrong_version"), nullptr); });
  EXPECT_NE(m.find("built for crucible kernel ABI version 999"), std::string::npos) << m;
  EXPECT_NE(m.find("this crucible speaks version 1"), std::string::npos) << m;
  EXPECT_NE(m.find("rebuild it"), std::string::npos) << m;
}

TEST(PluginLoad, ListsKernelsWithCatalogNames) {
  PluginInfo info;
  auto kernels = load_plugin_library(plugin_path("c_relu"), &info);
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0].op, "aten.relu.default");  // declared as "relu.default"
  EXPECT_NE(kernels[0].supports, nullptr);
  EXPECT_EQ(kernels[0].origin, plugin_path("c_relu"));
  EXPECT_EQ(info.name, "c-relu");
  EXPECT_EQ(info.version, "1.0");
}

TEST(PluginLoad, LoadsOnlyInCandidateProcessesAndReportsLoadErrorsAsVerdicts) {
  // The library is loaded in candidate processes only: never in the process that judges (this
  // one), neither when the backend is created nor when it runs...
  int loads = 0;
  auto b = make_kernel_backend("lazy", [&](const std::string&) {
    ++loads;
    return load_plugin_library(plugin_path("wrong_version"), nullptr);
  });
  EXPECT_EQ(b->name(), "lazy");
  // ... and every case fails with the cause.
  CaseResult r = evaluate(*b, "aten.relu.default", "((T([3], f32),), {})");
  EXPECT_EQ(r.status, Status::Failed);
  EXPECT_NE(r.detail.find("ABI version 999"), std::string::npos) << r.detail;
  r = evaluate(*b, "aten.relu.default", "((T([4], f32),), {})");
  EXPECT_EQ(r.status, Status::Failed);
  EXPECT_EQ(loads, 0);
}

TEST(PluginCAbi, APluginInPlainCRunsAndItsSupportsHookDecides) {
  CaseResult r = evaluate("c_relu", "aten.relu.default", "((T([5, 6], f32, stride=(1, 5)),), {})");
  EXPECT_EQ(r.status, Status::Passed) << r.detail;
  r = evaluate("c_relu", "aten.relu.default", "((T([5, 6], f64),), {})");
  EXPECT_EQ(r.status, Status::Unsupported);
  // The hook's reason is quoted as the kernel's words.
  EXPECT_EQ(r.detail, "«c_relu handles f32 tensors only» (the kernel's supports hook)");
  r = evaluate("c_relu", "aten.abs.default", "((T([5], f32),), {})");
  EXPECT_EQ(r.status, Status::Unsupported);
}

// `cause` is the start of the reason: a write past a buffer changes 1 to 4 guard bytes (a byte
// of the value written may equal the random guard byte it lands on).
struct GuardCase {
  const char* op;
  const char* call;
  const char* cause;
};

class PluginGuards : public ::testing::TestWithParam<GuardCase> {};

TEST_P(PluginGuards, EachFaultFailsWithItsCause) {
  const GuardCase& g = GetParam();
  CaseResult r = evaluate("bad_guards", g.op, g.call);
  EXPECT_EQ(r.status, Status::Failed) << g.op << ": " << r.detail;
  EXPECT_NE(r.detail.find(g.cause), std::string::npos) << g.op << ": " << r.detail;
}

INSTANTIATE_TEST_SUITE_P(
    Faults, PluginGuards,
    ::testing::Values(
        GuardCase{"aten.relu.default", "((T([4, 5], f32),), {})",
                  "wrote past the end of output 0: "},
        GuardCase{"aten.relu_.default", "((T([4, 5], f32),), {})",
                  "wrote past the end of mutated argument 'self': "},
        GuardCase{"aten.neg.default", "((T([4, 5], f32),), {})",
                  "wrote before the start of output 0: "},
        GuardCase{"aten.abs.default", "((T([4, 5], f32),), {})",
                  "left 1 of 20 element(s) of output 0 unwritten (the first at flat index 19)"},
        GuardCase{"aten.exp.default", "((T([4, 5], f32),), {})",
                  "wrote into input 'self', which the op must not mutate"},
        GuardCase{"aten.clone.default", "((T([4, 5], f32),), {})",
                  "output 0 points at input 'self'"},
        GuardCase{"aten.tanh.default", "((T([4, 5], f32),), {})",
                  "returned the result of an earlier call"}));

TEST(PluginOutputs, DataDependentOutputsAreAllocatedThroughTheCallback) {
  CaseResult r =
      evaluate("bad_guards", "aten.nonzero.default", "((T([6, 5], f32, fill='special'),), {})");
  EXPECT_EQ(r.status, Status::Passed) << r.detail;
  ASSERT_FALSE(r.checks.empty());
  EXPECT_GT(r.checks[0].numel, 0);
}

TEST(PluginOutputs, ViewOutputsAreMadeWithMakeView) {
  CaseResult r =
      evaluate("bad_guards", "aten.permute.default", "((T([2, 3, 4], f32), [2, 0, 1]), {})");
  EXPECT_EQ(r.status, Status::Passed) << r.detail;
}

TEST(PluginOutputs, ValuesThatLookLikeThePoisonAreNotUnwritten) {
  // -1 in i64 and 255 in u8 are all 0xFF bytes, the poison: a second call under another poison
  // shows the kernel wrote them.
  CaseResult r = evaluate("bad_guards", "aten.full.default", "(([3, 4], -1), {'dtype': i64})");
  EXPECT_EQ(r.status, Status::Passed) << r.detail;
  r = evaluate("bad_guards", "aten.full.default", "(([5], 255), {'dtype': u8})");
  EXPECT_EQ(r.status, Status::Passed) << r.detail;
}

TEST(PluginOutputs, NumberAndTensorListOutputs) {
  CaseResult r = evaluate("bad_guards", "aten.sym_size.int", "((T([2, 7], f32), -1), {})");
  EXPECT_EQ(r.status, Status::Passed) << r.detail;
  r = evaluate("bad_guards", "aten.sym_size.int", "((T([2, 7], f32), 2), {})");
  EXPECT_EQ(r.status, Status::Passed) << r.detail;
  EXPECT_TRUE(r.expected_error) << r.detail;
  r = evaluate("bad_guards", "aten.unbind_copy.int",
               "((T([3, 4, 5], f32, stride=(1, 15, 3)), 1), {})");
  EXPECT_EQ(r.status, Status::Passed) << r.detail;
  EXPECT_EQ(r.checks.size(), 4u);  // one compared tensor per slice
}

TEST(PluginOutputs, RepeatedCallsOnTheSameTensorsSkipTheGuards) {
  // The timing loop calls the kernel again and again on the same tensors: no decoy, no
  // checks (the caching kernel is only caught by its decoy call).
  auto b = BackendRegistry::instance().create("plugin:" + plugin_path("bad_guards"));
  const OpDef& abs = OpRegistry::catalog().get("aten.abs.default");
  Values args = materialize(abs, cases::parse_call("((T([8], f32),), {})", "test"), 1);
  EXPECT_THROW(b->run(abs, args), Error);  // first call: guarded, the unwritten element is found
  Values again = b->run(abs, args);        // same tensors: the fast path
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].tensor().shape(), Shape{8});
}

}  // namespace
}  // namespace crucible
