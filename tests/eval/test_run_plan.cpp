// The plan of a run (include/crucible/eval/run_plan.h): everything refusable is refused before
// any case runs, and the plan holds the run folder.
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <fstream>

#include <nlohmann/json.hpp>

#include "backends/delegating_backend.h"
#include "crucible/core/error.h"
#include "crucible/eval/run_plan.h"
#include "eval/run_folder.h"
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

// --memory-limit auto: three quarters of the machine shared among the workers, in quarters of a
// GiB, never below 1 GiB.
TEST(RunPlan, TheDefaultMemoryLimitIsEachWorkersShareOfTheMachine) {
  constexpr size_t G = size_t{1} << 30;
  EXPECT_EQ(default_memory_limit(2, 24 * G), 9 * G);
  EXPECT_EQ(default_memory_limit(16, 128 * G), 6 * G);
  EXPECT_EQ(default_memory_limit(3, 16 * G), 4 * G);          // 4 GiB exactly
  EXPECT_EQ(default_memory_limit(5, 16 * G), 2 * G + G / 4);  // 2.4 GiB, down to 2.25
  EXPECT_EQ(default_memory_limit(64, 8 * G), G);              // the floor
  EXPECT_EQ(default_memory_limit(0, 8 * G), 6 * G);           // no workers counts as one
  const size_t here = usable_memory();
  EXPECT_GT(here, G / 2);
  // The machine's physical memory bounds it.
  EXPECT_LE(here, static_cast<size_t>(sysconf(_SC_PHYS_PAGES)) *
                      static_cast<size_t>(sysconf(_SC_PAGESIZE)));
}

// The correctness phase's workers share the cores; the timing phase (alone) uses --threads.
TEST(RunPlan, CorrectnessWorkersShareTheCores) {
  EXPECT_EQ(correctness_threads(64, 64, 64), 1);
  EXPECT_EQ(correctness_threads(64, 64, 16), 4);
  EXPECT_EQ(correctness_threads(2, 2, 2), 1);
  EXPECT_EQ(correctness_threads(2, 2, 1), 2);   // a single case: every core
  EXPECT_EQ(correctness_threads(3, 64, 8), 3);  // never above --threads
  EXPECT_EQ(correctness_threads(8, 4, 8), 1);   // more workers than cores
  EXPECT_EQ(correctness_threads(8, 4, 0), 4);
}

TEST(RunPlan, TimingRunsOneWorkerPerGpuOnCudaAndOneOnTheCpu) {
  EXPECT_EQ(timing_workers(false, 0), 1);
  EXPECT_EQ(timing_workers(false, 4), 1);  // CPU timings need the machine to themselves
  EXPECT_EQ(timing_workers(true, 0), 1);   // one GPU, not spread
  EXPECT_EQ(timing_workers(true, 1), 1);
  EXPECT_EQ(timing_workers(true, 4), 4);
}

// A backend that says it runs on CUDA (its calls are the reference's): a run with it as the
// candidate is a run on CUDA as the plan sees it.
class ClaimsCuda final : public DelegatingBackend {
 public:
  ClaimsCuda() : DelegatingBackend(BackendRegistry::instance().create("ref")) {}
  std::string name() const override { return "test-claims-cuda"; }
  Device device() const override { return Device::cuda(0); }
  bool has_op(const OpDef& op) const override { return inner_->has_op(op); }
};

// "% of peak" compares a call with the machine's peaks: the host's triad and f32 FLOP/s say
// nothing of a GPU's calls, so a --perf run on CUDA measures none and reports none; a run on
// the CPU measures them.
TEST(RunPlan, HostPeaksAreMeasuredOnlyForRunsOnTheCpu) {
  static const bool registered = [] {
    BackendRegistry::instance().add(
        {.name = "test-claims-cuda",
         .description = "a ref that says it runs on CUDA",
         .listed = false,
         .factory = [](const std::string&) { return std::make_unique<ClaimsCuda>(); }});
    return true;
  }();
  ASSERT_TRUE(registered);
  for (const bool cuda : {true, false}) {
    const std::string out = fresh_dir(cuda ? "peaks-cuda" : "peaks-cpu");
    RunOptions o = smoke_on_ref(out);
    o.backend = cuda ? "test-claims-cuda" : "ref";
    o.baseline = "ref";
    o.perf = true;
    RunPlan plan = make_run_plan(o);
    EXPECT_EQ(plan.on_cuda, cuda);
    std::ifstream f(out + "/manifest.json");
    const nlohmann::json m = nlohmann::json::parse(f);
    if (cuda) {
      EXPECT_EQ(plan.peaks.triad_gbps, 0.0);
      EXPECT_TRUE(m["machine"]["peaks"].is_null()) << m["machine"].dump();
      EXPECT_NE(m["machine"]["peaks_note"].get<std::string>().find("on CUDA"), std::string::npos);
    } else {
      EXPECT_GT(plan.peaks.triad_gbps, 0.0);
      EXPECT_TRUE(m["machine"]["peaks"].is_object()) << m["machine"].dump();
    }
    plan.lock.reset();
    crucible::remove_tree(out);
  }
}

}  // namespace
}  // namespace crucible
