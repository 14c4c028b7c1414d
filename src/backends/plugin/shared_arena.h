// The memory a candidate process computes in: one memfd, mapped by the trusted worker and by the
// candidate process, holding a call's input copies and its outputs. Each region (the whole
// storage of one argument, or one output) sits between guard pages, which the candidate process
// maps without access, and inside a zone of guard bytes of a value drawn per call, at an offset
// drawn per call; every byte of the arena is thus an input (checked unchanged), an output
// (judged), a guard byte (checked) or a guard page (a write there kills the candidate process).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "crucible/core/tensor.h"

namespace crucible {

// Unpredictable bits for the defences (poison, decoys, layouts): from getrandom(), never from a
// generator whose state a forked candidate process could have copied.
uint64_t unpredictable_u64();

class SharedArena : public std::enable_shared_from_this<SharedArena> {
 public:
  // A fresh arena of `bytes` (rounded up to pages), zero-filled.
  static std::shared_ptr<SharedArena> create(size_t bytes);
  ~SharedArena();
  SharedArena(const SharedArena&) = delete;
  SharedArena& operator=(const SharedArena&) = delete;

  int fd() const { return fd_; }
  uint64_t id() const { return id_; }
  size_t size() const { return size_; }
  char* base() const { return base_; }
  // A storage over [offset, offset + bytes) that keeps the arena mapped while it lives.
  std::shared_ptr<Storage> storage(size_t offset, size_t bytes);

 private:
  SharedArena() = default;
  int fd_ = -1;
  uint64_t id_ = 0;
  size_t size_ = 0;
  char* base_ = nullptr;
};

// Where the regions of one call go in an arena.
class ArenaLayout {
 public:
  explicit ArenaLayout(uint64_t seed);
  // Reserves a region of `bytes` (64-byte aligned start, guard page before and after, a random
  // guard-byte gap in front); returns its offset.
  size_t place(size_t bytes);
  // The arena size this layout needs (call after the last place()).
  size_t total() const;
  const std::vector<std::pair<size_t, size_t>>& guard_pages() const { return pages_; }
  const std::vector<std::pair<size_t, size_t>>& regions() const { return regions_; }
  uint8_t guard_byte() const { return guard_byte_; }

  // Fills every byte outside the regions and guard pages with the guard byte.
  void fill_guards(char* base) const;
  // "" when every guard byte is intact, else which region's guard zone was written, and where.
  // `names[i]` names region i ("output 0", "input 'self'").
  std::string check_guards(const char* base, const std::vector<std::string>& names) const;

 private:
  std::mt19937_64 rng_;
  uint8_t guard_byte_;
  size_t cursor_;
  std::vector<std::pair<size_t, size_t>> pages_;    // offset, length
  std::vector<std::pair<size_t, size_t>> regions_;  // offset, bytes
};

}  // namespace crucible
