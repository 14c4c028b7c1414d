// The `cpu` backend's nearest upsampling forward: element copies of any dtype. Each output row
// gathers its source row through the W taps, and an output row with the same source row as the
// one above it (every other row at scale 2) is a copy of that row. Planes spread over the pool.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "backends/cpu/parallel.h"
#include "backends/cpu/upsample_internal.h"

namespace crucible::cpu::upsample {
namespace {

template <typename T>
void gather_row(T* __restrict out, const T* __restrict in, const int64_t* src, int64_t n) {
  for (int64_t o = 0; o < n; ++o) out[o] = in[src[o]];
}

template <typename T>
void nearest_t(const Plan& p, const T* x, T* out) {
  const int64_t plane_in = p.ih * p.iw, plane_out = p.oh * p.ow;
  const int64_t* sx = p.tw.src.data();
  const int64_t* sy = p.th.src.data();
  parallel_for(0, p.nc, std::max<int64_t>(1, 65536 / std::max<int64_t>(plane_out, 1)),
               [&](int64_t c0, int64_t c1) {
                 for (int64_t c = c0; c < c1; ++c) {
                   const T* xp = x + c * plane_in;
                   T* op = out + c * plane_out;
                   for (int64_t y = 0; y < p.oh; ++y) {
                     T* orow = op + y * p.ow;
                     if (y > 0 && sy[y] == sy[y - 1])
                       std::memcpy(orow, orow - p.ow, static_cast<size_t>(p.ow) * sizeof(T));
                     else
                       gather_row(orow, xp + sy[y] * p.iw, sx, p.ow);
                   }
                 }
               });
}

}  // namespace

void nearest_copy(const Plan& p, const char* x, char* out, size_t width) {
  switch (width) {
    case 1:
      return nearest_t(p, reinterpret_cast<const uint8_t*>(x), reinterpret_cast<uint8_t*>(out));
    case 2:
      return nearest_t(p, reinterpret_cast<const uint16_t*>(x), reinterpret_cast<uint16_t*>(out));
    case 4:
      return nearest_t(p, reinterpret_cast<const uint32_t*>(x), reinterpret_cast<uint32_t*>(out));
    default:
      return nearest_t(p, reinterpret_cast<const uint64_t*>(x), reinterpret_cast<uint64_t*>(out));
  }
}

}  // namespace crucible::cpu::upsample
