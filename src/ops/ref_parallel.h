// A deterministic parallel-for for the catalog's references. The work is cut into a number of
// tasks that depends only on the problem (never on the thread count); each task writes its own
// outputs, so every output element is computed by one thread in one fixed order, and the results
// are the same bits whatever the number of threads. Internal to libcrucible.
#pragma once

#include <cstdint>
#include <functional>

namespace crucible::refpar {

// The threads the references use: hardware_concurrency() (at most 16) unless set_threads chose.
int threads();
// Sets the thread count (0: back to the default). Returns the previous setting.
int set_threads(int n);

// Calls task(i) for every i in [0, count), spread over threads(): thread t runs the contiguous
// range [t * count / T, (t + 1) * count / T). The first exception thrown by a task is rethrown
// here once every thread has finished.
void for_each_task(int64_t count, const std::function<void(int64_t task)>& task);

// The number of tasks to cut `work` units (multiply-adds, elements...) into: one per `grain`
// units, at least 1 and at most `limit` (the number of independent pieces there are).
int64_t task_count(double work, double grain, int64_t limit);

}  // namespace crucible::refpar
