// Shared arenas and their guarded layouts.
#include "backends/plugin/shared_arena.h"

#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "crucible/core/error.h"

namespace crucible {

namespace {

size_t page_size() {
  static const size_t p = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return p;
}

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

}  // namespace

uint64_t unpredictable_u64() {
  uint64_t v = 0;
  char* p = reinterpret_cast<char*>(&v);
  size_t got = 0;
  while (got < sizeof v) {
    ssize_t k = getrandom(p + got, sizeof v - got, 0);
    if (k < 0) {
      if (errno == EINTR) continue;
      internal_error(std::string("getrandom failed: ") + std::strerror(errno));
    }
    got += static_cast<size_t>(k);
  }
  return v;
}

std::shared_ptr<SharedArena> SharedArena::create(size_t bytes) {
  static std::atomic<uint64_t> next_id{1};
  std::shared_ptr<SharedArena> a(new SharedArena());
  a->size_ = round_up(std::max<size_t>(bytes, 1), page_size());
  a->fd_ = memfd_create("crucible-arena", MFD_CLOEXEC);
  if (a->fd_ < 0) internal_error(std::string("memfd_create: ") + std::strerror(errno));
  if (ftruncate(a->fd_, static_cast<off_t>(a->size_)) != 0) {
    int e = errno;
    throw Error(ErrorKind::Memory, fmt::format("cannot size a shared arena of {} bytes: {}",
                                               a->size_, std::strerror(e)));
  }
  void* p = mmap(nullptr, a->size_, PROT_READ | PROT_WRITE, MAP_SHARED, a->fd_, 0);
  if (p == MAP_FAILED) {
    int e = errno;
    throw Error(ErrorKind::Memory, fmt::format("cannot map a shared arena of {} bytes: {}",
                                               a->size_, std::strerror(e)));
  }
  a->base_ = static_cast<char*>(p);
  a->id_ = (static_cast<uint64_t>(getpid()) << 32) | next_id++;
  return a;
}

SharedArena::~SharedArena() {
  if (base_) munmap(base_, size_);
  if (fd_ >= 0) ::close(fd_);
}

std::shared_ptr<Storage> SharedArena::storage(size_t offset, size_t bytes) {
  if (offset > size_ || bytes > size_ - offset)
    internal_error("SharedArena::storage: out of range");
  // A tensor over arena memory keeps the arena mapped while it lives.
  auto self = shared_from_this();
  return std::make_shared<Storage>(base_ + offset, bytes, Device::cpu(),
                                   [self](void*) mutable { self.reset(); });
}

ArenaLayout::ArenaLayout(uint64_t seed) : rng_(seed) {
  // A guard byte that is neither 0 nor 0xFF (the values kernels most often write by accident).
  guard_byte_ = static_cast<uint8_t>(1 + rng_() % 254);
  cursor_ = page_size();  // the first guard page
  pages_.push_back({0, page_size()});
}

size_t ArenaLayout::place(size_t bytes) {
  const size_t page = page_size();
  // A gap of 64 to 1024 guard bytes in front, in steps of 64 (the start stays 64-byte aligned).
  const size_t gap = 64 * (1 + rng_() % 16);
  const size_t offset = cursor_ + gap;
  regions_.push_back({offset, bytes});
  // At least 64 guard bytes after the region, then the next guard page.
  size_t end = round_up(offset + bytes + 64, page);
  pages_.push_back({end, page});
  cursor_ = end + page;
  return offset;
}

size_t ArenaLayout::total() const { return cursor_; }

void ArenaLayout::fill_guards(char* base) const {
  size_t at = 0;
  auto fill_to = [&](size_t to) {
    if (to > at) std::memset(base + at, guard_byte_, to - at);
  };
  // Walk pages and regions in address order (both are sorted by construction).
  size_t pi = 0, ri = 0;
  while (pi < pages_.size() || ri < regions_.size()) {
    const bool page_next =
        ri >= regions_.size() || (pi < pages_.size() && pages_[pi].first < regions_[ri].first);
    if (page_next) {
      fill_to(pages_[pi].first);
      at = pages_[pi].first + pages_[pi].second;
      ++pi;
    } else {
      fill_to(regions_[ri].first);
      at = regions_[ri].first + regions_[ri].second;
      ++ri;
    }
  }
}

std::string ArenaLayout::check_guards(const char* base,
                                      const std::vector<std::string>& names) const {
  const unsigned char g = guard_byte_;
  for (size_t r = 0; r < regions_.size(); ++r) {
    const auto [off, bytes] = regions_[r];
    // The guard zone in front: from the previous guard page's end to the region.
    size_t front_start = 0;
    for (const auto& [po, pl] : pages_)
      if (po + pl <= off) front_start = po + pl;
    size_t back_end = total();
    for (const auto& [po, pl] : pages_)
      if (po >= off + bytes) {
        back_end = po;
        break;
      }
    const std::string what = r < names.size() ? names[r] : fmt::format("region {}", r);
    int64_t changed = 0, nearest = -1;
    for (size_t i = front_start; i < off; ++i)
      if (static_cast<unsigned char>(base[i]) != g) {
        ++changed;
        nearest = static_cast<int64_t>(off - i);
      }
    if (changed > 0)
      return fmt::format(
          "wrote before the start of {}: {} byte(s) of the guard zone in front of it changed, "
          "the nearest {} byte(s) before its first byte",
          what, changed, nearest);
    int64_t first = -1;
    for (size_t i = off + bytes; i < back_end; ++i)
      if (static_cast<unsigned char>(base[i]) != g) {
        ++changed;
        if (first < 0) first = static_cast<int64_t>(i - off - bytes);
      }
    if (changed > 0)
      return fmt::format(
          "wrote past the end of {}: {} byte(s) of the guard zone after it changed, {}", what,
          changed,
          first == 0 ? std::string("from right after its last element")
                     : fmt::format("the first {} byte(s) after its last element", first));
  }
  return "";
}

}  // namespace crucible
