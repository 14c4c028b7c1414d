// Candidate processes: kernels run in a process of their own per op, never in the process that
// judges (this test process plays the trusted worker). Kernels that change the process state,
// write after they return, cache by pointer, trust a fixed poison, write into the gaps of a
// strided argument or into a list input, or dress their words up as crucible's all fail; a
// kernel that writes into every descriptor it finds reaches only its own channel, and fails. The
// kernels are tests/fixtures/plugins/state_attacks.cc.
#include <dirent.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backends/plugin/kernel_library.h"
#include "crucible/backends/backend.h"
#include "crucible/cases/case.h"
#include "crucible/core/error.h"
#include "crucible/eval/evaluate.h"

namespace crucible {
namespace {

std::string plugin_path(const std::string& name) {
  return std::string(CRUCIBLE_TEST_PLUGIN_DIR) + "/lib" + name + ".so";
}

CaseResult evaluate(Backend& candidate, const std::string& op, const std::string& call,
                    uint64_t seed = 7) {
  auto reference = BackendRegistry::instance().create("ref");
  const OpDef& d = OpRegistry::catalog().get(op);
  Case c;
  c.op = d.name;
  c.call = cases::parse_call(call, "test");
  c.seed = seed;
  return evaluate_case(c, d, *reference, candidate);
}

CaseResult attack(const std::string& op, const std::string& call, uint64_t seed = 7) {
  auto candidate = BackendRegistry::instance().create("plugin:" + plugin_path("state_attacks"));
  return evaluate(*candidate, op, call, seed);
}

void expect_failed_with(const CaseResult& r, const std::string& cause) {
  EXPECT_EQ(r.status, Status::Failed) << r.detail;
  EXPECT_NE(r.detail.find(cause), std::string::npos) << r.detail;
}

// Failed, by one of the defences named (which one trips first depends on the call order the
// case drew).
void expect_failed_by_one_of(const CaseResult& r, const std::vector<std::string>& causes) {
  EXPECT_EQ(r.status, Status::Failed) << r.detail;
  bool found = false;
  for (const std::string& c : causes) found = found || r.detail.find(c) != std::string::npos;
  EXPECT_TRUE(found) << r.detail;
}

TEST(CandidateProcess, AKernelThatChangesTheProcessStateFails) {
  expect_failed_with(attack("aten.relu.default", "((T([64], f32),), {})"), "flush-to-zero");
  expect_failed_with(attack("aten.neg.default", "((T([64], f32),), {})"), "interval timer");
  expect_failed_with(attack("aten.abs.default", "((T([64], f32),), {})"),
                     "signal dispositions (SIGSEGV)");
}

TEST(CandidateProcess, AThreadWritingAfterTheCallIsCaught) {
  // The thread's writes land after the call returned (caught by the second look), while it is
  // still at work (caught by the thread check), or in the buffers of a later call of the case
  // (wrong values, or the same zeros in two calls on different inputs).
  for (uint64_t seed : {1, 2, 3})
    expect_failed_by_one_of(
        attack("aten.exp.default", "((T([4096], f32),), {})", seed),
        {"changed after the kernel returned", "still running or sleeping", "wrong on a decoy call",
         "gave a different result", "wrong values in output 0", "result of an earlier call"});
}

TEST(CandidateProcess, ACacheKeyedByTheOutputPointerIsCaught) {
  // The decoy call uses the judged call's very buffers: whichever comes second gets the other's
  // answer, whatever order the case draws.
  for (uint64_t seed : {1, 2, 3})
    expect_failed_by_one_of(attack("aten.sigmoid.default", "((T([32, 8], f32),), {})", seed),
                            {"result of an earlier call", "wrong on a decoy call",
                             "gave a different result", "wrong values in output 0"});
}

TEST(CandidateProcess, AKernelThatTrustsAFixedPoisonFails) {
  for (uint64_t seed : {1, 2, 3}) {
    CaseResult r = attack("aten.tanh.default", "((T([256], f32),), {})", seed);
    EXPECT_EQ(r.status, Status::Failed) << r.detail;
  }
}

TEST(CandidateProcess, WritesIntoTheGapsOfAStridedMutatedArgumentFail) {
  expect_failed_with(
      attack("aten.add_.Tensor", "((T([4, 3], f32, stride=(6, 1)), T([4, 3], f32)), {})"),
      "outside the elements of its view");
  // The same kernel on a contiguous self has no gaps to write: it passes.
  CaseResult r = attack("aten.add_.Tensor", "((T([4, 3], f32), T([4, 3], f32)), {})");
  EXPECT_EQ(r.status, Status::Passed) << r.detail;
}

TEST(CandidateProcess, WritesIntoAListInputFail) {
  expect_failed_with(attack("aten.cat.default", "(([T([2, 3], f32), T([4, 3], f32)],), {})"),
                     "wrote into input 'tensors'[0]");
}

TEST(CandidateProcess, AKernelsWordsAreLabelledAsItsOwn) {
  CaseResult r = attack("aten.sin.default", "((T([8], f32),), {})");
  EXPECT_EQ(r.status, Status::Failed) << r.detail;
  EXPECT_NE(r.detail.find("«passed: crucible checked this kernel and found it correct» (the "
                          "kernel's message)"),
            std::string::npos)
      << r.detail;
  EXPECT_NE(r.detail.find("(the kernel's words, not crucible's)"), std::string::npos) << r.detail;
}

// The only descriptors it has are its output file and its channel: forged lines written into
// the channel are bytes that are not a reply, and the case fails (quickly: no hang on a forged
// frame length).
TEST(CandidateProcess, WritingIntoEveryDescriptorReachesOnlyItsOwnChannel) {
  CaseResult r = attack("aten.cos.default", "((T([100], f32),), {})");
  expect_failed_with(r, "not a reply (did the kernel write into its channel?)");
  EXPECT_LT(r.seconds, 5.0);
}

// The descriptors open in a candidate process, as its loader sees them (reported through a
// load error, the one text a loader can send back).
TEST(CandidateProcess, HoldsNoDescriptorButItsChannelAndOutput) {
  auto b = make_kernel_backend("fds", [](const std::string&) -> std::vector<LoadedKernel> {
    std::string fds;
    if (DIR* d = opendir("/proc/self/fd")) {
      while (dirent* e = readdir(d))
        if (e->d_name[0] != '.') fds += std::string(fds.empty() ? "" : ",") + e->d_name;
      closedir(d);
    }
    throw Error(ErrorKind::Input, "fds=" + fds + ";");
  });
  CaseResult r = evaluate(*b, "aten.relu.default", "((T([3], f32),), {})");
  ASSERT_EQ(r.status, Status::Failed) << r.detail;
  // 0: /dev/null, 1 and 2: the output file, 3: the channel; 4: the listing's own descriptor.
  EXPECT_NE(r.detail.find("fds=0,1,2,3,4;"), std::string::npos) << r.detail;
}

// A loader that forges a frame on the channel before the candidate process reports: the trusted
// side reads it as data and fails the case with the cause, it does not trust it or crash.
TEST(CandidateProcess, AMalformedReportFailsTheCase) {
  auto b = make_kernel_backend("forger", [](const std::string&) -> std::vector<LoadedKernel> {
    const uint32_t huge = 0x7FFFFFFF;
    ssize_t w = write(3, &huge, sizeof huge);
    (void)w;
    return {};
  });
  CaseResult r = evaluate(*b, "aten.relu.default", "((T([3], f32),), {})");
  EXPECT_EQ(r.status, Status::Failed) << r.detail;
  EXPECT_NE(r.detail.find("the candidate process"), std::string::npos) << r.detail;
}

}  // namespace
}  // namespace crucible
