// `--sanitize memcheck` through the real binary: the failing cases run again alone under a memory
// checker (valgrind for CPU candidates, compute-sanitizer for CUDA ones), whose trimmed report
// lands in the case's detail; the passing cases are not run again; a checker that is not
// installed, or another --sanitize value, is refused at start (exit status 2).
//
// Sanitize.* run valgrind for real (Debian's package valgrind). SanitizeGpu.* need a CUDA device
// and compute-sanitizer and skip with a message where no GPU is visible (ctest label `gpu`).
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "e2e/cli_helpers.h"
#include "eval/sanitize.h"

namespace crucible::e2e {
namespace {

std::string fixture(const std::string& path) {
  return std::string(CRUCIBLE_SOURCE_DIR) + "/tests/fixtures/" + path;
}

std::string cache_env() {
  return "CRUCIBLE_KERNEL_CACHE=" +
         shell_quote(
             (std::filesystem::temp_directory_path() / "crucible-test-kernel-cache").string());
}

// op -> its case record.
std::map<std::string, nlohmann::json> cases_by_op(const std::string& out) {
  std::map<std::string, nlohmann::json> by_op;
  for (const nlohmann::json& j : read_jsonl(out + "/results.jsonl"))
    if (j.value("record", "") == "case") by_op[j.value("op", "")] = j;
  return by_op;
}

TEST(Sanitize, AKernelThatReadsPastItsScratchCarriesValgrindsReportAndARightOneIsNotRunAgain) {
  const std::string out = temp_dir("sanitize-valgrind");
  const Output o = crucible_env(
      cache_env(), "run --suite traces:" + shell_quote(fixture("memcheck_kernels/cases.txt")) +
                       " --backend dir:" + shell_quote(fixture("memcheck_kernels")) +
                       " --sanitize memcheck --workers 2 --timeout 20 -q --history none --out " +
                       out);
  EXPECT_EQ(o.status, 1) << o.out;
  auto by_op = cases_by_op(out);
  ASSERT_EQ(by_op.size(), 2u) << o.out;
  const nlohmann::json& relu = by_op["aten.relu.default"];
  const nlohmann::json& neg = by_op["aten.neg.default"];
  EXPECT_EQ(relu.value("status", ""), "failed") << relu.dump(2);
  EXPECT_EQ(neg.value("status", ""), "passed") << neg.dump(2);
  const std::string detail = relu.value("detail", "");
  EXPECT_NE(detail.find("memcheck (valgrind --tool=memcheck), the case run again alone: failed"),
            std::string::npos)
      << detail;
  EXPECT_NE(detail.find("Invalid read of size 4"), std::string::npos) << detail;
  EXPECT_NE(detail.find("relu_from_scratch_reading_past_its_end"), std::string::npos) << detail;
  EXPECT_NE(detail.find("0 bytes after a block of size 32 alloc'd"), std::string::npos) << detail;
  EXPECT_NE(detail.find("by ... (crucible's own frames)"), std::string::npos) << detail;
  EXPECT_EQ(detail.find("run_kernel_host"), std::string::npos) << "crucible's frames cut";
  EXPECT_LT(detail.size(), 3000u) << "the report is trimmed";
  EXPECT_EQ(neg.value("detail", "").find("memcheck"), std::string::npos);
  // Only the failing case ran again: one folder under sanitize/, named by its case id.
  std::vector<std::string> reruns;
  for (const auto& e : std::filesystem::directory_iterator(out + "/sanitize"))
    reruns.push_back(e.path().filename().string());
  ASSERT_EQ(reruns.size(), 1u);
  EXPECT_EQ(reruns[0], relu.value("case_id", ""));
  // The reports carry the detail too.
  EXPECT_NE(read_text(out + "/junit.xml").find("Invalid read of size 4"), std::string::npos);
}

TEST(Sanitize, AMissingCheckerIsRefusedAtStartNamingItsPackage) {
  const std::string out = temp_dir("sanitize-missing");
  Output o = crucible_env("PATH=/nonexistent",
                          "run --backend ref --op relu.default --case '((T([4], f32),), {})' "
                          "--sanitize memcheck -q --history none --out " +
                              out + "/a");
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_NE(o.out.find("valgrind is not installed"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("package valgrind"), std::string::npos) << o.out;
  EXPECT_FALSE(std::filesystem::exists(out + "/a/results.jsonl")) << "refused before any case";

  o = crucible_env("PATH=/nonexistent CUDA_HOME=/nonexistent " + cache_env(),
                   "run --backend dir:" + shell_quote(fixture("cuda_kernels/right")) +
                       " --op relu.default --case '((T([4], f32),), {})' --sanitize memcheck -q "
                       "--history none --out " +
                       out + "/b");
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_NE(o.out.find("compute-sanitizer is not installed"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("cuda-sanitizer"), std::string::npos) << o.out;
}

TEST(Sanitize, AnotherCheckerIsRefusedWithTheValidValues) {
  const Output o = crucible("run --backend ref --ops relu --sanitize asan -q --history none");
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_NE(o.out.find("--sanitize asan"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("valid: memcheck"), std::string::npos) << o.out;
}

// The trimming, on the checkers' own output formats.
TEST(Sanitize, ReportsAreTrimmedToTheirErrorsEachOnce) {
  const std::string log =
      "==71== Memcheck, a memory error detector\n"
      "==71== Command: crucible run\n"
      "==71== \n"
      "==71== Invalid read of size 4\n"
      "==71==    at 0x4849A2C: f (k.cpp:12)\n"
      "==71==    by 0x4849B00: relu_kernel_impl (k.cpp:20)\n"
      "==71==    by 0xAFAA1F: crucible::run_kernel_host(int) (kernel_host.cpp:738)\n"
      "==71==    by 0xAEFBEE: crucible::CandidateProcess::child_main() (candidate_process.cpp:68)\n"
      "==71==  Address 0x5e4a0d0 is 0 bytes after a block of size 16 alloc'd\n"
      "==71==    at 0x48407B4: malloc (vg_replace_malloc.c:381)\n"
      "==71== \n"
      "==71== HEAP SUMMARY:\n"
      "==71==     in use at exit: 0 bytes in 0 blocks\n"
      "==71== ERROR SUMMARY: 1 errors from 1 contexts (suppressed: 0 from 0)\n";
  std::string other = log;  // the same error in another process, at other addresses
  for (char& c : other)
    if (c == '7') c = '8';
  const std::string r = valgrind_errors({log, other});
  EXPECT_EQ(r,
            "Invalid read of size 4\n"
            "   at 0x4849A2C: f (k.cpp:12)\n"
            "   by 0x4849B00: relu_kernel_impl (k.cpp:20)\n"
            "   by ... (crucible's own frames)\n"
            " Address 0x5e4a0d0 is 0 bytes after a block of size 16 alloc'd\n"
            "   at 0x48407B4: malloc (vg_replace_malloc.c:381)");
  const std::string cs =
      "========= COMPUTE-SANITIZER\n"
      "========= Invalid __global__ write of size 4 bytes\n"
      "=========     at relu_kernel(const float *, float *, long long, Layout)+0x2d0\n"
      "=========     by thread (1,0,0) in block (0,0,0)\n"
      "=========     Address 0x14 is out of bounds\n"
      "=========     Saved host backtrace up to driver entry point at kernel launch time\n"
      "=========         Host Frame: [0x1] in libcuda.so\n"
      "=========         Host Frame: [0x2] in libcuda.so\n"
      "=========         Host Frame: [0x3] in libcuda.so\n"
      "=========         Host Frame: [0x4] in libcuda.so\n"
      "=========         Host Frame: [0x5] in libcuda.so\n"
      "=========         Host Frame: [0x6] in libcuda.so\n"
      "=========         Host Frame: [0x7] in libcuda.so\n"
      "========= \n"
      "========= Invalid __global__ write of size 4 bytes\n"
      "=========     at relu_kernel(const float *, float *, long long, Layout)+0x2d0\n"
      "=========     by thread (1,0,0) in block (0,0,0)\n"
      "=========     Address 0x18 is out of bounds\n"
      "========= \n"
      "========= ERROR SUMMARY: 2 errors\n";
  const std::string s = sanitizer_errors(cs);
  EXPECT_EQ(s.find("COMPUTE-SANITIZER"), std::string::npos) << s;
  EXPECT_NE(s.find("Invalid __global__ write of size 4 bytes\n    at relu_kernel"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("[0x6]"), std::string::npos) << s;
  EXPECT_EQ(s.find("[0x7]"), std::string::npos) << "host frames capped: " << s;
  EXPECT_EQ(s.find("0x18"), std::string::npos) << "the repeat at another address once: " << s;
  // Capped in size, saying how many were left out.
  std::string many;
  for (int i = 0; i < 50; ++i)
    many += "==9== Invalid write of size 8\n==9==    at 0x1: f" + std::to_string(i) +
            " (k.cpp:1)\n==9== \n";
  const std::string capped = valgrind_errors({many}, 6, 4000);
  EXPECT_NE(capped.find("... and 44 more distinct error(s)"), std::string::npos) << capped;
}

// compute-sanitizer follows a process tree through descriptors it gives each process; a worker
// that had closed them was stopped by the checker when it forked its candidate process, so no
// CUDA call of a kernel was ever checked. The re-run asks for inherited descriptors to be kept:
// a kernel that is right only with descriptor 9 (a device) open and descriptor 8 (a file)
// closed passes when crucible starts with both and is asked to keep inherited ones, and fails
// when it is not asked.
TEST(Sanitize, InheritedDescriptorsReachTheKernelsProcessOnlyWhenAsked) {
  for (const bool keep : {true, false}) {
    const std::string out = temp_dir(keep ? "inherited-fd-kept" : "inherited-fd-closed");
    const Output o = crucible_env(
        cache_env() + (keep ? " CRUCIBLE_KEEP_INHERITED_FDS=1" : ""),
        "run --backend dir:" + shell_quote(fixture("inherited_fd")) +
            " --op relu.default --case '((T([64], f32),), {})' --timeout 30 -q --history none "
            "--out " +
            out + " 9</dev/null 8<" + shell_quote(fixture("inherited_fd/README.md")));
    EXPECT_EQ(o.status, keep ? 0 : 1) << o.out;
    auto by_op = cases_by_op(out);
    ASSERT_EQ(by_op.size(), 1u) << o.out;
    EXPECT_EQ(by_op["aten.relu.default"].value("status", ""), keep ? "passed" : "failed")
        << by_op["aten.relu.default"].dump(2);
  }
}

TEST(SanitizeGpu, ComputeSanitizerNamesAKernelsOutOfBoundsWrite) {
  if (!gpu_visible()) GTEST_SKIP() << "no CUDA device is visible (nvidia-smi -L lists none)";
  const std::string out = temp_dir("sanitize-gpu");
  const Output o = crucible_env(
      cache_env(), "run --backend dir:" + shell_quote(fixture("cuda_kernels/illegal_address")) +
                       " --op relu.default --case '((T([64], f32),), {})' --sanitize memcheck "
                       "--timeout 30 -q --history none --out " +
                       out);
  EXPECT_EQ(o.status, 1) << o.out;
  auto by_op = cases_by_op(out);
  ASSERT_EQ(by_op.size(), 1u) << o.out;
  const nlohmann::json& relu = by_op["aten.relu.default"];
  EXPECT_EQ(relu.value("status", ""), "failed") << relu.dump(2);
  const std::string detail = relu.value("detail", "");
  EXPECT_NE(detail.find("memcheck (compute-sanitizer --tool memcheck), the case run again alone"),
            std::string::npos)
      << detail;
  EXPECT_NE(detail.find("Invalid __global__ write of size 4"), std::string::npos) << detail;
  EXPECT_NE(detail.find("relu_kernel"), std::string::npos) << detail;
}

}  // namespace
}  // namespace crucible::e2e
