// The data movement under the shape kernels (cat, pads, *_backward of views, repeat, copies of
// views, zero and value fills): bytes moved, never values converted, so every dtype of one
// itemsize shares one loop and NaN payloads survive.
//
// Outputs are written through produce_bytes: a contiguous region is cut into chunks that a
// producer fills; chunks are spread over the thread pool, and a large region is produced into an
// L1-sized staging buffer and streamed to memory with non-temporal stores, so that writing the
// output does not first read it (a cold output line costs a read and a write otherwise).
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include "crucible/core/tensor.h"
#include "crucible/core/value.h"

namespace crucible::cpu {

// Outputs from this size up are streamed (non-temporal stores through a staging buffer).
// Smaller outputs stay in the last-level cache (260 MB here) for the op that reads them next,
// and plain stores measured faster there: clone of 58 MB 3.0 ms plain vs 3.6 ms streamed,
// select_backward into 2.4 MB 40-70 us plain vs 70-130 us streamed (the threshold was 1 MiB).
constexpr int64_t kStreamMinBytes = int64_t{1} << 26;

// Writes bytes [lo, hi) of the region to dst (dst is where byte lo goes).
using ByteProducer = std::function<void(int64_t lo, int64_t hi, char* dst)>;

// Produces the contiguous region out[0, nbytes) with `fill`, in parallel. Chunk boundaries are
// multiples of 64 bytes from `out`, so a producer cut at a boundary is always cut between
// elements.
void produce_bytes(char* out, int64_t nbytes, const ByteProducer& fill);

// A tensor's elements in row-major (logical) order as a coalesced strided walk: size-1 dims
// dropped, neighbouring dims merged where one stride steps over the other. Strides in elements.
constexpr int kMaxWalkDims = 16;  // more coalesced dims than this are walked element by element
struct Walk {
  const char* base = nullptr;  // logical element 0
  int64_t isize = 1;
  int64_t numel = 0;
  std::vector<int64_t> sizes, strides;  // at least one dim (a 0-d tensor walks as [1])
  bool contiguous() const { return sizes.size() == 1 && (strides[0] == 1 || sizes[0] <= 1); }
};
Walk walk_of(const Tensor& t);
Walk walk_of(const char* base, int64_t isize, const Shape& sizes, const Shape& strides);

// Writes elements [a, b) of `w` (logical order) contiguously to dst; `base` replaces w.base.
void gather(const Walk& w, const char* base, int64_t a, int64_t b, char* dst);
inline void gather(const Walk& w, int64_t a, int64_t b, char* dst) { gather(w, w.base, a, b, dst); }

// Copies the walk's elements into contiguous dst in square tiles when its innermost stride is
// wide (a transposed source: one element per cache line) and another dim has stride 1; false
// (nothing written) when the walk is not such a transpose.
bool copy_transposed(const Walk& w, char* dst);

// Copies n bytes that do not overlap; short runs without a call.
inline void copy_run(char* dst, const char* src, int64_t n) {
  if (n <= 16) {
    if (n >= 8) {
      uint64_t x, y;
      std::memcpy(&x, src, 8);
      std::memcpy(&y, src + n - 8, 8);
      std::memcpy(dst, &x, 8);
      std::memcpy(dst + n - 8, &y, 8);
    } else if (n >= 4) {
      uint32_t x, y;
      std::memcpy(&x, src, 4);
      std::memcpy(&y, src + n - 4, 4);
      std::memcpy(dst, &x, 4);
      std::memcpy(dst + n - 4, &y, 4);
    } else {
      for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
    }
  } else if (n <= 64) {
    // Overlapping 16-byte moves from both ends.
    char a[16], b[16], c[16], d[16];
    std::memcpy(a, src, 16);
    std::memcpy(b, src + (n > 32 ? 16 : n - 16), 16);
    std::memcpy(c, src + (n > 32 ? n - 32 : 0), 16);
    std::memcpy(d, src + n - 16, 16);
    std::memcpy(dst, a, 16);
    std::memcpy(dst + (n > 32 ? 16 : n - 16), b, 16);
    std::memcpy(dst + (n > 32 ? n - 32 : 0), c, 16);
    std::memcpy(dst + n - 16, d, 16);
  } else {
    std::memcpy(dst, src, static_cast<size_t>(n));
  }
}

// len elements of itemsize `is` read at stride `s` (elements; negative and 0 too) to dst.
void strided_elems(char* dst, const char* src, int64_t s, int64_t len, int64_t is);

// An element value replicated to 16 bytes (itemsize 1, 2, 4 or 8), for fill_run.
struct Pattern {
  alignas(16) char bytes[16] = {};
  int64_t isize = 1;
  bool zero = true;
};
Pattern pattern_of(const void* elem, int64_t isize);
// Writes `count` elements of the pattern at dst (element-aligned).
void fill_run(char* dst, const Pattern& p, int64_t count);
// Fills the contiguous bytes [dst, dst + nbytes) with the pattern, through produce_bytes.
void fill_bytes(char* dst, int64_t nbytes, const Pattern& p);

// One part of every row of a row-structured output: elements [row * n, row * n + n) of
// `walk`'s logical order, or n copies of `fill` when `is_fill`.
struct Piece {
  Walk walk;
  int64_t n = 0;
  bool is_fill = false;
  Pattern fill;
};
Piece copy_piece(const Tensor& src, int64_t outer);  // src's elements split into `outer` rows
Piece fill_piece(const Pattern& p, int64_t n);
// Writes `outer` rows, each the pieces side by side, into the contiguous tensor `out`.
void write_rows(const Tensor& out, int64_t outer, const std::vector<Piece>& pieces);

// dst = src: same shape (src may be expanded to it); any strides; dtypes may differ (then the
// elementwise engine converts). dst's elements must be distinct and not overlap src.
void copy_into(const Tensor& src, const Tensor& dst);
// A destination-passing kernel's buffer for the meta function's output `out`: out itself (viewed
// as `shape`) when it is contiguous in the dtype the kernel computes in, else a fresh contiguous
// tensor of that dtype, which store_output converts and lays out into out.
inline Tensor output_buffer(const Value& out, const Shape& shape, DType work) {
  if (out.is_tensor() && out.tensor().dtype() == work && out.tensor().is_contiguous())
    return out.tensor().view(shape);
  return Tensor::uninitialized(shape, work);
}
// The result `t` (contiguous) into the meta function's output `out`: nothing to do when it was
// computed there (output_buffer gave out itself), else converted (rounded once) and laid out into
// it; fp8, which the elementwise engine does not convert, through the core conversion.
inline void store_output(const Tensor& t, const Value& out) {
  if (!out.is_tensor()) return;
  const Tensor& o = out.tensor();
  if (t.data_ptr() == o.data_ptr() && t.dtype() == o.dtype()) return;
  auto fp8 = [](DType d) { return d == DType::Float8E4M3FN || d == DType::Float8E5M2; };
  if (fp8(t.dtype()) || fp8(o.dtype()))
    o.copy_from(t.view(o.shape()));
  else
    copy_into(t.view(o.shape()), o);
}
// A new contiguous tensor holding src's values (as dtype `dt`).
Tensor contiguous_copy(const Tensor& src, DType dt);
inline Tensor contiguous_copy(const Tensor& src) { return contiguous_copy(src, src.dtype()); }
// Every element of dst (any strides, distinct elements) = the pattern.
void fill_tensor(const Tensor& dst, const Pattern& p);
// The same for a kernel's fresh output (its storage holds nothing else): a dense one in any
// memory order is filled as the bytes of its storage.
void fill_output(const Tensor& out, const Pattern& p);
// The pattern of the Scalar `s` in dtype `dt` through c10's checked conversion (fill_'s:
// raises "value cannot be converted ... without overflow").
Pattern pattern_of_scalar(const Scalar& s, DType dt);

// The value `v` stored in dtype `dt` as Tensor::set / set_int store it (floating values
// rounded once, integers truncated or wrapped, bool v != 0).
Pattern pattern_of_double(double v, DType dt);
Pattern pattern_of_int(int64_t v, DType dt);

}  // namespace crucible::cpu
