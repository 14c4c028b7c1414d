// What Rng shares with the batched drawing of standard normals (rng_normals.cpp). Internal to
// core.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "crucible/core/dtype.h"

namespace crucible::rng_detail {

// Box-Muller as Rng::normal() computes it: the cosine's and the sine's normal from u1 in (0, 1]
// and u2 in [0, 1), through the C library's log, cos and sin.
std::pair<double, double> box_muller(double u1, double u2);

// The pairs of normals Rng::normals draws from blocks first .. first + pairs - 1 of the stream
// (key, stream), stored into contiguous `out` of dtype t (f32, f16 or bf16) as store_from_double
// stores normal()'s values: 2 * pairs elements.
void draw_normal_pairs(std::array<uint32_t, 2> key, uint64_t stream, uint64_t first, size_t pairs,
                       void* out, DType t);

}  // namespace crucible::rng_detail
