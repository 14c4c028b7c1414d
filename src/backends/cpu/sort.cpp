// The `cpu` backend's sorting and selection: sort (default and stable), topk, nonzero and
// _local_scalar_dense.
//
// sort and topk turn every element of a row into an unsigned key whose integer order is the
// element order ATen sorts by: floats by their bits with the sign folded (negative values
// complemented), -0 read as +0 so that the zeros tie, every NaN as the largest key; signed
// integers with the sign bit flipped; descending order complements the key. Keys of up to 32
// bits are packed above the element's index in one 64-bit word, so that sorting the words
// orders by key and then by index: the sort is stable whatever algorithm orders the words (an
// LSD radix sort of the key digits for long rows, std::sort for short ones; topk selects with
// nth_element). 64-bit keys sort as (key, index) pairs. Values are gathered from the row by
// index, so their bits (NaN payloads, the sign of zero) are the input's. Rows are spread over
// the pool.
//
// nonzero counts the nonzero elements per chunk (NaN is nonzero, -0 is zero), allocates the
// [count, ndim] result from the total and writes each chunk's coordinates at its prefix.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/cpu/kernel_table.h"
#include "backends/cpu/parallel.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"

namespace crucible::cpu {
namespace {

// ---- keys ------------------------------------------------------------------------------------

// The sort key of one element at `p` (dtype `t`): order-preserving, NaN largest, -0 == +0.
template <DType kT>
inline uint64_t key_of(const void* p);

template <>
inline uint64_t key_of<DType::Bool>(const void* p) {
  return *static_cast<const uint8_t*>(p) != 0 ? 1 : 0;
}
template <>
inline uint64_t key_of<DType::UInt8>(const void* p) {
  return *static_cast<const uint8_t*>(p);
}
template <>
inline uint64_t key_of<DType::Int8>(const void* p) {
  return static_cast<uint8_t>(*static_cast<const uint8_t*>(p) ^ 0x80u);
}
template <>
inline uint64_t key_of<DType::Int16>(const void* p) {
  uint16_t b;
  std::memcpy(&b, p, 2);
  return static_cast<uint16_t>(b ^ 0x8000u);
}
template <>
inline uint64_t key_of<DType::Int32>(const void* p) {
  uint32_t b;
  std::memcpy(&b, p, 4);
  return b ^ 0x80000000u;
}
template <>
inline uint64_t key_of<DType::Int64>(const void* p) {
  uint64_t b;
  std::memcpy(&b, p, 8);
  return b ^ (uint64_t{1} << 63);
}

// A floating key of `bits` with sign bit `sign` and infinity's magnitude `inf`: negative
// values complemented, positive ones with the sign bit set, both zeros as +0, NaN the largest.
// Branch-free: the signs of real data are random.
template <typename U>
inline uint64_t float_key(U bits, U sign, U inf) {
  constexpr int kTop = 8 * sizeof(U) - 1;
  const U mag = static_cast<U>(bits & static_cast<U>(sign - 1));
  const U b = mag == 0 ? U{0} : bits;
  const auto neg = static_cast<U>(U{0} - static_cast<U>(b >> kTop));  // all ones when negative
  const auto key = static_cast<U>(b ^ static_cast<U>(neg | sign));
  return mag > inf ? static_cast<U>(~U{0}) : key;
}
template <>
inline uint64_t key_of<DType::Float16>(const void* p) {
  uint16_t b;
  std::memcpy(&b, p, 2);
  return float_key<uint16_t>(b, 0x8000u, 0x7C00u);
}
template <>
inline uint64_t key_of<DType::BFloat16>(const void* p) {
  uint16_t b;
  std::memcpy(&b, p, 2);
  return float_key<uint16_t>(b, 0x8000u, 0x7F80u);
}
template <>
inline uint64_t key_of<DType::Float32>(const void* p) {
  uint32_t b;
  std::memcpy(&b, p, 4);
  return float_key<uint32_t>(b, 0x80000000u, 0x7F800000u);
}
template <>
inline uint64_t key_of<DType::Float64>(const void* p) {
  uint64_t b;
  std::memcpy(&b, p, 8);
  return float_key<uint64_t>(b, uint64_t{1} << 63, uint64_t{0x7FF} << 52);
}

constexpr int key_bits(DType t) {
  switch (t) {
    case DType::Bool:
    case DType::UInt8:
    case DType::Int8:
      return 8;
    case DType::Int16:
    case DType::Float16:
    case DType::BFloat16:
      return 16;
    case DType::Int32:
    case DType::Float32:
      return 32;
    default:
      return 64;
  }
}

// ---- row geometry ----------------------------------------------------------------------------

// The rows of `self` along `dim`: row r (in row-major order over the other dims) starts at
// element base[r] of self's data and steps by `stride`; the output row r of length out_len
// starts at (r / inner) * out_len * inner + r % inner and steps by `inner` (contiguous output).
struct Rows {
  std::vector<int64_t> base;
  int64_t len = 1, stride = 0, inner = 1, out_len = 1;
  int64_t count() const { return static_cast<int64_t>(base.size()); }
  int64_t out_at(int64_t r, int64_t j) const {
    return (r / inner) * out_len * inner + r % inner + j * inner;
  }
};

Rows rows_of(const Tensor& self, int64_t dim, int64_t out_len) {
  Rows g;
  g.out_len = out_len;
  if (self.dim() == 0) {
    g.base = {0};
    return g;
  }
  g.len = self.size(dim);
  g.stride = self.stride(dim);
  Shape shape, strides;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (d == dim) continue;
    shape.push_back(self.size(d));
    strides.push_back(self.stride(d));
    if (d > dim) g.inner *= self.size(d);
  }
  const int64_t n = numel_of(shape);
  g.base.resize(static_cast<size_t>(n));
  std::vector<int64_t> idx(shape.size(), 0);
  int64_t off = 0;
  for (int64_t r = 0; r < n; ++r) {
    g.base[static_cast<size_t>(r)] = off;
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      const auto u = static_cast<size_t>(d);
      off += strides[u];
      if (++idx[u] < shape[u]) break;
      off -= strides[u] * shape[u];
      idx[u] = 0;
    }
  }
  return g;
}

