// The `cpu` backend's indexing along a dim: index_select and gather (element or row copies,
// any dtype), scatter_add and index_add (floating; f16/bf16 accumulate in f32, calls with
// extreme values in f64). Checks follow the catalog's reference (ops/indexing*.cpp).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "backends/cpu/nn.h"
#include "backends/cpu/nn_util.h"
#include "backends/cpu/norm_rows.h"
#include "backends/cpu/parallel.h"
#include "crucible/core/error.h"

namespace crucible::cpu {
namespace {

// The indices as int64 (i32 or i64 sources), in logical order.
std::vector<int64_t> load_index(const Tensor& t) {
  std::vector<int64_t> v(static_cast<size_t>(t.numel()));
  const Tensor c = t.contiguous();
  if (c.dtype() == DType::Int64) {
    if (!v.empty()) std::memcpy(v.data(), c.data_ptr(), v.size() * sizeof(int64_t));
  } else {
    const int32_t* p = c.data<int32_t>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = p[i];
  }
  return v;
}

void check_vector_index(const Tensor& index, const std::string& op) {
  CRUCIBLE_CHECK(index.dim() <= 1, op + "(): Index is supposed to be a vector");
  CRUCIBLE_CHECK(index.dtype() == DType::Int64 || index.dtype() == DType::Int32,
                 op + "(): Expected dtype int32 or int64 for index");
}

void check_range(const std::vector<int64_t>& idx, int64_t size) {
  for (int64_t v : idx)
    if (v < 0 || v >= size) op_error("index out of range in self");
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

Values index_select_kernel(const OpDef&, const Values& a) {
  const Tensor& self = a.at(0).tensor();
  const int64_t dim = wrap_dim(a.at(1).to_int(), self.dim());
  const Tensor& index = a.at(2).tensor();
  check_vector_index(index, "index_select");
  const std::vector<int64_t> idx = load_index(index);
  if (self.dim() == 0) {
    CRUCIBLE_CHECK(idx.size() == 1, "index_select(): Index to scalar can have only 1 value");
    check_range(idx, 1);
    return {self.clone()};
  }
  check_range(idx, self.size(dim));
  Shape shape = self.shape();
  shape[dim] = static_cast<int64_t>(idx.size());
  Tensor out = Tensor::empty(shape, self.dtype());
  if (out.numel() == 0) return {out};
  const Tensor c = self.contiguous();
  const Split s = split(self.shape(), dim);
  const int64_t n = static_cast<int64_t>(idx.size());
  const size_t row = static_cast<size_t>(s.inner) * c.itemsize();
  const char* src = static_cast<const char*>(c.data_ptr());
  char* dst = static_cast<char*>(out.data_ptr());
  parallel_for(0, s.outer * n,
               std::max<int64_t>(1, 65536 / static_cast<int64_t>(std::max<size_t>(row, 1))),
               [&](int64_t r0, int64_t r1) {
                 for (int64_t r = r0; r < r1; ++r) {
                   const int64_t o = r / n, i = r % n;
                   std::memcpy(dst + r * row, src + (o * s.size + idx[i]) * row, row);
                 }
               });
  return {out};
}

int64_t size_or_1(const Tensor& t, int64_t d) { return t.dim() == 0 ? 1 : t.size(d); }
int64_t ndim_or_1(const Tensor& t) { return std::max<int64_t>(t.dim(), 1); }

void check_gather_shapes(const Tensor& self, int64_t dim, const Tensor& index, const char* op,
                         const Tensor* src) {
  CRUCIBLE_CHECK(index.dtype() == DType::Int64,
                 std::string(op) + "(): Expected dtype int64 for index");
  if (index.numel() == 0) return;
  CRUCIBLE_CHECK(ndim_or_1(index) == ndim_or_1(self),
                 "Index tensor must have the same number of dimensions as self tensor");
  CRUCIBLE_CHECK(!src || ndim_or_1(index) == ndim_or_1(*src),
                 "Index tensor must have the same number of dimensions as src tensor");
  for (int64_t d = 0; d < ndim_or_1(self); ++d) {
    CRUCIBLE_CHECK(d == dim || size_or_1(index, d) <= size_or_1(self, d),
                   "Size does not match at dimension " + std::to_string(d) + " expected index " +
                       shape_str(index.shape()) + " to be smaller than self " +
                       shape_str(self.shape()) + " apart from dimension " + std::to_string(dim));
    CRUCIBLE_CHECK(!src || size_or_1(index, d) <= size_or_1(*src, d),
                   "Expected index " + shape_str(index.shape()) + " to be smaller than src " +
                       shape_str(src->shape()));
  }
}

// Calls fn(k, self_offset, src_offset) for every index element k (logical order): the
// element offsets (in contiguous `self_shape` and `src_shape` layouts) of the target and of
// the same position in src. Raises for an out-of-range index before calling fn at all.
template <typename Fn>
void for_each_target(const Shape& self_shape, const Shape& src_shape, int64_t dim,
                     const Tensor& index, const std::vector<int64_t>& idx, Fn fn) {
  const int64_t nd = std::max<int64_t>(static_cast<int64_t>(self_shape.size()), 1);
  Shape is = index.shape(), ss = self_shape, rs = src_shape;
  if (is.empty()) is = {1};
  if (ss.empty()) ss = {1};
  if (rs.empty()) rs = {1};
  const int64_t bound = ss[dim];
  for (int64_t v : idx)
    if (v < 0 || v >= bound)
      op_error("index " + std::to_string(v) + " is out of bounds for dimension " +
               std::to_string(dim) + " with size " + std::to_string(bound));
  const Shape sst = contiguous_strides(ss), rst = contiguous_strides(rs);
  std::vector<int64_t> p(static_cast<size_t>(nd), 0);
  for (int64_t k = 0; k < static_cast<int64_t>(idx.size()); ++k) {
    int64_t so = 0, ro = 0;
    for (int64_t d = 0; d < nd; ++d) {
      so += (d == dim ? idx[k] : p[d]) * sst[d];
      ro += p[d] * rst[d];
    }
    fn(k, so, ro);
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (++p[d] < is[d]) break;
      p[d] = 0;
    }
  }
}

Values gather_kernel(const OpDef&, const Values& a) {
  const Tensor& self = a.at(0).tensor();
  const int64_t dim = wrap_dim(a.at(1).to_int(), self.dim());
  const Tensor& index = a.at(2).tensor();
  check_gather_shapes(self, dim, index, "gather", nullptr);
  const std::vector<int64_t> idx = load_index(index);
  Tensor out = Tensor::empty(index.shape(), self.dtype());
  const Tensor c = self.contiguous();
  const size_t isz = c.itemsize();
  const char* src = static_cast<const char*>(c.data_ptr());
  char* dst = static_cast<char*>(out.data_ptr());
  for_each_target(self.shape(), self.shape(), dim, index, idx, [&](int64_t k, int64_t so, int64_t) {
    std::memcpy(dst + k * isz, src + so * isz, isz);
  });
  return {out};
}

template <typename T>
Tensor scatter_add_t(const Tensor& self, int64_t dim, const Tensor& index,
                     const std::vector<int64_t>& idx, const Tensor& src, DType work) {
  Tensor out = norm_in(self, work).clone();
  const Tensor s = norm_in(src, work);
  T* o = out.data<T>();
  const T* sp = s.data<T>();
  for_each_target(self.shape(), src.shape(), dim, index, idx,
                  [&](int64_t, int64_t so, int64_t ro) { o[so] += sp[ro]; });
  return out;
}

Values scatter_add_kernel(const OpDef&, const Values& a) {
  const Tensor& self = a.at(0).tensor();
  const int64_t dim = wrap_dim(a.at(1).to_int(), self.dim());
  const Tensor& index = a.at(2).tensor();
  const Tensor& src = a.at(3).tensor();
  check_gather_shapes(self, dim, index, "scatter_add", &src);
  CRUCIBLE_CHECK(src.dtype() == self.dtype(),
                 "scatter_add(): Expected self.dtype to be equal to src.dtype");
  const std::vector<int64_t> idx = load_index(index);
  const DType work = norm_work(self.dtype(), any_extreme({&self, &src}));
  Tensor out = work == DType::Float64 ? scatter_add_t<double>(self, dim, index, idx, src, work)
                                      : scatter_add_t<float>(self, dim, index, idx, src, work);
  return {norm_out(out, self.dtype())};
}

template <typename T>
Tensor index_add_t(const Tensor& self, int64_t dim, const std::vector<int64_t>& idx,
                   const Tensor& source, double alpha, DType work) {
  Tensor out = norm_in(self, work).clone();
  const Tensor s = norm_in(source, work);
  const Split so = split(self.shape(), self.dim() == 0 ? 0 : dim);
  const int64_t n = static_cast<int64_t>(idx.size());
  T* o = out.data<T>();
  const T* sp = s.data<T>();
  const T al = static_cast<T>(alpha);
  // Each outer slice is independent; within one, indices are applied in order.
  parallel_for(0, so.outer, 1, [&](int64_t o0, int64_t o1) {
    for (int64_t ou = o0; ou < o1; ++ou)
      for (int64_t i = 0; i < n; ++i) {
        T* dst = o + (ou * so.size + idx[i]) * so.inner;
        const T* sr = sp + (ou * n + i) * so.inner;
        for (int64_t j = 0; j < so.inner; ++j) dst[j] += al * sr[j];
      }
  });
  return out;
}

Values index_add_kernel(const OpDef&, const Values& a) {
  const Tensor& self = a.at(0).tensor();
  const int64_t dim = wrap_dim(a.at(1).to_int(), self.dim());
  const Tensor& index = a.at(2).tensor();
  const Tensor& source = a.at(3).tensor();
  check_vector_index(index, "index_add_");
  CRUCIBLE_CHECK(source.dtype() == self.dtype(),
                 "index_add_(): self and source must have the same scalar type");
  const int64_t src_dim_size = source.dim() == 0 ? 1 : source.size(dim < source.dim() ? dim : 0);
  CRUCIBLE_CHECK(index.numel() == src_dim_size,
                 "index_add_(): Number of indices should be equal to source.size(dim)");
  bool shape_ok = std::max<int64_t>(source.dim(), 1) == std::max<int64_t>(self.dim(), 1);
  for (int64_t d = 0; shape_ok && d < self.dim(); ++d)
    if (d != dim && self.size(d) != source.size(d)) shape_ok = false;
  CRUCIBLE_CHECK(shape_ok,
                 "index_add_(): source tensor shape must match self tensor shape, excluding the "
                 "specified dimension");
  const std::vector<int64_t> idx = load_index(index);
  check_range(idx, self.dim() == 0 ? 1 : self.size(dim));
  const double alpha = a.at(4).to_double();
  const DType work = norm_work(self.dtype(), any_extreme({&self, &source}));
  Tensor out = work == DType::Float64 ? index_add_t<double>(self, dim, idx, source, alpha, work)
                                      : index_add_t<float>(self, dim, idx, source, alpha, work);
  return {norm_out(out, self.dtype())};
}

std::vector<DType> copy_dtypes() {
  return {DType::Bool,  DType::UInt8,   DType::Int8,     DType::Int16,   DType::Int32,
          DType::Int64, DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
}

std::vector<DType> f32_family_and_f64() {
  return {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
}

}  // namespace

void register_index_kernels(KernelTable& t) {
  t.add("aten.index_select.default", {index_select_kernel, nullptr, copy_dtypes()});
  t.add("aten.gather.default", {gather_kernel, nullptr, copy_dtypes()});
  t.add("aten.scatter_add.default", {scatter_add_kernel, nullptr, f32_family_and_f64()});
  t.add("aten.index_add.default", {index_add_kernel, nullptr, f32_family_and_f64()});
}

}  // namespace crucible::cpu
