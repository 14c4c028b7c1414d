// The CPU allocator: zero-filled and uninitialized storage, the cache of large freed blocks
// (reused by the next allocation of the same size, capped, emptied on demand).
#include <gtest/gtest.h>

#include <cstring>

#include "crucible/core/tensor.h"

namespace crucible {
namespace {

TEST(StorageCache, ALargeFreedBlockIsReusedForTheSameSize) {
  release_cached_blocks();
  const size_t n = size_t{8} << 20;  // huge-page size class
  void* first = nullptr;
  {
    auto s = Storage::allocate_cpu(n, Storage::Init::Uninitialized);
    first = s->data();
    std::memset(first, 0x5a, n);
    EXPECT_EQ(bytes_cached(), 0u);
  }
  EXPECT_GE(bytes_cached(), n);
  {
    auto s = Storage::allocate_cpu(n, Storage::Init::Uninitialized);
    EXPECT_EQ(s->data(), first);  // the cached block
    EXPECT_EQ(bytes_cached(), 0u);
    // Uninitialized: what the block held.
    EXPECT_EQ(static_cast<unsigned char*>(s->data())[n - 1], 0x5a);
  }
  {
    // Zero-filled storage from a reused block is zero all the same.
    auto s = Storage::allocate_cpu(n);
    EXPECT_EQ(s->data(), first);
    const auto* p = static_cast<const unsigned char*>(s->data());
    for (size_t i = 0; i < n; i += 4093) ASSERT_EQ(p[i], 0) << i;
    EXPECT_EQ(p[n - 1], 0);
  }
  release_cached_blocks();
  EXPECT_EQ(bytes_cached(), 0u);
}

TEST(StorageCache, TheMostRecentlyFreedBlockOfASizeComesBackFirst) {
  release_cached_blocks();
  const size_t n = size_t{1} << 20;
  auto a = Storage::allocate_cpu(n, Storage::Init::Uninitialized);
  auto b = Storage::allocate_cpu(n, Storage::Init::Uninitialized);
  void* pa = a->data();
  void* pb = b->data();
  a.reset();  // freed first
  b.reset();  // freed last: still warm
  auto c = Storage::allocate_cpu(n, Storage::Init::Uninitialized);
  EXPECT_EQ(c->data(), pb);
  auto d = Storage::allocate_cpu(n, Storage::Init::Uninitialized);
  EXPECT_EQ(d->data(), pa);
  c.reset();
  d.reset();
  release_cached_blocks();
}

TEST(StorageCache, SmallBlocksAreNotCachedAndHugeBlocksAreAligned) {
  release_cached_blocks();
  { auto s = Storage::allocate_cpu(4096); }
  EXPECT_EQ(bytes_cached(), 0u);
  auto big = Storage::allocate_cpu(size_t{5} << 20);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(big->data()) % (size_t{2} << 20), 0u);
  auto mid = Storage::allocate_cpu(size_t{300} << 10);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(mid->data()) % 64, 0u);
}

TEST(StorageCache, TheCacheStaysWithinAQuarterOfTheLimitAndTheLimitCountsLiveBytes) {
  release_cached_blocks();
  const size_t before = bytes_allocated();
  set_allocation_limit(before + (size_t{64} << 20));
  {
    auto a = Storage::allocate_cpu(size_t{12} << 20, Storage::Init::Uninitialized);
    auto b = Storage::allocate_cpu(size_t{12} << 20, Storage::Init::Uninitialized);
    EXPECT_EQ(bytes_allocated(), before + (size_t{24} << 20));
  }
  // A quarter of the limit (about 16 MiB) holds one of the two 12 MiB blocks.
  EXPECT_LE(bytes_cached(), (before + (size_t{64} << 20)) / 4);
  EXPECT_GT(bytes_cached(), 0u);
  EXPECT_EQ(bytes_allocated(), before);
  set_allocation_limit(0);
  release_cached_blocks();
}

TEST(StorageCache, AFullCacheFreesItsOldestBlocksToKeepTheNewestOne) {
  release_cached_blocks();
  const size_t before = bytes_allocated();
  ASSERT_LT(before, size_t{32} << 20);
  set_allocation_limit(size_t{80} << 20);  // cap: 20 MiB
  const size_t mib = size_t{1} << 20;
  void* py = nullptr;
  { auto x = Storage::allocate_cpu(8 * mib, Storage::Init::Uninitialized); }
  EXPECT_EQ(bytes_cached(), 8 * mib);
  {
    auto y = Storage::allocate_cpu(14 * mib, Storage::Init::Uninitialized);
    py = y->data();
  }
  // 8 + 14 MiB exceed the cap: the older block made room for the newer.
  EXPECT_EQ(bytes_cached(), 14 * mib);
  {
    auto y2 = Storage::allocate_cpu(14 * mib, Storage::Init::Uninitialized);
    EXPECT_EQ(y2->data(), py);
    EXPECT_EQ(bytes_cached(), 0u);
  }
  set_allocation_limit(0);
  release_cached_blocks();
}

TEST(Tensor, UninitializedHasTheShapeAndStridesAsked) {
  Tensor t = Tensor::uninitialized({3, 4}, DType::Float32);
  EXPECT_EQ(t.shape(), (Shape{3, 4}));
  EXPECT_EQ(t.strides(), (Shape{4, 1}));
  Tensor u = Tensor::uninitialized_strided({3, 4}, {1, 3}, DType::Float16);
  EXPECT_EQ(u.strides(), (Shape{1, 3}));
  EXPECT_GE(u.storage()->nbytes(), 12 * 2u);
}

}  // namespace
}  // namespace crucible
