// Run-time detection of the processor's vector extensions (cpuid, and xgetbv for whether the
// operating system saves the wide registers), and the ISA level the cpu backend uses.
#include "backends/cpu/cpu_features.h"

#include <cpuid.h>

#include <cstdint>
#include <cstdlib>

#include "crucible/core/error.h"

namespace crucible::cpu {

namespace {

uint64_t read_xcr0() {
  uint32_t eax = 0, edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<uint64_t>(edx) << 32) | eax;
}

CpuFeatures detect() {
  CpuFeatures f;
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  const bool osxsave = (c >> 27) & 1;
  const bool fma = (c >> 12) & 1;
  const bool f16c = (c >> 29) & 1;
  const bool avx = (c >> 28) & 1;
  if (!osxsave || !avx) return f;  // no wide registers the OS saves
  const uint64_t xcr0 = read_xcr0();
  const bool os_ymm = (xcr0 & 0x6) == 0x6;    // SSE and AVX state
  const bool os_zmm = (xcr0 & 0xe6) == 0xe6;  // plus opmask, ZMM_Hi256, Hi16_ZMM
  if (!os_ymm) return f;
  f.fma = fma;
  f.f16c = f16c;
  unsigned max_leaf = __get_cpuid_max(0, nullptr);
  if (max_leaf < 7) return f;
  __cpuid_count(7, 0, a, b, c, d);
  f.avx2 = (b >> 5) & 1;
  if (os_zmm) {
    f.avx512f = (b >> 16) & 1;
    f.avx512dq = (b >> 17) & 1;
    f.avx512bw = (b >> 30) & 1;
    f.avx512vl = (b >> 31) & 1;
    f.avx512vnni = (c >> 11) & 1;
    __cpuid_count(7, 1, a, b, c, d);
    f.avx512bf16 = (a >> 5) & 1;
  }
  return f;
}

std::string level_of(const CpuFeatures& f) {
  std::string hw = "portable";
  if (f.avx2 && f.fma && f.f16c) hw = "avx2";
  if (hw == "avx2" && f.avx512f && f.avx512bw && f.avx512vl) hw = "avx512";
  const char* env = std::getenv("CRUCIBLE_CPU_ISA");
  if (!env || !*env) return hw;
  const std::string want = env;
  auto rank = [](const std::string& s) { return s == "avx512" ? 2 : s == "avx2" ? 1 : 0; };
  if (want != "avx512" && want != "avx2" && want != "portable")
    usage_error("CRUCIBLE_CPU_ISA=" + want +
                " is not an ISA level; use avx512, avx2 or portable (or unset it)");
  return rank(want) < rank(hw) ? want : hw;  // it lowers the level, never raises it
}

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures f = detect();
  return f;
}

std::string isa_level() {
  static const std::string level = level_of(cpu_features());
  return level;
}

}  // namespace crucible::cpu
