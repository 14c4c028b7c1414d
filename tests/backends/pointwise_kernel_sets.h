// The pointwise kernel sets this machine can run (every ISA level up to its own), for tests that
// check each level.
#pragma once

#include <vector>

#include "backends/cpu/cpu_features.h"
#include "backends/cpu/pointwise_kernels.h"

namespace crucible::cpu {

inline std::vector<const PwKernels*> kernel_sets() {
  std::vector<const PwKernels*> v{&pw_kernels_portable()};
  const CpuFeatures& f = cpu_features();
  if (f.avx2 && f.fma && f.f16c) v.push_back(&pw_kernels_avx2());
  if (f.avx512f && f.avx512bw && f.avx512vl) v.push_back(&pw_kernels_avx512());
  return v;
}

}  // namespace crucible::cpu
