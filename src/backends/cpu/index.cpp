// The `cpu` backend's indexing along a dim: index_select and gather (row or element copies at
// the input's own strides, any dtype), scatter_add and index_add (accumulating: integers and
// bool exactly in int64, floating values in f32, or f64 for f64 and for calls with extreme
// values). Checks follow the catalog's reference (ops/indexing.cpp, ops/indexing_select.cpp).
// index.Tensor and index_put are in index_tensor.cpp and index_put.cpp.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "backends/cpu/index_rows.h"
#include "backends/cpu/index_util.h"
#include "backends/cpu/nn.h"
#include "backends/cpu/nn_util.h"
#include "backends/cpu/parallel.h"
#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"

namespace crucible::cpu {
namespace {

void check_vector_index(const Tensor& index, const std::string& op) {
  if (index.dim() > 1) op_error(op + "(): Index is supposed to be a vector");
  if (index.dtype() != DType::Int64 && index.dtype() != DType::Int32)
    op_error(op + "(): Expected dtype int32 or int64 for index");
}

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

Values index_select_kernel(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  const Tensor& self = a.tensor("self");
  const int64_t dim = wrap_dim(a.integer("dim"), self.dim());
  const Tensor& index = a.tensor("index");
  check_vector_index(index, "index_select");
  const IndexValues idx(index);
  const int64_t n = index.numel();
  if (self.dim() == 0) {
    if (n != 1)
      op_error("index_select(): Index to scalar can have only 1 value, got " + std::to_string(n) +
               " value(s)");
    check_range(idx.data(), 1, 1);
    return {fresh_copy(self, self.dtype())};
  }
  check_range(idx.data(), n, self.size(dim));
  Shape shape = self.shape();
  shape[dim] = n;
  Tensor out = Tensor::uninitialized(shape, self.dtype());
  if (out.numel() == 0) return {out};
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
    return {out};
  }
  const size_t row = static_cast<size_t>(s.inner) * isz;
  parallel_for(0, s.outer * n, std::max<int64_t>(1, 65536 / static_cast<int64_t>(row)),
               [&](int64_t r0, int64_t r1) {
                 for (int64_t r = r0; r < r1; ++r) {
                   const int64_t o = r / n, i = r % n;
                   std::memcpy(dst + r * row, base + (ooff[o] + idx[i] * sd) * isz, row);
                 }
               });
  return {out};
}

void check_gather_shapes(const Tensor& self, int64_t dim, const Tensor& index, const char* op,
                         const Tensor* src) {
  if (index.dtype() != DType::Int64)
    op_error(std::string(op) + "(): Expected dtype int64 for index");
  if (index.numel() == 0) return;
  if (ndim_or_1(index) != ndim_or_1(self))
    op_error(std::string("Index tensor must have the same number of dimensions as ") +
             (src ? "self" : "input") + " tensor");
  if (src && ndim_or_1(index) != ndim_or_1(*src))
    op_error("Index tensor must have the same number of dimensions as src tensor");
  for (int64_t d = 0; d < ndim_or_1(self); ++d) {
    const bool bad_self = d != dim && size_or_1(index, d) > size_or_1(self, d);
    const bool bad_src = src && size_or_1(index, d) > size_or_1(*src, d);
    if (!bad_self && !bad_src) continue;
    if (src)
      op_error("Expected index " + shape_str(index.shape()) + " to be smaller than self " +
               shape_str(self.shape()) + " apart from dimension " + std::to_string(dim) +
               " and to be smaller size than src " + shape_str(src->shape()));
    op_error("Size does not match at dimension " + std::to_string(d) + " expected index " +
             shape_str(index.shape()) + " to be smaller than self " + shape_str(self.shape()) +
             " apart from dimension " + std::to_string(dim));
  }
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

Values gather_kernel(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  const Tensor& self = a.tensor("self");
  const int64_t dim = wrap_dim(a.integer("dim"), self.dim());
  const Tensor& index = a.tensor("index");
  check_gather_shapes(self, dim, index, "gather", nullptr);
  Tensor out = Tensor::uninitialized(index.shape(), self.dtype());
  if (out.numel() == 0) return {out};
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
  return {out};
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
        for (int64_t k = k0; k < k1; ++k) {
          const int64_t v = iv[k];
          if (static_cast<uint64_t>(v) >= static_cast<uint64_t>(bound)) [[unlikely]]
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

Values scatter_add_kernel(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  const Tensor& self = a.tensor("self");
  const int64_t dim = wrap_dim(a.integer("dim"), self.dim());
  const Tensor& index = a.tensor("index");
  const Tensor& src = a.tensor("src");
  check_gather_shapes(self, dim, index, "scatter_add", &src);
  if (src.dtype() != self.dtype())
    op_error("scatter_add(): Expected self.dtype to be equal to src.dtype");
  const IndexValues idx(index);
  const int64_t bound = size_or_1(self, dim);
  DType work = accumulate_work(self.dtype());
  Tensor out = fresh_copy(self, work);
  if (work == DType::Float32 && any_extreme_f32(out.data<float>(), out.numel()))
    work = DType::Float64;
  if (index.numel() > 0 && work == DType::Float32) {
    const Tensor s = contiguous_as(src, work);
    if (scatter_add_t<float>(out, s, make_index_walk(index, dim, out, s), idx.data(), bound))
      work = DType::Float64;
  }
  if (work != DType::Float32) {
    if (out.dtype() != work) out = fresh_copy(self, work);
    if (index.numel() > 0) {
      const Tensor s = contiguous_as(src, work);
      const IndexWalk w = make_index_walk(index, dim, out, s);
      if (work == DType::Float64)
        scatter_add_t<double>(out, s, w, idx.data(), bound);
      else
        scatter_add_t<int64_t>(out, s, w, idx.data(), bound);
    }
  }
  return {self.dtype() == work ? out : fresh_copy(out, self.dtype())};
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

// A contiguous f32 copy of `self` and whether it holds an extreme value.
Tensor f32_copy_checked(const Tensor& self, bool* extreme) {
  if (self.dtype() != DType::Float32 || !self.is_contiguous()) {
    Tensor out = fresh_copy(self, DType::Float32);
    *extreme = any_extreme_f32(out.data<float>(), out.numel());
    return out;
  }
  Tensor out = Tensor::uninitialized(self.shape(), DType::Float32);
  const float* src = self.data<float>();
  float* dst = out.data<float>();
  std::atomic<bool> ext{false};
  parallel_for(0, self.numel(), int64_t{1} << 17, [&](int64_t i0, int64_t i1) {
    if (row_kernels().copy_check(dst + i0, src + i0, i1 - i0)) ext = true;
  });
  *extreme = ext;
  return out;
}

Values index_add_kernel(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  const Tensor& self = a.tensor("self");
  const int64_t dim = wrap_dim(a.integer("dim"), self.dim());
  const Tensor& index = a.tensor("index");
  const Tensor& source = a.tensor("source");
  const Value& alpha = a.value("alpha");
  check_vector_index(index, "index_add_");
  if (source.dtype() != self.dtype())
    op_error("index_add_(): self (" + scalar_type_name(self.dtype()) + ") and source (" +
             scalar_type_name(source.dtype()) + ") must have the same scalar type");
  const int64_t src_dim_size = source.dim() == 0 ? 1 : source.size(dim < source.dim() ? dim : 0);
  if (index.numel() != src_dim_size)
    op_error("index_add_(): Number of indices (" + std::to_string(index.numel()) +
             ") should be equal to source.size(dim) (" + std::to_string(src_dim_size) + ")");
  bool shape_ok = std::max<int64_t>(source.dim(), 1) == std::max<int64_t>(self.dim(), 1);
  for (int64_t d = 0; shape_ok && d < self.dim(); ++d)
    if (d != dim && self.size(d) != source.size(d)) shape_ok = false;
  if (!shape_ok)
    op_error(
        "index_add_(): source tensor shape must match self tensor shape, excluding the "
        "specified dimension. Got self.shape = " +
        shape_str(self.shape()) + " source.shape = " + shape_str(source.shape()));
  const IndexValues idx(index);
  const int64_t n = index.numel();
  check_range(idx.data(), n, self.dim() == 0 ? 1 : self.size(dim));
  const Split s = split(self.shape(), self.dim() == 0 ? 0 : dim);
  DType work = accumulate_work(self.dtype());
  Tensor out;
  if (work == DType::Float32) {
    // Extreme values (see nn_util.h) are looked for while self is copied and source added.
    bool extreme = false;
    out = f32_copy_checked(self, &extreme);
    if (extreme || index_add_t<float>(out, contiguous_as(source, work), s, n, idx.data(),
                                      static_cast<float>(alpha.to_double())))
      work = DType::Float64;
  }
  if (work == DType::Float64) {
    out = fresh_copy(self, work);
    index_add_t<double>(out, contiguous_as(source, work), s, n, idx.data(), alpha.to_double());
  } else if (work == DType::Int64) {
    // alpha is converted to the dtype first (truncated for integral dtypes).
    const int64_t ialpha = alpha.kind() == ValueKind::Float
                               ? static_cast<int64_t>(std::trunc(alpha.to_double()))
                               : alpha.to_int();
    out = fresh_copy(self, work);
    index_add_t<int64_t>(out, contiguous_as(source, work), s, n, idx.data(), ialpha);
  }
  return {self.dtype() == work ? out : fresh_copy(out, self.dtype())};
}

std::vector<DType> every_dtype() {
  return {DType::Bool,  DType::UInt8,   DType::Int8,     DType::Int16,   DType::Int32,
          DType::Int64, DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
}

}  // namespace

void register_index_kernels(KernelTable& t) {
  t.add("aten.index_select.default", {index_select_kernel, nullptr, every_dtype()});
  t.add("aten.gather.default", {gather_kernel, nullptr, every_dtype()});
  t.add("aten.scatter_add.default", {scatter_add_kernel, nullptr, every_dtype()});
  t.add("aten.index_add.default", {index_add_kernel, nullptr, every_dtype()});
  register_index_tensor_kernels(t);
  register_index_put_kernels(t);
}

}  // namespace crucible::cpu
