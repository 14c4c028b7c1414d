// OpenBLAS's kernel choice: a `crucible` run on a processor with AVX2 or AVX-512 never uses the
// generic Prescott kernels (it corrects the library's fallback at start-up), records the core
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
  const std::string core = manifest_core("", "blas-core");
  EXPECT_FALSE(core.empty());
  const cpu::CpuFeatures& f = cpu::cpu_features();
  if (f.avx2 && f.fma) {
    EXPECT_NE(core, "Prescott");
  }
}

TEST(BlasCore, TheUsersChoiceStands) {
  EXPECT_EQ(manifest_core("OPENBLAS_CORETYPE=Prescott", "blas-core-user"), "Prescott");
  ::setenv("OPENBLAS_CORETYPE", "Haswell", 1);
  EXPECT_EQ(cpu::blas_core_correction(), "");
  ::unsetenv("OPENBLAS_CORETYPE");
}

}  // namespace
}  // namespace crucible::e2e