// ---- sorting one row -------------------------------------------------------------------------

// Stable LSD radix sort of packed words by their high `bits` bits (the key above a 32-bit
// index); `tmp` is scratch of the same size. Digits that every key shares are skipped.
void radix_sort_packed(std::vector<uint64_t>& w, std::vector<uint64_t>& tmp, int bits) {
  constexpr int kDigit = 11;
  constexpr size_t kBuckets = size_t{1} << kDigit;
  const size_t n = w.size();
  tmp.resize(n);
  std::vector<uint32_t> count(kBuckets);
  for (int shift = 32; shift < 32 + bits; shift += kDigit) {
    std::fill(count.begin(), count.end(), 0);
    for (uint64_t x : w) ++count[(x >> shift) & (kBuckets - 1)];
    if (count[(w[0] >> shift) & (kBuckets - 1)] == n) continue;  // one digit everywhere
    uint32_t sum = 0;
    for (uint32_t& c : count) {
      const uint32_t k = c;
      c = sum;
      sum += k;
    }
    for (uint64_t x : w) tmp[count[(x >> shift) & (kBuckets - 1)]++] = x;
    w.swap(tmp);
  }
}

// What the kernel keeps of each sorted row: all of it (sort), or the first k (topk), sorted or
// in any order.
struct Selection {
  int64_t k = -1;  // < 0: the whole row
  bool descending = false;
  bool sorted = true;
};

// A 64-bit key and its index, ordered by both (the words of 64-bit keys).
struct KeyIndex {
  uint64_t key;
  int64_t idx;
  bool operator<(const KeyIndex& o) const { return key != o.key ? key < o.key : idx < o.idx; }
};

