// What the processor can do, detected once at run time: the `cpu` backend picks its AVX-512,
// AVX2 or portable code paths from this, so one binary runs everywhere.
#pragma once

#include <string>

namespace crucible::cpu {

struct CpuFeatures {
  bool avx2 = false;
  bool fma = false;
  bool f16c = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512dq = false;
  bool avx512vl = false;
  bool avx512bf16 = false;
  bool avx512vnni = false;
};

const CpuFeatures& cpu_features();
// "avx512", "avx2" or "portable": the widest path in use (CRUCIBLE_CPU_ISA=avx2|portable
// lowers it, for testing the other paths on the same machine).
std::string isa_level();

}  // namespace crucible::cpu
