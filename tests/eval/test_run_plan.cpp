// The plan of a run (include/crucible/eval/run_plan.h): everything refusable is refused before
// any case runs, and the plan holds the run folder.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "crucible/core/error.h"
#include "crucible/eval/run_plan.h"
#include "sandbox/remove_tree.h"

namespace crucible {
namespace {

namespace fs = std::filesystem;

std::string fresh_dir(const std::string& name) {
  const fs::path p =
      fs::temp_directory_path() / ("crucible-plan-" + name + "-" + std::to_string(::getpid()));
  crucible::remove_tree(std::filesystem::path(p).string());
  return p.string();
}

RunOptions smoke_on_ref(const std::string& out) {
  RunOptions o;
  o.suite.suite = "smoke";
  o.suite.ops = {"relu.default"};
  o.backend = "ref";
  o.out = out;
  o.progress = false;
  return o;
}

TEST(RunPlan, AnUnknownBackendIsRefusedBeforeTheRunFolderExists) {
  const std::string out = fresh_dir("unknown");
  RunOptions o = smoke_on_ref(out);
  o.backend = "no-such-backend";
  try {
    make_run_plan(o);
    ADD_FAILURE() << "an unknown backend was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage) << e.what();
  }
  EXPECT_FALSE(fs::exists(out)) << "the run folder was made for a run that cannot start";
}

TEST(RunPlan, HoldsTheCasesTheManifestAndTheFolderLock) {
  const std::string out = fresh_dir("ok");
  {
    RunPlan plan = make_run_plan(smoke_on_ref(out));
    EXPECT_FALSE(plan.cases.empty());
    for (const SuiteCase& sc : plan.cases) EXPECT_EQ(sc.c.op, "aten.relu.default");
    EXPECT_EQ(plan.options.reference, "ref");
    EXPECT_EQ(plan.options.baseline, "ref");  // defaults filled: the baseline is the reference
    EXPECT_GT(plan.options.workers, 0);
    EXPECT_TRUE(fs::exists(out + "/manifest.json"));
    EXPECT_EQ(plan.results_path, out + "/results.jsonl");
    EXPECT_TRUE(plan.previous_results.empty());
    // A second run on the same folder is refused while this plan holds it.
    try {
      make_run_plan(smoke_on_ref(out));
      ADD_FAILURE() << "a second plan took a folder in use";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("is in use by another crucible run"), std::string::npos)
          << e.what();
    }
  }
  crucible::remove_tree(std::filesystem::path(out).string());
}

// On CUDA the default is 8 workers per GPU and 16 at most (contexts are created one at a time on
// the host); elsewhere the cores. Never more than the cores.
TEST(RunPlan, TheDefaultWorkersOnCudaAreAFewPerGpu) {
  EXPECT_EQ(default_workers(64, false, 0), 64);
  EXPECT_EQ(default_workers(64, false, 4), 64);
  EXPECT_EQ(default_workers(64, true, 0), 8);  // one GPU, not spread
  EXPECT_EQ(default_workers(64, true, 1), 8);
  EXPECT_EQ(default_workers(64, true, 2), 16);
  EXPECT_EQ(default_workers(64, true, 4), 16);
  EXPECT_EQ(default_workers(4, true, 4), 4);
}

TEST(RunPlan, TimingRunsOneWorkerPerGpuOnCudaAndOneOnTheCpu) {
  EXPECT_EQ(timing_workers(false, 0), 1);
  EXPECT_EQ(timing_workers(false, 4), 1);  // CPU timings need the machine to themselves
  EXPECT_EQ(timing_workers(true, 0), 1);   // one GPU, not spread
  EXPECT_EQ(timing_workers(true, 1), 1);
  EXPECT_EQ(timing_workers(true, 4), 4);
}

}  // namespace
}  // namespace crucible