// Puts the `keep` smallest of the row's words make(0..len) first in `w`, ascending when
// `sorted` (all of them when keep == len). Few of many: a max-heap of the best so far, which
// most words only compare with; more: nth_element; a whole row: an LSD radix sort of the key
// bits (`radix_bits` > 0, packed words) or std::sort.
template <typename W, typename Make>
void order_row(std::vector<W>& w, std::vector<W>& tmp, int64_t len, int64_t keep, bool sorted,
               int radix_bits, Make make) {
  if (keep == 0) return;
  if (keep * 16 <= len && keep <= 4096) {
    for (int64_t j = 0; j < keep; ++j) w[j] = make(j);
    const auto top = w.begin() + keep;
    std::make_heap(w.begin(), top);
    for (int64_t j = keep; j < len; ++j) {
      const W x = make(j);
      if (x < w[0]) {
        std::pop_heap(w.begin(), top);
        w[keep - 1] = x;
        std::push_heap(w.begin(), top);
      }
    }
    if (sorted) std::sort_heap(w.begin(), top);
    return;
  }
  for (int64_t j = 0; j < len; ++j) w[j] = make(j);
  if (keep < len) {
    std::nth_element(w.begin(), w.begin() + (keep - 1), w.end());
    if (sorted) std::sort(w.begin(), w.begin() + keep);
  } else if constexpr (std::is_same_v<W, uint64_t>) {
    if (radix_bits > 0 && len >= 1024)
      radix_sort_packed(w, tmp, radix_bits);
    else
      std::sort(w.begin(), w.end());
  } else {
    std::sort(w.begin(), w.end());
  }
}

template <DType kT>
void sort_rows_typed(const Tensor& self, const Rows& g, const Selection& sel, const Tensor& values,
                     const Tensor& indices) {
  constexpr int kBits = key_bits(kT);
  const size_t item = self.itemsize();
  const auto* src = static_cast<const char*>(self.data_ptr());
  auto* vout = static_cast<char*>(values.data_ptr());
  auto* iout = indices.data<int64_t>();
  const int64_t len = g.len, step = g.stride * static_cast<int64_t>(item);
  const int64_t keep = sel.k < 0 ? len : sel.k;
  const uint64_t flip =
      sel.descending ? (kBits == 64 ? ~uint64_t{0} : (uint64_t{1} << kBits) - 1) : 0;
  auto emit = [&](int64_t r, int64_t j, int64_t idx) {
    const int64_t o = g.out_at(r, j);
    std::memcpy(vout + o * item, src + (g.base[r] + idx * g.stride) * item, item);
    iout[o] = idx;
  };
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(len, 1));
  parallel_for(0, g.count(), grain, [&](int64_t r0, int64_t r1) {
    using W = std::conditional_t<kBits <= 32, uint64_t, KeyIndex>;
    std::vector<W> w(static_cast<size_t>(len)), tmp;
    for (int64_t r = r0; r < r1; ++r) {
      const char* row = src + g.base[r] * item;
      if constexpr (kBits <= 32) {
        order_row(w, tmp, len, keep, sel.sorted, kBits, [&](int64_t j) {
          return ((key_of<kT>(row + j * step) ^ flip) << 32) | static_cast<uint64_t>(j);
        });
        for (int64_t j = 0; j < keep; ++j) emit(r, j, static_cast<int64_t>(w[j] & 0xFFFFFFFFu));
      } else {
        order_row(w, tmp, len, keep, sel.sorted, 0, [&](int64_t j) {
          return KeyIndex{key_of<kT>(row + j * step) ^ flip, j};
        });
        for (int64_t j = 0; j < keep; ++j) emit(r, j, w[j].idx);
      }
    }
  });
}

