// End-to-end: CUDA kernel folders (tests/fixtures/cuda_kernels, one folder per behaviour)
// through the real binary, sandbox on. The kernels receive device tensors; crucible synchronises
// the whole device after each call, copies the device's arena back and runs the CPU's checks on
// it (guard zones, untouched inputs, values), and a device error fails its own case and retires
// the candidate process.
//
// GpuKernels.* need a CUDA device and skip with a message where none is visible (ctest label
// `gpu`: `ctest --test-dir build -L gpu --output-on-failure`, docs/gpu.md). CudaKernels.* run
// everywhere: the fixtures compile with nvcc (compile only), and without a GPU a .cu folder's
// cases say why CUDA could not start.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "backends/dir/dir_backend.h"
#include "e2e/cli_helpers.h"

namespace crucible::e2e {
namespace {

std::string fixture(const std::string& folder) {
  return std::string(CRUCIBLE_SOURCE_DIR) + "/tests/fixtures/cuda_kernels/" + folder;
}

std::string cache_dir() {
  return (std::filesystem::temp_directory_path() / "crucible-test-kernel-cache").string();
}

bool have_nvcc() {
  if (std::getenv("NVCC") || std::filesystem::exists("/usr/local/cuda/bin/nvcc")) return true;
  return std::system("command -v nvcc >/dev/null 2>&1") == 0;
}

#define REQUIRE_GPU()                                                                           \
  do {                                                                                          \
    if (!gpu_visible()) GTEST_SKIP() << "no CUDA device is visible (nvidia-smi -L lists none)"; \
    if (!have_nvcc()) GTEST_SKIP() << "no nvcc: .cu kernels cannot be compiled here";           \
  } while (0)

struct FolderRun {
  int status = -1;
  std::string out;
  std::map<std::string, std::multiset<std::string>> status_of;  // op -> statuses
  std::map<std::string, std::vector<std::string>> details;      // op -> details
  std::vector<nlohmann::json> timings;

  size_t count(const std::string& op, const std::string& s) const {
    auto it = status_of.find(op);
    return it == status_of.end() ? 0 : it->second.count(s);
  }
  size_t cases(const std::string& op) const {
    auto it = status_of.find(op);
    return it == status_of.end() ? 0 : it->second.size();
  }
  bool all(const std::string& op, const std::string& s) const {
    return cases(op) > 0 && count(op, s) == cases(op);
  }
  bool none_passed(const std::string& op) const {
    return cases(op) > 0 && count(op, "passed") == 0;
  }
  bool detail_has(const std::string& op, const std::string& needle) const {
    auto it = details.find(op);
    if (it == details.end()) return false;
    for (const std::string& d : it->second)
      if (d.find(needle) != std::string::npos) return true;
    return false;
  }
  std::string dump(const std::string& op) const {
    std::string s = op + ":";
    std::map<std::string, int> n;
    if (auto it = status_of.find(op); it != status_of.end())
      for (const std::string& st : it->second) ++n[st];
    for (const auto& [k, v] : n) s += " " + k + "=" + std::to_string(v);
    if (auto it = details.find(op); it != details.end()) {
      int shown = 0;
      for (const std::string& d : it->second)
        if (!d.empty() && shown++ < 3) s += "\n  " + d.substr(0, 500);
    }
    return s + "\n" + out.substr(0, 2000);
  }
};

FolderRun collect(const Output& o, const std::string& out);

// `crucible run` over a fixture folder (sandbox on, default memory limit), f32 cases.
FolderRun run(const std::string& folder, const std::string& ops, const std::string& extra = "") {
  const std::string out = temp_dir("gpu-" + folder);
  Output o = crucible_env("CRUCIBLE_KERNEL_CACHE=" + shell_quote(cache_dir()),
                          "run --suite opinfo --backend dir:" + shell_quote(fixture(folder)) +
                              " --ops " + ops + " --dtypes f32 --timeout 30 --workers 2 -q " +
                              extra + " --out " + out);
  return collect(o, out);
}

// The statuses and details of a finished run's folder.
FolderRun collect(const Output& o, const std::string& out) {
  FolderRun r;
  r.status = o.status;
  r.out = o.out;
  std::ifstream f(out + "/results.jsonl");
  std::string line;
  while (std::getline(f, line)) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) continue;
    if (j.value("record", "case") == "timing") {
      r.timings.push_back(j);
      continue;
    }
    if (j.value("record", "case") != "case" || !j.contains("op")) continue;
    const std::string op = j["op"].get<std::string>();
    r.status_of[op].insert(j.value("status", ""));
    r.details[op].push_back(j.value("detail", ""));
  }
  return r;
}

