// A counter-based random number generator (Philox4x32-10, Salmon et al. 2011). The value at
// (key, counter) is a pure function of both, so materialised inputs are identical on every
// machine, in every thread, in any order.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "crucible/core/dtype.h"

namespace crucible {

std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> counter, std::array<uint32_t, 2> key);

// A stream of random numbers for one purpose (one tensor of one case). `stream` separates
// purposes under the same seed; numbers are drawn in order from a 128-bit counter.
class Rng {
 public:
  Rng(uint64_t seed, uint64_t stream);

  uint32_t next_u32();
  uint64_t next_u64();
  double uniform();  // [0, 1) with 53 random bits
  double normal();   // standard normal (Box-Muller, both outputs used)
  // n calls of normal() at once, the same numbers (a Philox block a pair where the stream is
  // at a block's start: what filling a large tensor costs).
  void normals(double* out, size_t n);
  // n calls of normal(), each stored into contiguous `out` of the real floating dtype t as
  // store_from_double stores it: the same bytes and the same state after. From a block's start
  // (at_block_start) f32, f16 and bf16 are drawn a batch of blocks at a time with vectorised
  // approximations of log, sin and cos, each value rounded to t from the approximation when it
  // is provably the rounding of normal()'s double, and from normal()'s own computation when not.
  void normals_to(void* out, DType t, size_t n);
  // Uniform integer in [lo, hi] (inclusive); lo <= hi. Unbiased (rejection).
  int64_t integer(int64_t lo, int64_t hi);

  // Whether the stream stands at a block's start with no spare normal pending: what skip_blocks
  // needs, and where normals_to draws pair i from block i.
  bool at_block_start() const { return used_ == 4 && !have_spare_; }
  // Moves on by n blocks (n pairs of normals from a block's start), as drawing them would; the
  // stream must be at_block_start. A copy moved on draws a later part of the same sequence.
  void skip_blocks(uint64_t n);

 private:
  std::array<uint32_t, 4> next_block();  // the block at the counter; the counter moves on
  void refill();
  std::array<uint32_t, 2> key_;
  uint64_t stream_ = 0;   // high 64 bits of the Philox counter
  uint64_t counter_ = 0;  // low 64 bits: the block number within the stream
  std::array<uint32_t, 4> block_{};
  int used_ = 4;
  bool have_spare_ = false;
  double spare_ = 0.0;
};

// A 64-bit hash (FNV-1a then a splitmix finaliser) used to derive stream ids and case ids.
uint64_t hash64(const void* data, size_t n, uint64_t seed = 0);
uint64_t hash_str(const char* s, uint64_t seed = 0);

}  // namespace crucible
