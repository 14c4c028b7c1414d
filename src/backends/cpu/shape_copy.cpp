// The byte movers of the shape kernels (see shape_copy.h).
#include "backends/cpu/shape_copy.h"

#include <emmintrin.h>  // SSE2 (x86-64 baseline): 16-byte non-temporal stores

#include <algorithm>
#include <atomic>

#include "backends/cpu/parallel.h"
#include "backends/cpu/pointwise_engine.h"
#include "crucible/core/error.h"
#include "crucible/ops/rules/creation.h"

namespace crucible::cpu {

namespace {

// Non-streamed regions are split in units of 4 KiB, in parallel from 256 KiB up (below that,
// waking a second thread costs about what the copy does).
constexpr int64_t kUnit = 4096;
constexpr int64_t kUnitGrain = 64;
// Streamed regions are produced 16 KiB at a time into a buffer that stays in L1, and taken by
// the threads 256 KiB at a time.
constexpr int64_t kStage = 16384;
constexpr int64_t kStageClaim = 16;

// n bytes from an L1 buffer (16-byte aligned) to dst (16-byte aligned) with non-temporal stores.
void stream_out(char* dst, const char* buf, int64_t n) {
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m128i a = _mm_load_si128(reinterpret_cast<const __m128i*>(buf + i));
    const __m128i b = _mm_load_si128(reinterpret_cast<const __m128i*>(buf + i + 16));
    const __m128i c = _mm_load_si128(reinterpret_cast<const __m128i*>(buf + i + 32));
    const __m128i d = _mm_load_si128(reinterpret_cast<const __m128i*>(buf + i + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 48), d);
  }
  for (; i + 16 <= n; i += 16)
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i),
                     _mm_load_si128(reinterpret_cast<const __m128i*>(buf + i)));
  std::memcpy(dst + i, buf + i, static_cast<size_t>(n - i));
}

template <typename T>
void strided_elems_t(char* dst, const char* src, int64_t s, int64_t len) {
  T* d = reinterpret_cast<T*>(dst);
  for (int64_t i = 0; i < len; ++i) std::memcpy(d + i, src + i * s * int64_t{sizeof(T)}, sizeof(T));
}

}  // namespace

void strided_elems(char* dst, const char* src, int64_t s, int64_t len, int64_t is) {
  switch (is) {
    case 1:
      return strided_elems_t<uint8_t>(dst, src, s, len);
    case 2:
      return strided_elems_t<uint16_t>(dst, src, s, len);
    case 4:
      return strided_elems_t<uint32_t>(dst, src, s, len);
    case 8:
      return strided_elems_t<uint64_t>(dst, src, s, len);
    default:
      for (int64_t i = 0; i < len; ++i)
        std::memcpy(dst + i * is, src + i * s * is, static_cast<size_t>(is));
  }
}

// Calls fn(i0, i1) over [0, n) in pieces of `claim` items that the pool's threads take in turn
// from a shared counter: a thread that is descheduled (a loaded machine) holds up at most one
// piece, instead of the half of the work a static split would leave it.
void claim_pieces(int64_t n, int64_t claim, const std::function<void(int64_t, int64_t)>& fn) {
  const int threads = num_threads();
  if (n <= claim || threads == 1) {
    fn(0, n);
    return;
  }
  std::atomic<int64_t> next{0};
  parallel_for(0, threads, 1, [&](int64_t, int64_t) {
    for (;;) {
      const int64_t i0 = next.fetch_add(claim, std::memory_order_relaxed);
      if (i0 >= n) return;
      fn(i0, std::min(i0 + claim, n));
    }
  });
}

void produce_bytes(char* out, int64_t nbytes, const ByteProducer& fill) {
  if (nbytes <= 0) return;
  const bool stream = nbytes >= kStreamMinBytes && reinterpret_cast<uintptr_t>(out) % 16 == 0;
  if (!stream) {
    const int64_t units = (nbytes + kUnit - 1) / kUnit;
    claim_pieces(units, kUnitGrain, [&](int64_t u0, int64_t u1) {
      const int64_t a = u0 * kUnit, b = std::min(u1 * kUnit, nbytes);
      fill(a, b, out + a);
    });
    return;
  }
  const int64_t chunks = (nbytes + kStage - 1) / kStage;
  claim_pieces(chunks, kStageClaim, [&](int64_t c0, int64_t c1) {
    alignas(64) char buf[kStage];
    for (int64_t c = c0; c < c1; ++c) {
      const int64_t a = c * kStage, b = std::min(a + kStage, nbytes);
      fill(a, b, buf);
      stream_out(out + a, buf, b - a);
    }
    _mm_sfence();  // the streamed lines are visible before the pool reports the piece done
  });
}

