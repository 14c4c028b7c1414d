// The shared arena's layout: regions 64-byte aligned between guard pages, guard bytes of a value
// drawn per layout around them, offsets drawn per layout, and the check that names the region
// whose guard bytes changed.
#include <unistd.h>

#include <gtest/gtest.h>

#include <set>

#include "backends/plugin/shared_arena.h"

namespace crucible {
namespace {

TEST(SharedArena, RegionsAreAlignedAndSeparatedByGuardPages) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  ArenaLayout l(42);
  const size_t a = l.place(100), b = l.place(5000), c = l.place(0);
  for (size_t off : {a, b, c}) EXPECT_EQ(off % 64, 0u);
  // A guard page lies between consecutive regions, and after the last.
  auto page_between = [&](size_t lo, size_t hi) {
    for (const auto& [off, len] : l.guard_pages())
      if (off >= lo && off + len <= hi && len == page) return true;
    return false;
  };
  EXPECT_TRUE(page_between(a + 100, b));
  EXPECT_TRUE(page_between(b + 5000, c));
  EXPECT_TRUE(page_between(c, l.total()));
  EXPECT_TRUE(page_between(0, a));
  EXPECT_EQ(l.total() % page, 0u);
}

TEST(SharedArena, GuardBytesAndOffsetsVaryWithTheSeed) {
  std::set<int> bytes;
  std::set<size_t> offsets;
  for (uint64_t seed = 1; seed <= 32; ++seed) {
    ArenaLayout l(seed);
    offsets.insert(l.place(64));
    bytes.insert(l.guard_byte());
    EXPECT_NE(l.guard_byte(), 0);
    EXPECT_NE(l.guard_byte(), 0xFF);
  }
  EXPECT_GT(bytes.size(), 8u);
  EXPECT_GT(offsets.size(), 4u);
}

TEST(SharedArena, AWriteOutsideARegionNamesIt) {
  ArenaLayout l(7);
  const size_t a = l.place(256), b = l.place(128);
  auto arena = SharedArena::create(l.total());
  l.fill_guards(arena->base());
  const std::vector<std::string> names = {"input 'self'", "output 0"};
  EXPECT_EQ(l.check_guards(arena->base(), names), "");
  // Writing inside the regions is allowed.
  arena->base()[a] = 1;
  arena->base()[b + 127] = 1;
  EXPECT_EQ(l.check_guards(arena->base(), names), "");
  arena->base()[b + 128 + 40] ^= 0x55;
  std::string m = l.check_guards(arena->base(), names);
  EXPECT_NE(m.find("wrote past the end of output 0: 1 byte(s)"), std::string::npos) << m;
  EXPECT_NE(m.find("the first 40 byte(s) after its last element"), std::string::npos) << m;
  arena->base()[b + 128 + 40] ^= 0x55;
  arena->base()[a - 1] ^= 0x55;
  m = l.check_guards(arena->base(), names);
  EXPECT_NE(m.find("wrote before the start of input 'self'"), std::string::npos) << m;
}

TEST(SharedArena, StoragesKeepTheArenaMapped) {
  std::shared_ptr<Storage> s;
  {
    auto arena = SharedArena::create(8192);
    s = arena->storage(4096, 16);
    static_cast<char*>(s->data())[0] = 3;
  }
  EXPECT_EQ(static_cast<char*>(s->data())[0], 3);
}

}  // namespace
}  // namespace crucible
