// The cpu backend's thread pool: every index covered once, errors rethrown, nesting inline.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

#include "backends/cpu/parallel.h"

namespace crucible::cpu {
namespace {

TEST(CpuParallel, CoversEveryIndexExactlyOnce) {
  set_num_threads(4);
  std::vector<std::atomic<int>> hits(10007);
  parallel_for(0, 10007, 100, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) hits[i].fetch_add(1);
  });
  for (size_t i = 0; i < hits.size(); ++i) ASSERT_EQ(hits[i].load(), 1) << i;
  set_num_threads(0);
}

TEST(CpuParallel, SmallRangesRunInlineAsOneChunk) {
  set_num_threads(4);
  int calls = 0;
  parallel_for(5, 50, 1000, [&](int64_t lo, int64_t hi) {
    ++calls;
    EXPECT_EQ(lo, 5);
    EXPECT_EQ(hi, 50);
  });
  EXPECT_EQ(calls, 1);
  set_num_threads(0);
}

TEST(CpuParallel, ExceptionFromAChunkIsRethrown) {
  set_num_threads(3);
  EXPECT_THROW(parallel_for(0, 3000, 10,
                            [](int64_t lo, int64_t) {
                              if (lo > 0) throw std::runtime_error("chunk failed");
                            }),
               std::runtime_error);
  // The pool still works afterwards.
  std::atomic<int64_t> sum{0};
  parallel_for(0, 1000, 10, [&](int64_t lo, int64_t hi) { sum += hi - lo; });
  EXPECT_EQ(sum.load(), 1000);
  set_num_threads(0);
}

TEST(CpuParallel, NestedCallsRunInline) {
  set_num_threads(2);
  std::atomic<int64_t> total{0};
  parallel_for(0, 4, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i)
      parallel_for(0, 1000, 1, [&](int64_t a, int64_t b) { total += b - a; });
  });
  EXPECT_EQ(total.load(), 4000);
  set_num_threads(0);
}

}  // namespace
}  // namespace crucible::cpu