// ---- everywhere ---------------------------------------------------------------------------

TEST(CudaKernels, TheFixturesCompileWithNvcc) {
  if (!have_nvcc()) GTEST_SKIP() << "no nvcc on this machine";
  setenv("CRUCIBLE_KERNEL_CACHE", cache_dir().c_str(), 1);
  for (const char* folder : {"right", "wrong", "side_stream", "early_return", "past_output",
                             "into_input", "illegal_address", "timing_skip"}) {
    auto b = make_dir_backend(std::string("dir:") + fixture(folder));
    EXPECT_NE(b->version().find("(0 did not compile)"), std::string::npos)
        << folder << ": " << b->version();
  }
}

TEST(CudaKernels, WithoutAGpuEveryCaseSaysWhyCudaCouldNotStart) {
  if (!have_nvcc()) GTEST_SKIP() << "no nvcc on this machine";
  if (gpu_visible()) GTEST_SKIP() << "a GPU is visible: GpuKernels.* cover this folder";
  const FolderRun r = run("right", "relu.default");
  EXPECT_TRUE(r.status == 0 || r.status == 1) << r.out;
  EXPECT_TRUE(r.none_passed("aten.relu.default")) << r.dump("aten.relu.default");
  EXPECT_EQ(r.count("aten.relu.default", "crashed"), 0u) << r.dump("aten.relu.default");
  EXPECT_TRUE(r.detail_has("aten.relu.default", "cannot start CUDA in the kernel's process"))
      << r.dump("aten.relu.default");
}

// ---- on a GPU -----------------------------------------------------------------------------

// The aten backend on CUDA, called with host tensors, copies each result to the host. A
// composition's intermediate results are freed during the call; their storages' addresses were
// reused by later results, and a later output was read from an earlier one's copy (wrong values
// in output 1 of these ops, in some runs and not others). One worker, so that the run is the same
// sequence of allocations each time.
TEST(GpuKernels, AtenCudaReadsEveryOutputOfACompositionFromItsOwnMemory) {
  if (!gpu_visible()) GTEST_SKIP() << "no CUDA device is visible (nvidia-smi -L lists none)";
  const std::string out = temp_dir("gpu-aten-composition");
  const Output o = crucible(
      "run --suite opinfo --backend aten:cuda --workers 1 -q --history none --ops "
      "_scaled_dot_product_flash_attention_for_cpu,"
      "_scaled_dot_product_flash_attention_for_cpu_backward --out " +
      out);
  const FolderRun r = collect(o, out);
  for (const char* op : {"aten._scaled_dot_product_flash_attention_for_cpu.default",
                         "aten._scaled_dot_product_flash_attention_for_cpu_backward.default"})
    EXPECT_TRUE(r.all(op, "passed")) << r.dump(op);
}

TEST(GpuKernels, RightKernelsPassOnDeviceTensors) {
  REQUIRE_GPU();
  const FolderRun r = run("right", "relu.default,add.Tensor");
  EXPECT_TRUE(r.all("aten.relu.default", "passed")) << r.dump("aten.relu.default");
  // add.Tensor: f32 tensor + tensor cases pass; others (a Scalar other) are unsupported.
  EXPECT_GT(r.count("aten.add.Tensor", "passed"), 0u) << r.dump("aten.add.Tensor");
  EXPECT_EQ(r.count("aten.add.Tensor", "passed") + r.count("aten.add.Tensor", "unsupported"),
            r.cases("aten.add.Tensor"))
      << r.dump("aten.add.Tensor");
}

TEST(GpuKernels, WrongValuesFail) {
  REQUIRE_GPU();
  const FolderRun r = run("wrong", "relu.default");
  EXPECT_GT(r.count("aten.relu.default", "failed"), 0u) << r.dump("aten.relu.default");
  EXPECT_EQ(r.count("aten.relu.default", "crashed"), 0u) << r.dump("aten.relu.default");
}

TEST(GpuKernels, AKernelOnItsOwnStreamIsJudgedOnItsFinishedWork) {
  REQUIRE_GPU();
  const FolderRun r = run("side_stream", "relu.default");
  EXPECT_TRUE(r.all("aten.relu.default", "passed")) << r.dump("aten.relu.default");
}

