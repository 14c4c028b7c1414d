// CPU storage allocation and the process-wide allocation limit.
//
// Blocks from 256 KiB up are kept in a cache when freed and handed out again to the next
// allocation of the same rounded size, as PyTorch's caching allocators do: a model (or a timing
// loop) that allocates the same shapes over and over then reuses memory whose pages are already
// mapped, instead of paying the page faults of a fresh mmap on every call. Blocks from 4 MiB up
// are aligned to 2 MiB and advised as transparent huge pages (fewer faults and TLB misses where
// the kernel allows them). The cache holds at most 1 GiB (a quarter of the allocation limit when
// one is set), freeing the blocks cached longest ago to make room, and is emptied before an
// allocation is refused.
#include <sys/mman.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <list>
#include <map>
#include <mutex>

#include "crucible/core/error.h"
#include "crucible/core/tensor.h"

namespace crucible {

namespace {

std::atomic<size_t> g_limit{0};
std::atomic<size_t> g_allocated{0};

constexpr size_t kAlignment = 64;
constexpr size_t kCacheMin = size_t{256} << 10;
constexpr size_t kHugeMin = size_t{4} << 20;
constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kCacheMax = size_t{1} << 30;

[[noreturn]] void memory_error(size_t nbytes, size_t limit) {
  throw Error(ErrorKind::Memory, "allocation of " + std::to_string(nbytes) +
                                     " bytes exceeds the memory limit of " + std::to_string(limit) +
                                     " bytes");
}

// The block size an allocation of `nbytes` gets: 64-byte multiples; cached sizes in 4 KiB
// pages, huge ones in 2 MiB pages (so that equal shapes meet the same size class).
size_t block_size(size_t nbytes) {
  if (nbytes == 0) return kAlignment;
  const size_t unit = nbytes >= kHugeMin ? kHugePage : nbytes >= kCacheMin ? 4096 : kAlignment;
  const size_t rounded = (nbytes + unit - 1) / unit * unit;
  return rounded < nbytes ? 0 : rounded;  // 0: overflow
}

class BlockCache {
 public:
  void* take(size_t size) {
    std::lock_guard<std::mutex> lock(mu_);
    // The most recently freed block of the size: its lines and TLB entries are the likeliest
    // still to be warm (blocks are handed back in LIFO order, as caching allocators do).
    auto [lo, hi] = by_size_.equal_range(size);
    if (lo == hi) return nullptr;
    auto it = std::prev(hi);
    const auto entry = it->second;
    void* p = entry->p;
    by_size_.erase(it);
    order_.erase(entry);
    held_ -= size;
    return p;
  }
  // Keeps the block, making room by freeing the blocks cached longest ago (a run that moves
  // from one set of shapes to another keeps caching the shapes it uses now); false when the
  // block alone exceeds the cap: the caller frees it.
  bool give(void* p, size_t size) {
    const size_t limit = g_limit.load();
    const size_t cap = limit != 0 ? std::min(kCacheMax, limit / 4) : kCacheMax;
    if (size > cap) return false;
    std::lock_guard<std::mutex> lock(mu_);
    while (held_ + size > cap && !order_.empty()) {
      const Block old = order_.front();
      std::free(old.p);
      held_ -= old.size;
      by_size_.erase(old.at);
      order_.pop_front();
    }
    order_.push_back(Block{p, size, {}});
    const auto entry = std::prev(order_.end());
    entry->at = by_size_.emplace(size, entry);
    held_ += size;
    return true;
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Block& blk : order_) std::free(blk.p);
    order_.clear();
    by_size_.clear();
    held_ = 0;
  }
  size_t held() {
    std::lock_guard<std::mutex> lock(mu_);
    return held_;
  }

 private:
  struct Block;
  using Order = std::list<Block>;
  using BySize = std::multimap<size_t, Order::iterator>;
  struct Block {
    void* p;
    size_t size;
    BySize::iterator at;  // this block's entry in by_size_
  };
  std::mutex mu_;
  Order order_;     // cached blocks, oldest first
  BySize by_size_;  // size -> block, equal sizes in the order they were freed
  size_t held_ = 0;
};

BlockCache& cache() {
  static BlockCache* c = new BlockCache();  // never destroyed: storage may outlive statics
  return *c;
}

void* fresh_block(size_t size) {
  const size_t align = size >= kHugeMin ? kHugePage : kAlignment;
  void* p = std::aligned_alloc(align, size);
  if (p == nullptr) {
    cache().clear();
    p = std::aligned_alloc(align, size);
  }
  if (p != nullptr && size >= kHugeMin) ::madvise(p, size, MADV_HUGEPAGE);
  return p;
}

}  // namespace

Storage::Storage(void* data, size_t nbytes, Device device, std::function<void(void*)> deleter)
    : data_(data), nbytes_(nbytes), device_(device), deleter_(std::move(deleter)) {}

Storage::~Storage() {
  if (deleter_) deleter_(data_);
}

std::shared_ptr<Storage> Storage::allocate_cpu(size_t nbytes, Init init) {
  const size_t limit = g_limit.load();
  size_t before = g_allocated.fetch_add(nbytes);
  if (limit != 0 && (before + nbytes > limit || before + nbytes < before)) {
    g_allocated.fetch_sub(nbytes);
    memory_error(nbytes, limit);
  }
  // Zero-size storage still gets a distinct, aligned pointer.
  const size_t size = block_size(nbytes);
  if (size == 0) {
    g_allocated.fetch_sub(nbytes);
    memory_error(nbytes, limit);
  }
  const bool cached = size >= kCacheMin;
  void* p = cached ? cache().take(size) : nullptr;
  if (p == nullptr) p = fresh_block(size);
  if (p == nullptr) {
    g_allocated.fetch_sub(nbytes);
    throw Error(ErrorKind::Memory,
                "allocation of " + std::to_string(nbytes) + " bytes failed (out of memory)");
  }
  // Zero-filled memory: a result never depends on what an earlier allocation left behind.
  if (init == Init::Zero) std::memset(p, 0, size);
  return std::make_shared<Storage>(p, nbytes, Device::cpu(), [nbytes, size, cached](void* q) {
    if (!cached || !cache().give(q, size)) std::free(q);
    g_allocated.fetch_sub(nbytes);
  });
}

void set_allocation_limit(size_t bytes) { g_limit.store(bytes); }
size_t allocation_limit() { return g_limit.load(); }
size_t bytes_allocated() { return g_allocated.load(); }
size_t bytes_cached() { return cache().held(); }
void release_cached_blocks() { cache().clear(); }

}  // namespace crucible
