// Workers spread over GPUs (crucible/eval/gpus.h) and workers killed from outside: the device
// lists --gpus accepts and refuses, each worker slot shown its own device before anything in it
// could start CUDA (real worker processes here; no GPU needed), and a case whose worker is killed
// from outside run again instead of charged.
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "crucible/core/error.h"
#include "crucible/eval/gpus.h"
#include "crucible/eval/workers.h"
#include "sandbox/remove_tree.h"

namespace crucible {
namespace {

// Sets CUDA_VISIBLE_DEVICES for one test, restoring it after.
class VisibleDevices {
 public:
  explicit VisibleDevices(const char* value) {
    if (const char* old = std::getenv("CUDA_VISIBLE_DEVICES")) old_ = old, had_ = true;
    setenv("CUDA_VISIBLE_DEVICES", value, 1);
  }
  ~VisibleDevices() {
    if (had_)
      setenv("CUDA_VISIBLE_DEVICES", old_.c_str(), 1);
    else
      unsetenv("CUDA_VISIBLE_DEVICES");
  }

 private:
  std::string old_;
  bool had_ = false;
};

std::string usage_message(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(Gpus, VisibleDevicesAreTheEnvironmentsEntriesUpToTheFirstEmptyOne) {
  {
    VisibleDevices v("2,3");
    EXPECT_EQ(visible_gpus(), (std::vector<std::string>{"2", "3"}));
  }
  {
    VisibleDevices v("GPU-8f1d,1,,3");
    EXPECT_EQ(visible_gpus(), (std::vector<std::string>{"GPU-8f1d", "1"}));
  }
  {
    VisibleDevices v("");
    EXPECT_TRUE(visible_gpus().empty());
  }
}

TEST(Gpus, AutoSpreadsOverSeveralVisibleDevicesOnly) {
  {
    VisibleDevices v("0,1,2,3");
    EXPECT_EQ(plan_gpus("auto", ""), (std::vector<std::string>{"0", "1", "2", "3"}));
    // A backend that names its device keeps the environment as it is.
    EXPECT_TRUE(plan_gpus("auto", "aten:cuda:1").empty());
    EXPECT_EQ(plan_gpus("2,0", ""), (std::vector<std::string>{"2", "0"}));
    EXPECT_EQ(plan_gpus("all", "").size(), 4u);
  }
  {
    VisibleDevices v("0");
    EXPECT_TRUE(plan_gpus("auto", "").empty());
    EXPECT_EQ(plan_gpus("0", ""), (std::vector<std::string>{"0"}));
  }
}

TEST(Gpus, OnlyABackendThatNamesADeviceIndexNamesItsDevice) {
  EXPECT_TRUE(names_cuda_index("aten:cuda:1"));
  EXPECT_TRUE(names_cuda_index("aten:cuda:0"));
  EXPECT_FALSE(names_cuda_index("aten:cuda"));
  EXPECT_FALSE(names_cuda_index("aten"));
  // A kernel folder run on CUDA uses each worker's own GPU: --gpus spreads it.
  EXPECT_FALSE(names_cuda_index("dir:cuda:examples/python_kernels"));
  EXPECT_FALSE(names_cuda_index("dir:cuda:0"));
  EXPECT_FALSE(names_cuda_index("flag_gems"));
}

TEST(Gpus, ListsThatCannotMeanAnythingAreRefusedNamingTheFlag) {
  VisibleDevices v("0,1");
  std::string m = usage_message([] { plan_gpus("5", ""); });
  EXPECT_NE(m.find("--gpus"), std::string::npos) << m;
  EXPECT_NE(m.find("visible: 0,1"), std::string::npos) << m;
  m = usage_message([] { plan_gpus("0,0", ""); });
  EXPECT_NE(m.find("given twice"), std::string::npos) << m;
  m = usage_message([] { plan_gpus("0,,1", ""); });
  EXPECT_NE(m.find("empty entry"), std::string::npos) << m;
  m = usage_message([] { plan_gpus("all", "aten:cuda:1"); });
  EXPECT_NE(m.find("aten:cuda:1"), std::string::npos) << m;
  VisibleDevices none("");
  m = usage_message([] { plan_gpus("all", ""); });
  EXPECT_NE(m.find("no GPU is visible"), std::string::npos) << m;
}

TEST(Gpus, EachWorkerSlotSeesItsOwnDeviceAndAReplacementKeepsIt) {
  const std::vector<std::string> gpus{"0", "1", "2"};
  WorkerOptions wo;
  wo.workers = 4;
  wo.max_batch = 1;
  wo.timeout_s = 20;
  wo.on_worker_start = [&gpus] { assign_worker_gpu(gpus, worker_slot()); };
  // Job 5 kills its worker (a case that crashes): the slot's replacement must see the same GPU.
  WorkerPool pool(wo, [](size_t i) {
    if (i == 5) raise(SIGSEGV);
    return std::to_string(worker_slot()) + ":" + std::getenv("CUDA_VISIBLE_DEVICES");
  });
  std::map<size_t, std::string> reports;
  std::set<size_t> failed;
  std::vector<size_t> jobs;
  for (size_t i = 0; i < 40; ++i) jobs.push_back(i);
  pool.run(
      jobs, [&](size_t i, const std::string& p) { reports[i] = p; },
      [&](size_t i, const JobFailure&) { failed.insert(i); });
  EXPECT_EQ(failed, (std::set<size_t>{5}));
  ASSERT_EQ(reports.size(), 39u);
  std::set<int> slots;
  for (const auto& [i, p] : reports) {
    const int slot = std::stoi(p.substr(0, p.find(':')));
    slots.insert(slot);
    ASSERT_GE(slot, 0);
    ASSERT_LT(slot, 4);
    EXPECT_EQ(p.substr(p.find(':') + 1), gpus[static_cast<size_t>(slot) % 3]) << p;
  }
  EXPECT_GE(slots.size(), 2u);
  EXPECT_EQ(worker_slot(), -1);  // this process is no worker
}

TEST(Workers, ACaseWhoseWorkerIsKilledFromOutsideRunsAgainOnce) {
  const std::string marks =
      (std::filesystem::temp_directory_path() / ("crucible-kill-" + std::to_string(getpid())))
          .string();
  std::filesystem::create_directories(marks);
  WorkerOptions wo;
  wo.workers = 2;
  wo.max_batch = 4;
  wo.timeout_s = 20;
  // Job 3's worker is killed (SIGKILL, nothing said) the first time it runs it; job 7's every
  // time. Nothing is lost or reported twice: 3 passes on its second run, 7 is charged.
  WorkerPool pool(wo, [&marks](size_t i) {
    const std::string mark = marks + "/" + std::to_string(i);
    const bool again = std::filesystem::exists(mark);
    std::ofstream(mark) << "ran";
    if (i == 7 || (i == 3 && !again)) kill(getpid(), SIGKILL);
    return std::string("ok ") + std::to_string(i);
  });
  std::map<size_t, int> reported;
  std::map<size_t, std::string> failed;
  std::vector<size_t> jobs;
  for (size_t i = 0; i < 12; ++i) jobs.push_back(i);
  pool.run(
      jobs, [&](size_t i, const std::string&) { ++reported[i]; },
      [&](size_t i, const JobFailure& f) { failed[i] = f.detail; });
  crucible::remove_tree(std::filesystem::path(marks).string());
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_NE(failed[7].find("SIGKILL"), std::string::npos) << failed[7];
  EXPECT_EQ(reported.size(), 11u);
  for (const auto& [i, n] : reported) EXPECT_EQ(n, 1) << i;
  EXPECT_EQ(reported.count(3), 1u);
}

}  // namespace
}  // namespace crucible