// Sorts `self` along `dim` into the meta function's outputs (values, indices).
void sort_into(const Tensor& self, int64_t dim, const Selection& sel, const Values& out) {
  const Tensor& values = out[0].tensor();
  const Tensor& indices = out[1].tensor();
  if (values.numel() == 0) return;
  const Rows g = rows_of(self, dim, values.dim() == 0 ? 1 : values.size(dim));
  if (g.len >= (int64_t{1} << 32))
    unsupported("the cpu backend sorts rows of fewer than 2^32 elements");
  switch (self.dtype()) {
#define CRUCIBLE_SORT_CASE(DT)                                 \
  case DType::DT:                                              \
    sort_rows_typed<DType::DT>(self, g, sel, values, indices); \
    break;
    CRUCIBLE_SORT_CASE(Bool)
    CRUCIBLE_SORT_CASE(UInt8)
    CRUCIBLE_SORT_CASE(Int8)
    CRUCIBLE_SORT_CASE(Int16)
    CRUCIBLE_SORT_CASE(Int32)
    CRUCIBLE_SORT_CASE(Int64)
    CRUCIBLE_SORT_CASE(Float16)
    CRUCIBLE_SORT_CASE(BFloat16)
    CRUCIBLE_SORT_CASE(Float32)
    CRUCIBLE_SORT_CASE(Float64)
#undef CRUCIBLE_SORT_CASE
    default:
      unsupported("the cpu backend does not sort " + std::string(dtype_code(self.dtype())));
  }
}

// The sorted dim of a call the meta layer accepted (a 0-d input sorts along "dim 0").
int64_t sorted_dim(const Tensor& self, int64_t dim) {
  return self.dim() == 0 ? 0 : wrap_dim(dim, self.dim());
}

// sort(self, dim, descending) and sort.stable(self, *, stable, dim, descending): every order
// this kernel gives is stable.
void sort_kernel(const OpDef&, const Args& a, const Values& out) {
  const Tensor& self = a.tensor("self");
  sort_into(self, sorted_dim(self, a.integer("dim")), {.descending = a.flag("descending")}, out);
}

// topk(self, k, dim, largest, sorted)
void topk_kernel(const OpDef&, const Args& a, const Values& out) {
  const Tensor& self = a.tensor("self");
  // A 0-d input gives itself and index 0, whatever k.
  if (self.dim() == 0) return sort_into(self, 0, {}, out);
  sort_into(self, sorted_dim(self, a.integer("dim")),
            {.k = a.integer("k"), .descending = a.flag("largest"), .sorted = a.flag("sorted")},
            out);
}

// ---- nonzero ---------------------------------------------------------------------------------

// Whether the element at `p` is nonzero (NaN is; -0 is not).
template <typename U>
inline bool bits_nonzero(const void* p, U magnitude_mask) {
  U b;
  std::memcpy(&b, p, sizeof(U));
  return (b & magnitude_mask) != 0;
}

using NonzeroFn = bool (*)(const void*);
NonzeroFn nonzero_fn(DType t) {
  switch (t) {
    case DType::Bool:
    case DType::UInt8:
    case DType::Int8:
      return [](const void* p) { return bits_nonzero<uint8_t>(p, 0xFF); };
    case DType::Int16:
      return [](const void* p) { return bits_nonzero<uint16_t>(p, 0xFFFF); };
    case DType::Float16:
    case DType::BFloat16:
      return [](const void* p) { return bits_nonzero<uint16_t>(p, 0x7FFF); };
    case DType::Int32:
      return [](const void* p) { return bits_nonzero<uint32_t>(p, 0xFFFFFFFFu); };
    case DType::Float32:
      return [](const void* p) { return bits_nonzero<uint32_t>(p, 0x7FFFFFFFu); };
    case DType::Int64:
      return [](const void* p) { return bits_nonzero<uint64_t>(p, ~uint64_t{0}); };
    case DType::Float64:
      return [](const void* p) { return bits_nonzero<uint64_t>(p, ~uint64_t{0} >> 1); };
    default:
      unsupported("the cpu backend's nonzero does not read " + std::string(dtype_code(t)));
  }
}

// Counts the nonzero bytes of a contiguous byte-wide buffer.
int64_t count_nonzero_bytes(const uint8_t* p, int64_t n) {
  int64_t c = 0;
  for (int64_t i = 0; i < n; ++i) c += p[i] != 0;
  return c;
}