TEST(GpuKernels, AKernelThatReturnsBeforeItsWorkIsDoneIsJudgedOnItsFinishedWork) {
  REQUIRE_GPU();
  const FolderRun r = run("early_return", "relu.default");
  EXPECT_TRUE(r.all("aten.relu.default", "passed")) << r.dump("aten.relu.default");
}

TEST(GpuKernels, AWritePastTheOutputHitsTheDeviceGuardZone) {
  REQUIRE_GPU();
  const FolderRun r = run("past_output", "relu.default");
  const std::string op = "aten.relu.default";
  // (Its cases on empty tensors write nothing and may pass.)
  EXPECT_GT(r.count(op, "failed"), 0u) << r.dump(op);
  EXPECT_EQ(r.count(op, "crashed"), 0u) << r.dump(op);
  EXPECT_TRUE(r.detail_has(op, "guard")) << r.dump(op);
}

TEST(GpuKernels, AWriteIntoAnInputIsSeenInTheDeviceCopy) {
  REQUIRE_GPU();
  const FolderRun r = run("into_input", "relu.default");
  const std::string op = "aten.relu.default";
  // (Its cases on empty tensors write nothing and may pass.)
  EXPECT_GT(r.count(op, "failed"), 0u) << r.dump(op);
  EXPECT_EQ(r.count(op, "crashed"), 0u) << r.dump(op);
  EXPECT_TRUE(r.detail_has(op, "input")) << r.dump(op);
}

TEST(GpuKernels, AnIllegalAddressFailsItsOwnCasesOnly) {
  REQUIRE_GPU();
  const FolderRun r = run("illegal_address", "relu.default,add.Tensor");
  const std::string op = "aten.relu.default";
  // (Its cases on empty tensors launch nothing and may pass.)
  EXPECT_GT(r.count(op, "failed"), 0u) << r.dump(op);
  EXPECT_EQ(r.count(op, "crashed"), 0u) << r.dump(op);
  EXPECT_TRUE(r.detail_has(op, "the device reported an error")) << r.dump(op);
  // Its neighbour in the folder, a right kernel, is not disturbed by the broken context.
  EXPECT_GT(r.count("aten.add.Tensor", "passed"), 0u) << r.dump("aten.add.Tensor");
  EXPECT_EQ(r.count("aten.add.Tensor", "failed"), 0u) << r.dump("aten.add.Tensor");
}

TEST(GpuKernels, TimedWithDeviceEventsThatCoverEveryStream) {
  REQUIRE_GPU();
  const FolderRun r = run("side_stream", "relu.default", "--perf");
  ASSERT_TRUE(r.all("aten.relu.default", "passed")) << r.dump("aten.relu.default");
  ASSERT_FALSE(r.timings.empty()) << r.out.substr(0, 2000);
  for (const nlohmann::json& t : r.timings) {
    EXPECT_EQ(t.value("error", ""), "") << t.dump();
    // Every call on a non-empty tensor spins about a millisecond on its own stream before it
    // writes: a timer that saw only crucible's stream, or only the host function, would report
    // microseconds.
    if (t.value("bytes", 0.0) > 0) {
      ASSERT_TRUE(t.contains("candidate")) << t.dump();
      EXPECT_GT(t["candidate"].value("median_s", 0.0), 2e-4) << t.dump();
    }
  }
}

TEST(GpuKernels, RightKernelsAreTimedWithoutError) {
  REQUIRE_GPU();
  const FolderRun r = run("right", "relu.default,add.Tensor", "--perf");
  ASSERT_FALSE(r.timings.empty()) << r.out.substr(0, 2000);
  for (const nlohmann::json& t : r.timings) {
    EXPECT_EQ(t.value("error", ""), "") << t.dump();
    ASSERT_TRUE(t.contains("candidate")) << t.dump();
    EXPECT_GT(t["candidate"].value("median_s", 0.0), 0.0) << t.dump();
  }
}

