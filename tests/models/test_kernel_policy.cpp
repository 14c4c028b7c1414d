// Kernel policies through the real binary: `fastest` keeps, per op, the fastest backend that is
// correct on the model's own calls (faulty's wrong add is rejected), caches its choices, and
// attributes every op; its trials run in a worker, so a kernel that crashes is only rejected;
// forcing the wrong add onto faulty fails the model; the judged step runs in a worker too, so a
// kernel that crashes there, or a step past its timeout, is the verdict.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "e2e/cli_helpers.h"

namespace crucible::e2e {
namespace {

TEST(KernelPolicy, FastestRejectsAWrongKernelAndAttributesEveryOp) {
  const std::string cache = temp_dir("policy") + "/cache.json";
  const std::string args =
      "models --run SmokeTestModel --backends faulty,cpu --policy fastest "
      "--policy-cache " +
      cache;
  Output o = crucible(args);
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_NE(o.out.find("verdict: passed"), std::string::npos) << o.out;
  // faulty's add.Tensor is off by a little: rejected on the model's own call.
  EXPECT_NE(o.out.find("faulty rejected: wrong at line"), std::string::npos) << o.out;
  for (const char* op : {"aten.mm.default", "aten.add.Tensor", "aten.relu.default",
                         "aten.threshold_backward.default", "aten.sum.dim_IntList"})
    EXPECT_NE(o.out.find(op), std::string::npos) << op << "\n" << o.out;
  EXPECT_TRUE(std::filesystem::exists(cache));
  o = crucible(args);
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_NE(o.out.find("fastest (cached in " + cache + ")"), std::string::npos) << o.out;
}

TEST(KernelPolicy, FastestSurvivesABackendWhoseKernelCrashes) {
  // faulty's neg dereferences a null pointer; Llama's rotary embeddings call neg. The trial
  // runs in a worker process: faulty is rejected for neg with the signal, and the model runs.
  const Output o = crucible("models --run Llama --backends faulty,cpu --policy fastest");
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_NE(o.out.find("verdict: passed"), std::string::npos) << o.out;
  const size_t neg = o.out.find("aten.neg.default");
  ASSERT_NE(neg, std::string::npos) << o.out;
  const std::string line = o.out.substr(neg, o.out.find('\n', neg) - neg);
  EXPECT_NE(line.find(" cpu "), std::string::npos) << line;
  EXPECT_NE(line.find("faulty rejected: crashed: the worker was killed by SIGSEGV"),
            std::string::npos)
      << line;
}

TEST(KernelPolicy, ForcingAWrongKernelFailsTheModel) {
  const Output o =
      crucible("models --run SmokeTestModel --backends cpu,faulty --force aten.add.Tensor=faulty");
  EXPECT_EQ(o.status, 1) << o.out;
  EXPECT_NE(o.out.find("aten.add.Tensor"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("forced"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("verdict: failed"), std::string::npos) << o.out;
}

TEST(KernelPolicy, AKernelThatCrashesInTheJudgedStepIsItsVerdict) {
  // faulty's neg dereferences a null pointer; forced onto Llama's rotary embeddings, it crashes
  // the judged step's worker: the run ends with the verdict and exit status 1, not a signal.
  const Output o = crucible(
      "models --run Llama --backends cpu,faulty --force aten.neg.default=faulty --timeout 120");
  EXPECT_EQ(o.status, 1) << o.out;
  EXPECT_NE(o.out.find("verdict: crashed: the worker was killed by SIGSEGV"), std::string::npos)
      << o.out;
  const size_t neg = o.out.find("aten.neg.default");
  ASSERT_NE(neg, std::string::npos) << o.out;
  const std::string line = o.out.substr(neg, o.out.find('\n', neg) - neg);
  EXPECT_NE(line.find("faulty"), std::string::npos) << line;
  EXPECT_NE(line.find("forced"), std::string::npos) << line;
}

TEST(KernelPolicy, AJudgedStepPastItsTimeoutIsTimedOut) {
  // A whole Llama training step with its f64 and baseline runs takes far longer than 1 ms.
  const Output o = crucible("models --run Llama --backends cpu --timeout 0.001");
  EXPECT_EQ(o.status, 1) << o.out;
  EXPECT_NE(o.out.find("verdict: timed_out"), std::string::npos) << o.out;
}

}  // namespace
}  // namespace crucible::e2e
