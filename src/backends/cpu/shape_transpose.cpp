// Blocked copies of transposed sources (see copy_transposed in shape_copy.h). Gathering a
// transposed source run by run reads one element per cache line (and per page, for wide rows),
// so the copy is done in square tiles: a tile's source columns and destination rows are each a
// few cache lines long, and both stay in L1 while the tile is copied.
#include <algorithm>
#include <cstring>
#include <vector>

#include "backends/cpu/parallel.h"
#include "backends/cpu/shape_copy.h"

namespace crucible::cpu {

namespace {

// A tile edge: 64 elements, at most 256 bytes (runs of several cache lines, which the
// prefetchers follow; the tile buffer stays within 16 KiB of L1).
constexpr int64_t tile_edge(int64_t isize) { return std::min<int64_t>(64, 256 / isize); }

// One tile: dst[a * ldd + b] = src[a + b * lds] for a < na, b < nb. Through an L1 buffer: the
// source lines are read whole one after another and the destination lines written whole, so
// power-of-two strides (every line of a tile in one cache set) cost no conflict misses.
template <typename T>
void tile(const char* src, int64_t lds, char* dst, int64_t ldd, int64_t na, int64_t nb) {
  constexpr int64_t t = tile_edge(static_cast<int64_t>(sizeof(T)));
  T buf[t * t];
  const T* s = reinterpret_cast<const T*>(src);
  T* d = reinterpret_cast<T*>(dst);
  const auto row = static_cast<int64_t>(sizeof(T)) * na;
  for (int64_t b = 0; b < nb; ++b)
    copy_run(reinterpret_cast<char*>(buf + b * t), reinterpret_cast<const char*>(s + b * lds), row);
  for (int64_t a = 0; a < na; ++a)
    for (int64_t b = 0; b < nb; ++b) d[a * ldd + b] = buf[b * t + a];
}

using TileFn = void (*)(const char*, int64_t, char*, int64_t, int64_t, int64_t);

TileFn tile_for(int64_t isize) {
  switch (isize) {
    case 1:
      return &tile<uint8_t>;
    case 2:
      return &tile<uint16_t>;
    case 4:
      return &tile<uint32_t>;
    case 8:
      return &tile<uint64_t>;
    default:
      return nullptr;
  }
}

}  // namespace

bool copy_transposed(const Walk& w, char* dst) {
  const int nd = static_cast<int>(w.sizes.size());
  const int64_t is = w.isize;
  if (nd < 2 || nd > kMaxWalkDims || w.numel < 4096) return false;
  const int64_t s_last = w.strides[nd - 1];
  if (s_last < 0 || s_last * is < 64) return false;  // gathered runs already share lines
  int k = -1;
  for (int d = 0; d < nd - 1; ++d)
    if (w.strides[d] == 1) k = d;
  const TileFn fn = tile_for(is);
  if (k < 0 || fn == nullptr) return false;
  // Destination strides (contiguous, in elements) of the walk's dims.
  std::vector<int64_t> dst_stride(static_cast<size_t>(nd));
  dst_stride[nd - 1] = 1;
  for (int d = nd - 2; d >= 0; --d) dst_stride[d] = dst_stride[d + 1] * w.sizes[d + 1];
  const int64_t na = w.sizes[k], nb = w.sizes[nd - 1];
  const int64_t t = tile_edge(is);
  const int64_t b_tiles = (nb + t - 1) / t;
  const int64_t outer = w.numel / (na * nb);
  const int64_t lds = s_last, ldd = dst_stride[k];
  // Tasks: (outer index, band of t source rows along b); a band walks its rows from start to
  // end, so each source row is one sequential stream the prefetcher follows.
  parallel_for(0, outer * b_tiles, std::max<int64_t>(1, 16384 / (t * na)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t task = lo; task < hi; ++task) {
                   const int64_t o = task / b_tiles, b0 = task % b_tiles * t;
                   // Offsets of the outer index (every dim but k and the last).
                   int64_t src_off = 0, dst_off = 0, rem = o;
                   for (int d = nd - 2; d >= 0; --d) {
                     if (d == k) continue;
                     const int64_t i = rem % w.sizes[d];
                     rem /= w.sizes[d];
                     src_off += i * w.strides[d];
                     dst_off += i * dst_stride[d];
                   }
                   const int64_t b_n = std::min(t, nb - b0);
                   for (int64_t a0 = 0; a0 < na; a0 += t)
                     fn(w.base + (src_off + a0 + b0 * lds) * is, lds,
                        dst + (dst_off + a0 * ldd + b0) * is, ldd, std::min(t, na - a0), b_n);
                 }
               });
  return true;
}

}  // namespace crucible::cpu
