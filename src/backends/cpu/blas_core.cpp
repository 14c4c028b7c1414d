// OpenBLAS's core type and its correction (see blas_core.h).
#include "crucible/backends/blas_core.h"

#include <cblas.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "backends/cpu/cpu_features.h"

namespace crucible::cpu {

std::string blas_core_name() {
  const char* name = openblas_get_corename();
  return name ? std::string(name) : std::string();
}

namespace {

// The widest vector extension a core type's kernels use: 3 AVX-512, 2 AVX2 with FMA, 1 older;
// 0 for a name not in OpenBLAS 0.3.21's DYNAMIC_ARCH table, which is never corrected.
int core_level(const std::string& core) {
  for (const char* c : {"SkylakeX", "Cooperlake", "SapphireRapids"})
    if (core == c) return 3;
  for (const char* c : {"Haswell", "Zen", "Excavator"})
    if (core == c) return 2;
  for (const char* c :
       {"Prescott", "Core2", "Penryn", "Dunnington", "Nehalem", "Atom", "Sandybridge", "Opteron",
        "Opteron_SSE3", "Barcelona", "Bobcat", "Bulldozer", "Piledriver", "Steamroller", "Nano",
        "Katmai", "Coppermine", "Northwood", "Banias"})
    if (core == c) return 1;
  return 0;
}

// The widest core type this processor runs, with its level (0, "": none worth naming).
std::pair<int, std::string> widest_core() {
  const CpuFeatures& f = cpu_features();
  if (f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq)
    return {3, f.avx512bf16 ? "Cooperlake" : "SkylakeX"};
  if (f.avx2 && f.fma) return {2, "Haswell"};
  return {0, ""};
}

// The core type to ask for instead of the library's (empty: it is as wide as the processor,
// or a name not in the table).
std::string wider_core() {
  const int have = core_level(blas_core_name());
  const auto [can, core] = widest_core();
  return have != 0 && have < can ? core : "";
}

}  // namespace

std::string blas_core_correction() {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return "";  // the user's choice stands
  return wider_core();
}

std::string blas_core_narrowed_by_user() {
  const char* env = std::getenv("OPENBLAS_CORETYPE");
  if (env == nullptr) return "";
  const std::string core = wider_core();
  if (core.empty()) return "";
  return fmt::format(
      "OPENBLAS_CORETYPE={} keeps OpenBLAS on its {} kernels on a processor that runs {}'s: "
      "matrix products and convolutions (crucible's and ATen's) were timed below the "
      "machine's speed; unset the variable to let crucible choose",
      env, blas_core_name(), core);
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
