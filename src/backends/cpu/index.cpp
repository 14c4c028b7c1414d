// The `cpu` backend's indexing along a dim: index_select and gather (row or element copies at
// the input's own strides, any dtype), scatter_add and index_add (accumulating: integers and
// bool exactly in int64, floating values in f32, or f64 for f64 and for calls with extreme
// values). Destination-passing: the meta functions (crucible/ops/rules/indexing.h's checks)
// checked the call and sized the contiguous output; the index values are checked here as they
// are used.
// index.Tensor and index_put are in index_tensor.cpp and index_put.cpp.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "backends/cpu/index_rows.h"
#include "backends/cpu/index_util.h"
#include "backends/cpu/nn.h"
#include "backends/cpu/nn_util.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/shape_copy.h"
#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"
#include "crucible/ops/rules/indexing.h"

namespace crucible::cpu {
namespace {

void check_range(const int64_t* idx, int64_t n, int64_t size) {
  bool bad = false;
  for (int64_t i = 0; i < n; ++i)
    bad |= static_cast<uint64_t>(idx[i]) >= static_cast<uint64_t>(size);
  if (bad) op_error("index out of range in self");
}

// [outer, size, inner] of `shape` around `dim`.
struct Split {
  int64_t outer = 1, size = 1, inner = 1;
};

Split split(const Shape& shape, int64_t dim) {
  Split s;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    if (d < dim) s.outer *= shape[d];
    if (d == dim) s.size = shape[d];
    if (d > dim) s.inner *= shape[d];
  }
  return s;
}

// Whether the dims after `dim` form one run of stride 1 (size-1 dims ignored).
bool inner_contiguous(const Tensor& t, int64_t dim) {
  int64_t expected = 1;
  for (int64_t d = t.dim() - 1; d > dim; --d) {
    if (t.size(d) == 1) continue;
    if (t.stride(d) != expected) return false;
    expected *= t.size(d);
  }
  return true;
}

// The storage offsets (in elements, from the view's start) of every outer position (the dims
// before `dim`), in logical order.
std::vector<int64_t> outer_offsets(const Tensor& t, int64_t dim) {
  std::vector<int64_t> off{0};
  for (int64_t d = 0; d < dim; ++d) {
    std::vector<int64_t> next;
    next.reserve(off.size() * static_cast<size_t>(t.size(d)));
    for (int64_t o : off)
      for (int64_t k = 0; k < t.size(d); ++k) next.push_back(o + k * t.stride(d));
    off.swap(next);
  }
  return off;
}

void index_select_kernel(const OpDef&, const Args& a, const Values& outputs) {
  const Tensor& self = a.tensor("self");
  const Tensor& index = a.tensor("index");
  const Tensor& out = outputs[0].tensor();
  const IndexValues idx(index);
  const int64_t n = index.numel();
  if (self.dim() == 0) {
    check_range(idx.data(), 1, 1);
    return copy_to_contiguous(self, out);
  }
  const int64_t dim = wrap_dim(a.integer("dim"), self.dim());
  check_range(idx.data(), n, self.size(dim));
  if (out.numel() == 0) return;
  // Rows are read at self's strides when its inner dims are one contiguous run.
  const Tensor src = inner_contiguous(self, dim) ? self : fresh_copy(self, self.dtype());
  const Split s = split(self.shape(), dim);
  const std::vector<int64_t> ooff = outer_offsets(src, dim);
  const int64_t sd = src.stride(dim);
  const size_t isz = src.itemsize();
  const char* base = static_cast<const char*>(src.data_ptr());
  char* dst = static_cast<char*>(out.data_ptr());
  if (s.inner == 1) {
    // Element gathers, in blocks of offsets.
    parallel_for(0, s.outer * n, 32768, [&](int64_t e0, int64_t e1) {
      int64_t off[512];
      for (int64_t e = e0; e < e1;) {
        const int64_t o = e / n, i0 = e % n;
        const int64_t m = std::min({e1 - e, n - i0, int64_t{512}});
        for (int64_t k = 0; k < m; ++k) off[k] = ooff[o] + idx[i0 + k] * sd;
        gather_elements(dst + e * isz, base, off, m, isz);
        e += m;
      }
    });
    return;
  }
  const size_t row = static_cast<size_t>(s.inner) * isz;
  parallel_for(0, s.outer * n, std::max<int64_t>(1, 65536 / static_cast<int64_t>(row)),
               [&](int64_t r0, int64_t r1) {
                 for (int64_t r = r0; r < r1; ++r) {
                   const int64_t o = r / n, i = r % n;
                   std::memcpy(dst + r * row, base + (ooff[o] + idx[i] * sd) * isz, row);
                 }
               });
}

// One row of a gather: dst[k] = src[ra + k * sl + idx[k] * sd] (sl = 0 when the row runs
// along `dim`), each index checked as it is used (the output is discarded on an error).
template <typename T>
void gather_row(T* dst, const T* src, const int64_t* iv, int64_t m, int64_t ra, int64_t sl,
                int64_t sd, int64_t dim, int64_t bound) {
  for (int64_t k = 0; k < m; ++k) {
    const int64_t v = iv[k];
    if (static_cast<uint64_t>(v) >= static_cast<uint64_t>(bound)) [[unlikely]]
      index_out_of_bounds(v, dim, bound);
    dst[k] = src[ra + k * sl + v * sd];
  }
}

template <typename T>
void gather_t(const Tensor& self, const Tensor& out, const IndexWalk& w, const int64_t* idx,
              int64_t bound) {
  const T* src = static_cast<const T*>(self.data_ptr());
  T* dst = static_cast<T*>(out.data_ptr());
  const int64_t sl = w.step_a(), sd = w.as[w.dim];
  // Chunks of elements (parts of a row, or several rows) spread over the pool.
  parallel_for(0, w.rows * w.last, int64_t{1} << 17, [&](int64_t e0, int64_t e1) {
    for (int64_t e = e0; e < e1;) {
      const int64_t r = e / w.last, k0 = e % w.last;
      const int64_t m = std::min(e1 - e, w.last - k0);
      gather_row(dst + e, src + w.row_a(r) + k0 * sl, idx + e, m, 0, sl, sd, w.dim, bound);
      e += m;
    }
  });
}

void gather_kernel(const OpDef&, const Args& a, const Values& outputs) {
  const Tensor& self = a.tensor("self");
  const int64_t dim = wrap_dim(a.integer("dim"), self.dim());
  const Tensor& index = a.tensor("index");
  const Tensor& out = outputs[0].tensor();
  if (out.numel() == 0) return;
  const IndexValues idx(index);
  const IndexWalk w = make_index_walk(index, dim, self, out);
  const int64_t bound = size_or_1(self, dim);
  switch (self.itemsize()) {
    case 1:
      gather_t<uint8_t>(self, out, w, idx.data(), bound);
      break;
    case 2:
      gather_t<uint16_t>(self, out, w, idx.data(), bound);
      break;
    case 4:
      gather_t<uint32_t>(self, out, w, idx.data(), bound);
      break;
    default:
      gather_t<uint64_t>(self, out, w, idx.data(), bound);
  }
}

// The accumulation of one work dtype W: f32 and f64 add, int64 adds wrapping.
template <typename W>
inline W acc_add(W x, W v) {
  if constexpr (std::is_integral_v<W>)
    return static_cast<W>(static_cast<uint64_t>(x) + static_cast<uint64_t>(v));
  else
    return x + v;
}
template <typename W>
inline W acc_mul(W x, W v) {
  if constexpr (std::is_integral_v<W>)
    return static_cast<W>(static_cast<uint64_t>(x) * static_cast<uint64_t>(v));
  else
    return x * v;
}

// Rows with different positions outside `dim` never meet, but rows along dim may: one
// thread, in the index's order. Each index is checked as it is used (the output is a fresh
// copy, discarded on an error). kCheck: test each f32 value added for an extreme one.
template <typename W, bool kCheck>
bool scatter_add_rows(W* o, const W* s, const IndexWalk& w, const int64_t* idx, int64_t bound) {
  const int64_t ol = w.step_a(), od = w.as[w.dim];
  const int64_t sl = w.bs[w.nd - 1];
  bool extreme = false;
  if (ol == 0 && od == 1 && sl == 1) {
    // Rows along a unit-stride dim of out, a dense source (a 1-d scatter_add): no strides. An
    // f32 source is tested for extreme values a block at a time (vectorised), just before the
    // block is added: one read of the source from memory.
    constexpr int64_t kScan = 2048;
    for (int64_t r = 0; r < w.rows; ++r) {
      W* __restrict orow = o + w.row_a(r);
      const W* __restrict srow = s + w.row_b(r);
      const int64_t* iv = idx + r * w.last;
      for (int64_t k0 = 0; k0 < w.last; k0 += kScan) {
        const int64_t k1 = std::min(w.last, k0 + kScan);
        if constexpr (kCheck) {
          if (any_extreme_f32(srow + k0, k1 - k0)) return true;
        }
        // Four targets a step, their bounds tested at once (the first bad one is then found
        // in order by the loop below).
        int64_t k = k0;
        const auto ub = static_cast<uint64_t>(bound);
        for (; k + 4 <= k1; k += 4) {
          const auto v0 = static_cast<uint64_t>(iv[k]), v1 = static_cast<uint64_t>(iv[k + 1]);
          const auto v2 = static_cast<uint64_t>(iv[k + 2]), v3 = static_cast<uint64_t>(iv[k + 3]);
          if (std::max(std::max(v0, v1), std::max(v2, v3)) >= ub) [[unlikely]]
            break;
          orow[v0] = acc_add(orow[v0], srow[k]);
          orow[v1] = acc_add(orow[v1], srow[k + 1]);
          orow[v2] = acc_add(orow[v2], srow[k + 2]);
          orow[v3] = acc_add(orow[v3], srow[k + 3]);
        }
        for (; k < k1; ++k) {
          const int64_t v = iv[k];
          if (static_cast<uint64_t>(v) >= ub) [[unlikely]]
            index_out_of_bounds(v, w.dim, bound);
          orow[v] = acc_add(orow[v], srow[k]);
        }
      }
    }
    return false;
  }
  for (int64_t r = 0; r < w.rows; ++r) {
    W* orow = o + w.row_a(r);
    const W* srow = s + w.row_b(r);
    const int64_t* iv = idx + r * w.last;
    for (int64_t k = 0; k < w.last; ++k) {
      const int64_t v = iv[k];
      if (static_cast<uint64_t>(v) >= static_cast<uint64_t>(bound)) [[unlikely]]
        index_out_of_bounds(v, w.dim, bound);
      W& x = orow[k * ol + v * od];
      const W y = srow[k * sl];
      if constexpr (kCheck) {
        uint32_t u;
        std::memcpy(&u, &y, 4);
        extreme |= (u & 0x7fffffffu) > 0x58800000u;
      }
      x = acc_add(x, y);
    }
  }
  return extreme;
}

// Returns whether an f32 value added was extreme (see nn_util.h): the call is then computed
// again in f64.
template <typename W>
bool scatter_add_t(const Tensor& out, const Tensor& src, const IndexWalk& w, const int64_t* idx,
                   int64_t bound) {
  W* o = out.data<W>();
  const W* s = src.data<W>();
  if constexpr (std::is_same_v<W, float>) {
    return scatter_add_rows<W, true>(o, s, w, idx, bound);
  } else {
    return scatter_add_rows<W, false>(o, s, w, idx, bound);
  }
}

// The output is computed in the work dtype: in the output itself when it is that dtype (f32,
// f64, int64), else in a buffer converted into it.
void scatter_add_kernel(const OpDef&, const Args& a, const Values& outputs) {
  const Tensor& self = a.tensor("self");
  const Tensor& index = a.tensor("index");
  const Tensor& src = a.tensor("src");
  const int64_t dim = wrap_dim(a.integer("dim"), self.dim());
  const IndexValues idx(index);
  const int64_t bound = size_or_1(self, dim);
  DType work = accumulate_work(self.dtype());
  Tensor out = output_buffer(outputs[0], self.shape(), work);
  copy_to_contiguous(self, out);
  if (work == DType::Float32 && any_extreme_f32(out.data<float>(), out.numel()))
    work = DType::Float64;
  if (index.numel() > 0 && work == DType::Float32) {
    const Tensor s = contiguous_as(src, work);
    if (scatter_add_t<float>(out, s, make_index_walk(index, dim, out, s), idx.data(), bound))
      work = DType::Float64;
  }
  if (work != DType::Float32) {
    if (out.dtype() != work) {
      out = output_buffer(outputs[0], self.shape(), work);
      copy_to_contiguous(self, out);
    }
    if (index.numel() > 0) {
      const Tensor s = contiguous_as(src, work);
      const IndexWalk w = make_index_walk(index, dim, out, s);
      if (work == DType::Float64)
        scatter_add_t<double>(out, s, w, idx.data(), bound);
      else
        scatter_add_t<int64_t>(out, s, w, idx.data(), bound);
    }
  }
  store_output(out, outputs[0]);
}

// dst[j] += alpha * src[j] (f64) or wrapping in int64; f32 rows go through the vector
// kernels (index_rows.h), which also say whether a source value was extreme.
template <typename W>
__attribute__((optimize("O3"))) bool axpy(W* __restrict dst, const W* __restrict src, W alpha,
                                          int64_t n) {
  if constexpr (std::is_same_v<W, float>) {
    return row_kernels().axpy_check(dst, src, alpha, n);
  } else if constexpr (std::is_integral_v<W>) {
    for (int64_t j = 0; j < n; ++j)
      dst[j] = static_cast<W>(static_cast<uint64_t>(dst[j]) +
                              static_cast<uint64_t>(alpha) * static_cast<uint64_t>(src[j]));
  } else {
    for (int64_t j = 0; j < n; ++j) dst[j] += alpha * src[j];
  }
  return false;
}

// out (contiguous [outer, size, inner]) += alpha * source ([outer, n, inner]) at rows idx.
// Returns whether an f32 source value was extreme.
template <typename W>
bool index_add_t(const Tensor& out, const Tensor& source, const Split& s, int64_t n,
                 const int64_t* idx, W alpha) {
  W* o = out.data<W>();
  const W* sp = source.data<W>();
  // Column blocks of every outer slice are independent (no two meet); within one, the
  // indices are applied in order.
  constexpr int64_t kCols = 1024;
  const int64_t blocks = (s.inner + kCols - 1) / kCols;
  const int64_t work = n * std::min(s.inner, kCols);
  std::atomic<bool> extreme{false};
  parallel_for(0, s.outer * blocks, std::max<int64_t>(1, 65536 / std::max<int64_t>(work, 1)),
               [&](int64_t b0, int64_t b1) {
                 bool ext = false;
                 for (int64_t b = b0; b < b1; ++b) {
                   const int64_t ou = b / blocks, j0 = (b % blocks) * kCols;
                   const int64_t m = std::min(kCols, s.inner - j0);
                   for (int64_t i = 0; i < n; ++i)
                     ext |= axpy(o + (ou * s.size + idx[i]) * s.inner + j0,
                                 sp + (ou * n + i) * s.inner + j0, alpha, m);
                 }
                 if (ext) extreme = true;
               });
  return extreme;
}

// A contiguous f32 copy of `self` (in the output itself when it is f32) and whether it holds an
// extreme value.
Tensor f32_copy_checked(const Tensor& self, const Value& output, bool* extreme) {
  Tensor out = output_buffer(output, self.shape(), DType::Float32);
  if (self.dtype() != DType::Float32 || !self.is_contiguous()) {
    copy_to_contiguous(self, out);
    *extreme = any_extreme_f32(out.data<float>(), out.numel());
    return out;
  }
  const float* src = self.data<float>();
  float* dst = out.data<float>();
  std::atomic<bool> ext{false};
  parallel_for(0, self.numel(), int64_t{1} << 17, [&](int64_t i0, int64_t i1) {
    if (row_kernels().copy_check(dst + i0, src + i0, i1 - i0)) ext = true;
  });
  *extreme = ext;
  return out;
}

void index_add_kernel(const OpDef&, const Args& a, const Values& outputs) {
  const Tensor& self = a.tensor("self");
  const Tensor& index = a.tensor("index");
  const Tensor& source = a.tensor("source");
  const Value& alpha = a.value("alpha");
  const int64_t dim = self.dim() == 0 ? 0 : wrap_dim(a.integer("dim"), self.dim());
  const IndexValues idx(index);
  const int64_t n = index.numel();
  check_range(idx.data(), n, self.dim() == 0 ? 1 : self.size(dim));
  const Split s = split(self.shape(), dim);
  DType work = accumulate_work(self.dtype());
  Tensor out;
  if (work == DType::Float32) {
    // Extreme values (see nn_util.h) are looked for while self is copied and source added.
    bool extreme = false;
    out = f32_copy_checked(self, outputs[0], &extreme);
    if (extreme || index_add_t<float>(out, contiguous_as(source, work), s, n, idx.data(),
                                      static_cast<float>(alpha.to_double())))
      work = DType::Float64;
  }
  if (work == DType::Float64) {
    out = output_buffer(outputs[0], self.shape(), work);
    copy_to_contiguous(self, out);
    index_add_t<double>(out, contiguous_as(source, work), s, n, idx.data(), alpha.to_double());
  } else if (work == DType::Int64) {
    // alpha is converted to the dtype first (truncated for integral dtypes).
    const int64_t ialpha = alpha.kind() == ValueKind::Float
                               ? static_cast<int64_t>(std::trunc(alpha.to_double()))
                               : alpha.to_int();
    out = output_buffer(outputs[0], self.shape(), work);
    copy_to_contiguous(self, out);
    index_add_t<int64_t>(out, contiguous_as(source, work), s, n, idx.data(), ialpha);
  }
  store_output(out, outputs[0]);
}

std::vector<DType> every_dtype() {
  return {DType::Bool,  DType::UInt8,   DType::Int8,     DType::Int16,   DType::Int32,
          DType::Int64, DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
}

}  // namespace

void register_index_kernels(KernelTable& t) {
  for (auto [name, fn] : {std::pair{"aten.index_select.default", &index_select_kernel},
                          {"aten.gather.default", &gather_kernel},
                          {"aten.scatter_add.default", &scatter_add_kernel},
                          {"aten.index_add.default", &index_add_kernel}})
    t.add(name, {.dtypes = every_dtype(), .run_into = fn});
  register_index_tensor_kernels(t);
  register_index_put_kernels(t);
}

}  // namespace crucible::cpu
