// OpenBLAS's kernel choice: a `crucible` run on a processor with AVX2 or AVX-512 uses kernels
// of that width (it corrects the library's narrower choice at start-up), records the core
// type in manifest.json, and keeps the user's OPENBLAS_CORETYPE or CRUCIBLE_KEEP_BLAS_CORE.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "backends/cpu/cpu_features.h"
#include "crucible/backends/blas_core.h"
#include "e2e/cli_helpers.h"

namespace crucible::e2e {
namespace {

std::string manifest_core(const std::string& env, const std::string& name) {
  const std::string out = temp_dir(name);
  const Output o =
      crucible_env(env, "run --suite smoke --backend ref --ops relu.default --quiet --out " + out);
  EXPECT_EQ(o.status, 0) << o.out;
  return read_json(out + "/manifest.json")["machine"].value("blas_core", "");
}

TEST(BlasCore, ARunNeverUsesTheGenericKernelsOnAVectorProcessor) {
  const std::string core =
      manifest_core("env -u OPENBLAS_CORETYPE -u CRUCIBLE_KEEP_BLAS_CORE", "blas-core");
  EXPECT_FALSE(core.empty());
  const cpu::CpuFeatures& f = cpu::cpu_features();
  if (f.avx2 && f.fma) {
    EXPECT_NE(core, "Prescott");
  }
  // AMD Zen 4 is "Zen" to OpenBLAS 0.3.21, whose Zen kernels are AVX2 ones (Haswell's).
  if (f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq) {
    EXPECT_TRUE(core == "SkylakeX" || core == "Cooperlake" || core == "SapphireRapids") << core;
  }
}

TEST(BlasCore, TheUsersChoiceStands) {
  EXPECT_EQ(manifest_core("OPENBLAS_CORETYPE=Prescott", "blas-core-user"), "Prescott");
  ::setenv("OPENBLAS_CORETYPE", "Haswell", 1);
  EXPECT_EQ(cpu::blas_core_correction(), "");
  ::unsetenv("OPENBLAS_CORETYPE");
}

// A timed run of mm on cpu under `env`, into the folder `out`.
Output timed_mm(const std::string& env, const std::string& out) {
  return crucible_env(env,
                      "run --suite smoke --backend cpu --baseline cpu --perf --ops mm.default "
                      "--dtypes f32 --workers 1 --history none --out " +
                          out);
}

// A user's OPENBLAS_CORETYPE narrower than the processor stands, and a timed run says that its
// products were timed below the machine's speed.
TEST(BlasCore, ATimedRunWarnsOfKernelsTheUserNarrowed) {
  const cpu::CpuFeatures& f = cpu::cpu_features();
  if (!(f.avx2 && f.fma)) GTEST_SKIP() << "no processor wider than OpenBLAS's generic kernels";
  const std::string out = temp_dir("blas-core-narrow");
  const Output o = timed_mm("OPENBLAS_CORETYPE=Prescott", out);
  EXPECT_EQ(o.status, 0) << o.out;
  EXPECT_NE(o.out.find("warning: OPENBLAS_CORETYPE=Prescott keeps OpenBLAS on its Prescott"),
            std::string::npos)
      << o.out;
  EXPECT_EQ(read_json(out + "/manifest.json")["machine"].value("blas_core", ""), "Prescott");
  // Without the variable crucible chooses, and says nothing.
  const Output o2 = timed_mm("env -u OPENBLAS_CORETYPE", temp_dir("blas-core-chosen"));
  EXPECT_EQ(o2.status, 0) << o2.out;
  EXPECT_EQ(o2.out.find("OPENBLAS_CORETYPE"), std::string::npos) << o2.out;
}

}  // namespace
}  // namespace crucible::e2e
