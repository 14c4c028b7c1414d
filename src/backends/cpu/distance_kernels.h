// The row-distance loops of the cpu backend's _cdist_forward and _pdist_forward for f32,
// compiled once per ISA level (distance_avx512.cpp, distance_avx2.cpp, distance_portable.cpp)
// from distance_loops.h and chosen at run time. distance.cpp calls them only for inputs without
// extreme values (no NaN or inf), and handles the rest in f64.
#pragma once

#include <cstdint>

namespace crucible::cpu {

// The distance of two rows of m f32 coordinates, summed in f32 vector lanes.
using RowDistance = float (*)(const float* a, const float* b, int64_t m);

struct DistanceKernels {
  // By p: [0] the number of differing coordinates, [1] sum |d|, [2] sqrt(sum d^2), [3] max |d|.
  RowDistance f32[4];
};

const DistanceKernels& distance_kernels_avx512();
const DistanceKernels& distance_kernels_avx2();
const DistanceKernels& distance_kernels_portable();
// The set for isa_level().
const DistanceKernels& distance_kernels();

}  // namespace crucible::cpu
