#include "crucible/core/cache_lines.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace crucible {

#if defined(__x86_64__)
namespace {

bool has_clflushopt() {
  unsigned a, b, c, d;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  return (b >> 23) & 1u;
}

__attribute__((target("clflushopt"))) void flush_lines_opt(const char* p, size_t n) {
  for (size_t i = 0; i < n; i += 64) _mm_clflushopt(const_cast<char*>(p + i));
}

}  // namespace

void evict_cache_lines(const void* p, size_t bytes) {
  static const bool opt = has_clflushopt();
  const char* c = static_cast<const char*>(p);
  if (opt) {
    flush_lines_opt(c, bytes);
  } else {
    for (size_t i = 0; i < bytes; i += 64) _mm_clflush(c + i);
  }
  _mm_mfence();
}
#else
void evict_cache_lines(const void*, size_t) {}
#endif

}  // namespace crucible