Walk walk_of(const char* base, int64_t isize, const Shape& sizes, const Shape& strides) {
  Walk w;
  w.base = base;
  w.isize = isize;
  w.numel = numel_of(sizes);
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1) continue;
    if (!w.sizes.empty() && w.strides.back() == strides[d] * sizes[d]) {
      w.sizes.back() *= sizes[d];
      w.strides.back() = strides[d];
    } else {
      w.sizes.push_back(sizes[d]);
      w.strides.push_back(strides[d]);
    }
  }
  if (w.sizes.empty()) {
    w.sizes.push_back(w.numel == 0 ? 0 : 1);
    w.strides.push_back(1);
  }
  return w;
}

Walk walk_of(const Tensor& t) {
  return walk_of(static_cast<const char*>(t.data_ptr()), static_cast<int64_t>(t.itemsize()),
                 t.shape(), t.strides());
}

void gather(const Walk& w, const char* base, int64_t a, int64_t b, char* dst) {
  if (a >= b) return;
  const int64_t is = w.isize;
  if (w.contiguous()) return copy_run(dst, base + a * is, (b - a) * is);
  const int nd = static_cast<int>(w.sizes.size());
  if (nd > kMaxWalkDims) {
    // Rare: one element at a time through the logical index.
    for (int64_t e = a; e < b; ++e, dst += is) {
      int64_t rem = e, off = 0;
      for (int d = nd - 1; d >= 0; --d) {
        off += rem % w.sizes[d] * w.strides[d];
        rem /= w.sizes[d];
      }
      std::memcpy(dst, base + off * is, static_cast<size_t>(is));
    }
    return;
  }
  // Locals, not the Walk's vectors: the byte stores below may alias anything reachable through
  // a pointer, which would make the compiler reload every size and stride after each run.
  int64_t sz[kMaxWalkDims] = {}, st[kMaxWalkDims] = {}, idx[kMaxWalkDims] = {};
  for (int d = 0; d < nd; ++d) {
    sz[d] = w.sizes[d];
    st[d] = w.strides[d];
  }
  const int64_t inner = sz[nd - 1], s_in = st[nd - 1];
  int64_t rem = a / inner, j = a % inner, off = 0;
  for (int d = nd - 2; d >= 0; --d) {
    idx[d] = rem % sz[d];
    rem /= sz[d];
    off += idx[d] * st[d];
  }
  int64_t pos = a;
  for (;;) {
    const int64_t len = std::min(inner - j, b - pos);
    const char* s = base + (off + j * s_in) * is;
    if (s_in == 1) {
      copy_run(dst, s, len * is);
    } else {
      strided_elems(dst, s, s_in, len, is);
    }
    dst += len * is;
    pos += len;
    if (pos >= b) return;
    j = 0;
    int d = nd - 2;
    off += st[d];
    while (++idx[d] == sz[d]) {
      off -= st[d] * sz[d];
      idx[d] = 0;
      if (--d < 0) return;  // past the last element (only when b == numel)
      off += st[d];
    }
  }
}

Pattern pattern_of(const void* elem, int64_t isize) {
  Pattern p;
  p.isize = isize;
  const char* e = static_cast<const char*>(elem);
  for (int64_t i = 0; i < 16; i += isize) std::memcpy(p.bytes + i, e, static_cast<size_t>(isize));
  p.zero = true;
  for (char c : p.bytes) p.zero = p.zero && c == 0;
  return p;
}

void fill_run(char* dst, const Pattern& p, int64_t count) {
  const int64_t n = count * p.isize;
  if (p.zero) {
    std::memset(dst, 0, static_cast<size_t>(n));
    return;
  }
  // dst is element-aligned and 16 is a multiple of the itemsize: the pattern stays in phase.
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) std::memcpy(dst + i, p.bytes, 16);
  std::memcpy(dst + i, p.bytes, static_cast<size_t>(n - i));
}

void fill_bytes(char* dst, int64_t nbytes, const Pattern& p) {
  produce_bytes(dst, nbytes,
                [&](int64_t lo, int64_t hi, char* d) { fill_run(d, p, (hi - lo) / p.isize); });
}

Pattern pattern_of_double(double v, DType dt) {
  alignas(16) char e[16] = {};
  store_from_double(e, dt, v);
  return pattern_of(e, static_cast<int64_t>(itemsize(dt)));
}

