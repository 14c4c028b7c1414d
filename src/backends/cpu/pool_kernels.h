// The plane kernels of the cpu backend's pooling. A plane is one (n, c) slice of the input,
// its spatial dims contiguous ([D, H, W], 2-d pooling has D = 1); pool.cpp splits the planes
// over the thread pool and does the dtype and layout plumbing.
//
// Two sets:
//  - the f32 vector kernels (pool_loops.h, compiled per ISA: pool_avx512.cpp, pool_avx2.cpp,
//    pool_portable.cpp) for window pooling (kernel, stride, padding, dilation; adaptive pooling
//    whose windows are regular is passed in as such). Each output row is computed in two
//    steps: the in-range input rows of its window are combined element by element (max with
//    the row of the max, or sum) into a padded scratch row, then the windows along W are taken
//    from that row, vectorized over the outputs (stride 1 and 2; other strides scalar).
//  - the generic kernels (pool_generic.cpp): the reference's loops in double, for f64, for
//    irregular adaptive windows, and for planes the f32 kernels give back (a value of
//    magnitude above 2^50 or a non-finite one, whose f32 sums could overflow or cancel
//    differently from the reference's double sums).
#pragma once

#include <cstdint>
#include <vector>

namespace crucible::cpu {

// The geometry of one plane. Window pooling: output o covers o*s - p + [0, k) * d per dim.
// Adaptive: output o covers [floor(o*I/O), ceil((o+1)*I/O)).
struct PoolGeom {
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1};
  int64_t k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, p[3] = {0, 0, 0}, d[3] = {1, 1, 1};
  bool adaptive = false;
  // Average pooling: the divisor is `divisor` when non-zero, else the window's size counting
  // the padding (count_include_pad) or only its in-range elements.
  bool count_include_pad = true;
  int64_t divisor = 0;
  int64_t in_plane() const { return in[0] * in[1] * in[2]; }
  int64_t out_plane() const { return out[0] * out[1] * out[2]; }
};

// Per-thread scratch and plan of the vector kernels, made by pool_prepare once for all the
// planes a thread takes:
//  - f: a row of combined input rows (with its row ids in i, for max pooling) that holds the
//    input row's W elements at offset pool_row_pad() and room on both sides for every tap of
//    every output (whole vectors included); then the backward's rows of scaled grads;
//  - for output row r = od * OH + oh: the ids (d * H + h) of the in-range input rows of its
//    window, row_ids[row_start[r] .. row_start[r + 1]), and its outputs' divisors (average
//    pooling; 0 for an empty window, whose output is 0 and whose grad goes nowhere),
//    div[r * div_stride + ow].
inline constexpr int64_t kPoolMaxLanes = 16;
inline int64_t pool_row_pad(const PoolGeom& g) { return g.p[2] + 2 * kPoolMaxLanes; }
inline int64_t pool_row_len(const PoolGeom& g) {
  const int64_t reach = (g.out[2] + 2 * kPoolMaxLanes) * g.s[2] + g.k[2] * g.d[2];
  return pool_row_pad(g) + (g.in[2] > reach ? g.in[2] : reach) + 2 * kPoolMaxLanes;
}
struct PoolScratch {
  std::vector<float> f;
  std::vector<int32_t> i;
  std::vector<int32_t> row_ids, row_start;
  std::vector<float> div;
  int64_t div_stride = 0;
  int pad_fill = 0;  // what the row's margins hold: 0 unset, 1 -inf (max), 2 zeros (sum)
};
void pool_prepare(const PoolGeom& g, PoolScratch& s);

// Whether the vector kernels take this geometry (window pooling, planes below 2^31 elements).
bool pool_vector_ok(const PoolGeom& g);

struct PoolKernels {
  // Max pooling: values and flat in-plane indices.
  void (*max_fwd)(const PoolGeom& g, const float* x, float* y, int64_t* idx, PoolScratch& s);
  // Average pooling. false: the plane is left to the generic kernel (nothing useful written).
  bool (*avg_fwd)(const PoolGeom& g, const float* x, float* y, PoolScratch& s);
  // Average pooling's backward: writes the whole grad_input plane. false: as avg_fwd.
  bool (*avg_bwd)(const PoolGeom& g, const float* go, float* gi, PoolScratch& s);
};

const PoolKernels& pool_kernels_avx512();
const PoolKernels& pool_kernels_avx2();
const PoolKernels& pool_kernels_portable();
const PoolKernels& pool_kernels();  // the set for isa_level()

// The generic kernels, in the reference's order with double sums, for E = float or double (and
// int64 for average pooling: exact sums, truncating division).
// `acc` is scratch of at least in_plane() doubles (backwards).
// Max over one output's window (o: its index per dim), as pool_max_plane.
void pool_max_one(const PoolGeom& g, const float* x, const int64_t o[3], float* y, int64_t* idx);
template <typename E>
void pool_max_plane(const PoolGeom& g, const E* x, E* y, int64_t* idx);
template <typename E>
void pool_avg_plane(const PoolGeom& g, const E* x, E* y);
template <typename E>
void pool_avg_backward_plane(const PoolGeom& g, const E* go, E* gi, std::vector<double>& acc);
// Max pooling's backward: grad_input[idx[o]] += go[o]. Raises for an index outside the plane.
// The f32 version adds in f32 and gives the plane back (false) on a grad of magnitude above
// 2^50 or a non-finite one; the double one (E = double, or with `acc` for float) never does.
bool pool_max_backward_plane_f32(const float* go, const int64_t* idx, int64_t out_plane,
                                 int64_t in_plane, float* gi);
template <typename E>
void pool_max_backward_plane(const E* go, const int64_t* idx, int64_t out_plane, int64_t in_plane,
                             E* gi, std::vector<double>& acc);

// Copies `bytes` (a multiple of 4) to dst with streaming stores where dst is 16-byte aligned;
// pool_stream_fence() orders them before the thread signals that its work is done.
void pool_stream_copy(void* dst, const void* src, int64_t bytes);
void pool_stream_fence();

}  // namespace crucible::cpu
