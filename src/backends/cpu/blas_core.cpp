// OpenBLAS's core type and its correction (see blas_core.h).
#include "crucible/backends/blas_core.h"

#include <cblas.h>
#include <unistd.h>

#include <cstdlib>

#include "backends/cpu/cpu_features.h"

namespace crucible::cpu {

std::string blas_core_name() {
  const char* name = openblas_get_corename();
  return name ? std::string(name) : std::string();
}

std::string blas_core_correction() {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return "";  // the user's choice stands
  if (blas_core_name() != "Prescott") return "";
  const CpuFeatures& f = cpu_features();
  if (f.avx512f && f.avx512bw && f.avx512vl) return f.avx512bf16 ? "Cooperlake" : "SkylakeX";
  if (f.avx2 && f.fma) return "Haswell";
  return "";
}

void restart_with_corrected_blas_core(char** argv) {
  if (std::getenv("CRUCIBLE_KEEP_BLAS_CORE") != nullptr) return;
  const std::string core = blas_core_correction();
  if (core.empty()) return;
  ::setenv("OPENBLAS_CORETYPE", core.c_str(), 1);
  ::execv("/proc/self/exe", argv);
  ::unsetenv("OPENBLAS_CORETYPE");  // the exec failed: go on with the kernels we have
}

}  // namespace crucible::cpu