// Skips its work from the third consecutive call on the same addresses, as the timed calls
// make them: its judged calls are right (the case passes), its timing is an error.
// Runs one case of the timing_skip folder with --perf: the case passes, its timing is an error
// naming the skipped work, and it gets no speed-up.
void expect_skipped_work_caught(const std::string& op, const std::string& call) {
  const std::string out = temp_dir("gpu-timing_skip");
  Output o = crucible_env("CRUCIBLE_KERNEL_CACHE=" + shell_quote(cache_dir()),
                          "run --op " + op + " --case '" + call +
                              "' --backend dir:" + shell_quote(fixture("timing_skip")) +
                              " --perf --timeout 30 --workers 1 -q --history none --out " + out);
  const FolderRun r = collect(o, out);
  ASSERT_TRUE(r.all("aten." + op, "passed")) << r.dump("aten." + op);
  ASSERT_EQ(r.timings.size(), 1u) << r.out.substr(0, 2000);
  EXPECT_NE(r.timings[0].value("error", "").find("skipped or changed its work while it was timed"),
            std::string::npos)
      << r.timings[0].dump();
  EXPECT_FALSE(r.timings[0].contains("speedup") && r.timings[0]["speedup"].get<double>() > 0)
      << r.timings[0].dump();
}

TEST(GpuKernels, SkippingWorkWhileTimedIsATimingError) {
  REQUIRE_GPU();
  expect_skipped_work_caught("relu.default", "((T([64, 64], f32),), {})");
}

// An out= argument stays on the device between timed calls like a fresh output: it is copied
// back, judged and poisoned there too.
TEST(GpuKernels, SkippingWorkOnAnOutArgumentWhileTimedIsATimingError) {
  REQUIRE_GPU();
  expect_skipped_work_caught("abs.out", "((T([64, 64], f32),), {\"out\": T([64, 64], f32)})");
}

// ---- Triton kernels: Python kernels on device tensors (--backend dir:cuda:<folder>) ----------

std::string triton_fixture() {
  return std::string(CRUCIBLE_SOURCE_DIR) + "/tests/fixtures/triton_kernels";
}

// Whether the Python that runs kernels ($CRUCIBLE_PYTHON, else python3) imports Triton.
bool python_has_triton() {
  const char* py = std::getenv("CRUCIBLE_PYTHON");
  const std::string exe = py && *py ? py : "python3";
  return std::system((shell_quote(exe) + " -c 'import triton' >/dev/null 2>&1").c_str()) == 0;
}

TEST(TritonKernels, PythonKernelsOnCudaWithoutAGpuAreRefusedAtStart) {
  if (gpu_visible()) GTEST_SKIP() << "a GPU is visible: TritonKernels.EachKernel... covers it";
  const std::string out = temp_dir("triton-no-gpu");
  Output o = crucible("run --suite traces:" + shell_quote(triton_fixture() + "/cases.txt") +
                      " --backend dir:cuda:" + shell_quote(triton_fixture()) + " -q --out " + out);
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_NE(o.out.find("its Python kernels run on CUDA, and CUDA does not start here"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("--backend dir:"), std::string::npos) << o.out;  // the way out
}

TEST(TritonKernels, EachKernelGetsItsVerdictOnDeviceTensors) {
  if (!gpu_visible()) GTEST_SKIP() << "no CUDA device is visible (nvidia-smi -L lists none)";
  if (!python_has_triton()) GTEST_SKIP() << "the kernels' Python has no Triton";
  const std::string out = temp_dir("triton-kernels");
  Output o = crucible("run --suite traces:" + shell_quote(triton_fixture() + "/cases.txt") +
                      " --backend dir:cuda:" + shell_quote(triton_fixture()) +
                      " --timeout 120 --workers 2 -q --out " + out);
  const FolderRun r = collect(o, out);
  // Right: plain, on a side stream returned without waiting, and returned before its work.
  for (const char* op : {"aten.relu.default", "aten.abs.default", "aten.neg.default"})
    EXPECT_TRUE(r.all(op, "passed")) << r.dump(op);
  EXPECT_TRUE(r.all("aten.add.Tensor", "failed")) << r.dump("aten.add.Tensor");
  EXPECT_TRUE(r.detail_has("aten.add.Tensor", "wrong values")) << r.dump("aten.add.Tensor");
  EXPECT_TRUE(r.none_passed("aten.sigmoid.out")) << r.dump("aten.sigmoid.out");
  EXPECT_TRUE(r.all("aten.tanh.default", "failed")) << r.dump("aten.tanh.default");
  EXPECT_TRUE(r.detail_has("aten.tanh.default", "ValueError: tanh kernel refuses"))
      << r.dump("aten.tanh.default");
}

}  // namespace
}  // namespace crucible::e2e
