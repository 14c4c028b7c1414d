// The `cpu` backend's thread pool: a fixed set of workers (--threads, default = cores) that
// split a range into chunks. Work below the grain size runs inline on the calling thread.
#pragma once

#include <cstdint>
#include <functional>

namespace crucible::cpu {

// Sets the number of threads used by parallel_for (1 = everything inline). Default: the
// number of cores the process may run on.
void set_num_threads(int n);
int num_threads();

// Calls fn(begin_i, end_i) over disjoint chunks covering [begin, end), in parallel when the
// range holds more than `grain` items. fn must not throw across threads: an exception thrown
// by a chunk is rethrown on the calling thread after all chunks finish.
void parallel_for(int64_t begin, int64_t end, int64_t grain,
                  const std::function<void(int64_t, int64_t)>& fn);

}  // namespace crucible::cpu
