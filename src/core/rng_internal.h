// What Rng shares with the batched drawing of standard normals (rng_normals.cpp). Internal to
// core.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "crucible/core/dtype.h"

namespace crucible::rng_detail {

// Philox4x32-10 (Salmon et al., SC 2011) of the counter (x0, x1, x2, x3) under the key (k0, k1),
// in place: the one implementation, inline so that a loop over blocks vectorises.
[[gnu::always_inline]] inline void philox_rounds(uint32_t& x0, uint32_t& x1, uint32_t& x2,
                                                 uint32_t& x3, uint32_t k0, uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = uint64_t{0xD2511F53u} * x0, p1 = uint64_t{0xCD9E8D57u} * x2;
    const uint32_t y0 = static_cast<uint32_t>(p1 >> 32) ^ x1 ^ k0;
    const uint32_t y2 = static_cast<uint32_t>(p0 >> 32) ^ x3 ^ k1;
    x1 = static_cast<uint32_t>(p1);
    x3 = static_cast<uint32_t>(p0);
    x0 = y0;
    x2 = y2;
    k0 += 0x9E3779B9u;  // the golden ratio
    k1 += 0xBB67AE85u;  // sqrt(3) - 1
  }
}

// [0, 1) from the top 53 bits of a 64-bit word.
[[gnu::always_inline]] inline double unit53(uint64_t bits) {
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

// Box-Muller as Rng::normal() computes it: the cosine's and the sine's normal from u1 in (0, 1]
// and u2 in [0, 1), through the C library's log, cos and sin.
std::pair<double, double> box_muller(double u1, double u2);

// The pairs of normals Rng::normals draws from blocks first .. first + pairs - 1 of the stream
// (key, stream), stored into contiguous `out` of dtype t (f32, f16 or bf16) as store_from_double
// stores normal()'s values: 2 * pairs elements.
void draw_normal_pairs(std::array<uint32_t, 2> key, uint64_t stream, uint64_t first, size_t pairs,
                       void* out, DType t);

}  // namespace crucible::rng_detail