Pattern pattern_of_int(int64_t v, DType dt) {
  alignas(16) char e[16] = {};
  store_from_int(e, dt, v);
  return pattern_of(e, static_cast<int64_t>(itemsize(dt)));
}

Piece copy_piece(const Tensor& src, int64_t outer) {
  Piece p;
  p.walk = walk_of(src);
  p.n = outer == 0 ? 0 : src.numel() / outer;
  return p;
}

Piece fill_piece(const Pattern& fill, int64_t n) {
  Piece p;
  p.n = n;
  p.is_fill = true;
  p.fill = fill;
  return p;
}

void write_rows(const Tensor& out, int64_t outer, const std::vector<Piece>& pieces) {
  const int64_t is = static_cast<int64_t>(out.itemsize());
  int64_t row = 0;
  for (const Piece& p : pieces) row += p.n;
  if (outer == 0 || row == 0) return;
  produce_bytes(static_cast<char*>(out.data_ptr()), outer * row * is,
                [&](int64_t lo, int64_t hi, char* dst) {
                  const int64_t e1 = hi / is;
                  int64_t e = lo / is;
                  int64_t r = e / row, pos = e % row;
                  while (e < e1) {
                    int64_t start = 0;
                    for (const Piece& p : pieces) {
                      const int64_t end = start + p.n;
                      if (pos < end && e < e1) {
                        const int64_t take = std::min(end - pos, e1 - e);
                        if (p.is_fill) {
                          fill_run(dst, p.fill, take);
                        } else {
                          const int64_t a = r * p.n + (pos - start);
                          gather(p.walk, a, a + take, dst);
                        }
                        dst += take * is;
                        e += take;
                        pos += take;
                      }
                      start = end;
                    }
                    ++r;
                    pos = 0;
                  }
                });
}

void copy_into(const Tensor& src, const Tensor& dst) {
  if (dst.numel() == 0) return;
  const Tensor s = src.shape() == dst.shape() ? src : src.expand(dst.shape());
  if (s.dtype() != dst.dtype() || !dst.is_contiguous()) {
    // The compute type holds both dtypes exactly: f64 when either is f64, i64 between
    // integers, else f32 (f16/bf16/f32 and integers into them, as the engine converts).
    Compute c = Compute::F32;
    if (s.dtype() == DType::Float64 || dst.dtype() == DType::Float64)
      c = Compute::F64;
    else if (is_integral(s.dtype(), true) && is_integral(dst.dtype(), true))
      c = Compute::I64;
    const Tensor ins[] = {s};
    pw_run(PwOp::Identity, ins, dst, c, PwParams{});
    return;
  }
  const Walk w = walk_of(s);
  const int64_t is = w.isize;
  if (copy_transposed(w, static_cast<char*>(dst.data_ptr()))) return;
  produce_bytes(static_cast<char*>(dst.data_ptr()), dst.numel() * is,
                [&](int64_t lo, int64_t hi, char* d) { gather(w, lo / is, hi / is, d); });
}

Tensor contiguous_copy(const Tensor& src, DType dt) {
  Tensor out = Tensor::uninitialized(src.shape(), dt);
  copy_into(src, out);
  return out;
}

void fill_tensor(const Tensor& dst, const Pattern& p) {
  if (dst.numel() == 0) return;
  if (dst.is_contiguous()) {
    fill_bytes(static_cast<char*>(dst.data_ptr()), dst.numel() * p.isize, p);
    return;
  }
  Tensor one = Tensor::uninitialized({}, dst.dtype());
  std::memcpy(one.data_ptr(), p.bytes, static_cast<size_t>(p.isize));
  const Tensor ins[] = {one};
  pw_run(PwOp::Identity, ins, dst, compute_for(dst.dtype()), PwParams{});
}

void fill_output(const Tensor& out, const Pattern& p) {
  if (out.numel() == 0) return;
  const int64_t nbytes = out.numel() * p.isize;
  if (static_cast<size_t>(nbytes) == out.storage()->nbytes() && out.offset() == 0)
    fill_bytes(static_cast<char*>(out.data_ptr()), nbytes, p);
  else
    fill_tensor(out, p);
}

Pattern pattern_of_scalar(const Scalar& s, DType dt) {
  Tensor one = Tensor::uninitialized({}, dt);
  creation::fill_with(one, s);
  return pattern_of(one.data_ptr(), static_cast<int64_t>(one.itemsize()));
}

}  // namespace crucible::cpu
