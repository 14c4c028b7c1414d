// Evicting a range of memory from every cache level, line by line (clflushopt where the
// processor has it, else clflush; nothing on other architectures). Timing uses it so that an
// op reads its inputs, and a candidate writes its poisoned outputs, from memory as in a model.
#pragma once

#include <cstddef>

namespace crucible {

// Returns after the evictions are ordered before later memory accesses (a fence).
void evict_cache_lines(const void* p, size_t bytes);

}  // namespace crucible