Values nonzero_kernel(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  const Values meta = op.run_meta(a);
  const Tensor& in = a.tensor("self");
  const Tensor x = in.contiguous();
  const int64_t n = x.numel(), nd = x.dim();
  const size_t item = x.itemsize();
  const auto* data = static_cast<const char*>(x.data_ptr());
  const NonzeroFn nz = nonzero_fn(x.dtype());
  const bool bytewise = item == 1;
  // Chunks of the flat index range, counted in parallel.
  constexpr int64_t kChunk = 1 << 16;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<int64_t> counts(static_cast<size_t>(chunks) + 1, 0);
  parallel_for(0, chunks, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      const int64_t b = c * kChunk, e = std::min(n, b + kChunk);
      int64_t k = 0;
      if (bytewise) {
        k = count_nonzero_bytes(reinterpret_cast<const uint8_t*>(data) + b, e - b);
      } else {
        for (int64_t i = b; i < e; ++i) k += nz(data + i * item);
      }
      counts[static_cast<size_t>(c) + 1] = k;
    }
  });
  for (size_t c = 1; c < counts.size(); ++c) counts[c] += counts[c - 1];
  const int64_t total = counts.back();
  const Tensor& m = meta.at(0).tensor();
  Tensor out = Tensor::uninitialized({total, m.size(1)}, DType::Int64);
  if (total == 0 || nd == 0) return {out};
  auto* o = out.data<int64_t>();
  const Shape& shape = x.shape();
  parallel_for(0, chunks, 1, [&](int64_t c0, int64_t c1) {
    std::vector<int64_t> idx(static_cast<size_t>(nd));
    for (int64_t c = c0; c < c1; ++c) {
      const int64_t b = c * kChunk, e = std::min(n, b + kChunk);
      int64_t* row = o + counts[static_cast<size_t>(c)] * nd;
      if (counts[static_cast<size_t>(c)] == counts[static_cast<size_t>(c) + 1]) continue;
      int64_t rem = b;
      for (int64_t d = nd - 1; d >= 0; --d) {
        idx[static_cast<size_t>(d)] = rem % shape[d];
        rem /= shape[d];
      }
      for (int64_t i = b; i < e; ++i) {
        if (nz(data + i * item)) {
          std::memcpy(row, idx.data(), static_cast<size_t>(nd) * sizeof(int64_t));
          row += nd;
        }
        for (int64_t d = nd - 1; d >= 0; --d) {
          if (++idx[static_cast<size_t>(d)] < shape[d]) break;
          idx[static_cast<size_t>(d)] = 0;
        }
      }
    }
  });
  return {out};
}

// ---- _local_scalar_dense ---------------------------------------------------------------------

// The first element as a number of the meta layer's kind (bool, int or float).
Values local_scalar_kernel(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  const Values meta = op.run_meta(a);
  const Tensor& self = a.tensor("self");
  const void* p = self.data_ptr();
  switch (meta.at(0).kind()) {
    case ValueKind::Bool:
      return {Value(*static_cast<const uint8_t*>(p) != 0)};
    case ValueKind::Int:
      return {Value(load_as_int(p, self.dtype()))};
    default:
      return {Value(load_as_double(p, self.dtype()))};
  }
}

}  // namespace

void register_sort_kernels(KernelTable& t) {
  const std::vector<DType> numeric = {
      DType::Bool,  DType::UInt8,   DType::Int8,     DType::Int16,   DType::Int32,
      DType::Int64, DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
  t.add("aten.sort.default", {.dtypes = numeric, .run_into = &sort_kernel});
  t.add("aten.sort.stable", {.dtypes = numeric, .run_into = &sort_kernel});
  // topk of bool raises (the meta function says so); the kernel takes the call to raise it.
  t.add("aten.topk.default", {.dtypes = numeric, .run_into = &topk_kernel});
  t.add("aten.nonzero.default", {nonzero_kernel, nullptr, numeric});
  t.add("aten._local_scalar_dense.default", {local_scalar_kernel, nullptr, numeric});
}

}  // namespace crucible::cpu
