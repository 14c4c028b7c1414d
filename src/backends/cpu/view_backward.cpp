// The cpu backend's backward and scatter forms of the views: select_backward, slice_backward,
// select_scatter, slice_scatter, diagonal_scatter, as_strided_scatter.
//
// The output is contiguous (as_strided_scatter: self's strides when self is dense). With a
// select or a unit-step slice, the view is one slab per row of the dims before `dim`, so the
// output is written once as rows of [before | view | after] pieces (shape_copy.h): zeros or
// self's elements around the gradient or src. Other views are written in two passes (zeros or
// a copy of self, then the view).
//
// ATen's rules (TensorShape.cpp): *_backward: zeros of input_sizes in grad's dtype whose view
// gets grad by copy_ (grad broadcasts to the view). *_scatter: self's values with the view
// overwritten by src, which must have exactly the view's shape and is converted to self's dtype.
// The view arguments raise as the views do (wrapped dims, index range, positive steps).
#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "backends/cpu/parallel.h"
#include "backends/cpu/shape_copy.h"
#include "backends/cpu/shape_kernels.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"

namespace crucible::cpu {

namespace {

void check_src(const Tensor& view, const Tensor& src) {
  if (view.shape() != src.shape())
    op_error("expected src to have a size equal to the slice of self. src size = " +
             shape_str(src.shape()) + ", slice size = " + shape_str(view.shape()));
}

int64_t prod(const Shape& s, int64_t lo, int64_t hi) {
  int64_t p = 1;
  for (int64_t k = lo; k < hi; ++k) p *= s[k];
  return p;
}

// Rows of `n` elements of T, zeros but for [lo, lo + m) taken from the contiguous `mid` (m
// elements per row): a slab of a few bytes per row (select_backward of a last dim of 2) as one
// typed loop instead of a piece list per row.
template <typename T>
void zero_rows_with_slab(T* out, const T* mid, int64_t rows, int64_t n, int64_t lo, int64_t m) {
  // 64K elements per chunk: below two chunks the call stays on the calling thread.
  const int64_t grain = std::max<int64_t>(1, 65536 / n);
  parallel_for(0, rows, grain, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      T* o = out + r * n;
      const T* g = mid + r * m;
      for (int64_t k = 0; k < lo; ++k) o[k] = T(0);
      for (int64_t k = 0; k < m; ++k) o[lo + k] = g[k];
      for (int64_t k = lo + m; k < n; ++k) o[k] = T(0);
    }
  });
}

// The small-slab case of write_slab with zeros around: true when done.
bool write_small_slab(const Tensor& out, int64_t d, int64_t lo, int64_t hi, const Tensor& mid) {
  const Shape& sz = out.shape();
  const int64_t outer = prod(sz, 0, d), inner = prod(sz, d + 1, out.dim());
  const int64_t n = sz[d] * inner, m = (hi - lo) * inner;
  const auto is = static_cast<int64_t>(out.itemsize());
  // Rows of up to 64 bytes (a piece list per row costs more than the row's bytes); mid dense.
  if (n * is > 64 || outer < 2 || !mid.is_contiguous() || mid.dtype() != out.dtype()) return false;
  char* o = static_cast<char*>(out.data_ptr());
  const char* g = static_cast<const char*>(mid.data_ptr());
  const int64_t at = lo * inner;
  switch (is) {
    case 1:
      zero_rows_with_slab(reinterpret_cast<uint8_t*>(o), reinterpret_cast<const uint8_t*>(g), outer,
                          n, at, m);
      return true;
    case 2:
      zero_rows_with_slab(reinterpret_cast<uint16_t*>(o), reinterpret_cast<const uint16_t*>(g),
                          outer, n, at, m);
      return true;
    case 4:
      zero_rows_with_slab(reinterpret_cast<uint32_t*>(o), reinterpret_cast<const uint32_t*>(g),
                          outer, n, at, m);
      return true;
    case 8:
      zero_rows_with_slab(reinterpret_cast<uint64_t*>(o), reinterpret_cast<const uint64_t*>(g),
                          outer, n, at, m);
      return true;
    default:
      return false;
  }
}

// `out` (contiguous) = `around` with out's slab [lo, hi) of dim d taken from `mid` (shaped as
// that slab). `around` is either a tensor of out's shape or, when undefined, zeros.
void write_slab(const Tensor& out, int64_t d, int64_t lo, int64_t hi, const Tensor& mid,
                const Tensor& around) {
  if (!around.defined() && write_small_slab(out, d, lo, hi, mid)) return;
  const Shape& sz = out.shape();
  const int64_t outer = prod(sz, 0, d), inner = prod(sz, d + 1, out.dim());
  const int64_t n = sz[d];
  const Pattern zero = pattern_of_int(0, out.dtype());
  std::vector<Piece> pieces;
  auto side = [&](int64_t a, int64_t b) {
    if (b <= a) return;
    if (around.defined())
      pieces.push_back(copy_piece(around.slice(d, a, b), outer));
    else
      pieces.push_back(fill_piece(zero, (b - a) * inner));
  };
  side(0, lo);
  if (hi > lo) pieces.push_back(copy_piece(mid, outer));
  side(hi, n);
  write_rows(out, outer, pieces);
}

// The index a select/slice view starts at along dim d of `t`, from the view's storage offset.
int64_t start_of(const Tensor& t, const Tensor& view, int64_t d) {
  const int64_t s = t.strides()[d];
  return s == 0 ? 0 : (view.offset() - t.offset()) / s;
}

Values select_backward(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  const Tensor& grad = a.tensor("grad_output");
  Tensor out = Tensor::uninitialized(a.ints("input_sizes"), grad.dtype());
  const Tensor v = out.select(a.integer("dim"), a.integer("index"));
  const Tensor g = grad.shape() == v.shape() ? grad : grad.expand(v.shape());
  if (out.numel() == 0) return {Value(out)};
  const int64_t d = wrap_dim(a.integer("dim"), out.dim());
  const int64_t i = start_of(out, v, d);
  write_slab(out, d, i, i + 1, g, Tensor());
  return {Value(out)};
}

Values slice_backward(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  const Tensor& grad = a.tensor("grad_output");
  Tensor out = Tensor::uninitialized(a.ints("input_sizes"), grad.dtype());
  const int64_t step = a.integer("step");
  const Tensor v = out.slice(a.integer("dim"), a.integer("start"), a.integer("end"), step);
  const Tensor g = grad.shape() == v.shape() ? grad : grad.expand(v.shape());
  if (out.numel() == 0) return {Value(out)};
  const int64_t d = wrap_dim(a.integer("dim"), out.dim());
  if (step == 1) {
    const int64_t lo = start_of(out, v, d);
    write_slab(out, d, lo, lo + v.shape()[d], g, Tensor());
  } else {
    fill_tensor(out, pattern_of_int(0, out.dtype()));
    copy_into(g, v);
  }
  return {Value(out)};
}

Values select_scatter(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  const Tensor& self = a.tensor("self");
  const Tensor& src = a.tensor("src");
  Tensor out = Tensor::uninitialized(self.shape(), self.dtype());
  const Tensor v = out.select(a.integer("dim"), a.integer("index"));
  check_src(v, src);
  if (out.numel() == 0) return {Value(out)};
  const int64_t d = wrap_dim(a.integer("dim"), out.dim());
  const int64_t i = start_of(out, v, d);
  const Tensor s = src.dtype() == out.dtype() ? src : contiguous_copy(src, out.dtype());
  write_slab(out, d, i, i + 1, s, self);
  return {Value(out)};
}

Values slice_scatter(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  const Tensor& self = a.tensor("self");
  const Tensor& src = a.tensor("src");
  Tensor out = Tensor::uninitialized(self.shape(), self.dtype());
  const int64_t step = a.integer("step");
  const int64_t start = a.given("start") ? a.integer("start") : 0;
  const int64_t end = a.given("end") ? a.integer("end") : INT64_MAX;
  const Tensor v = out.slice(a.integer("dim"), start, end, step);
  check_src(v, src);
  if (out.numel() == 0) return {Value(out)};
  const int64_t d = wrap_dim(a.integer("dim"), out.dim());
  if (step == 1) {
    const int64_t lo = start_of(out, v, d);
    const Tensor s = src.dtype() == out.dtype() ? src : contiguous_copy(src, out.dtype());
    write_slab(out, d, lo, lo + v.shape()[d], s, self);
  } else {
    copy_into(self, out);
    copy_into(src, v);
  }
  return {Value(out)};
}

Values diagonal_scatter(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  const Tensor& self = a.tensor("self");
  const Tensor& src = a.tensor("src");
  Tensor out = Tensor::uninitialized(self.shape(), self.dtype());
  const int64_t offset = a.integer("offset");
  const int64_t d1 = wrap_dim(a.integer("dim1"), out.dim());
  const int64_t d2 = wrap_dim(a.integer("dim2"), out.dim());
  if (d1 == d2)
    op_error("diagonal dimensions cannot be identical " + std::to_string(a.integer("dim1")) + ", " +
             std::to_string(a.integer("dim2")));
  const Shape& sz = out.shape();
  const Shape& st = out.strides();
  int64_t len = offset >= 0 ? std::min(sz[d1], sz[d2] - offset) : std::min(sz[d1] + offset, sz[d2]);
  len = std::max<int64_t>(len, 0);
  int64_t off = 0;
  if (len > 0) off = offset >= 0 ? offset * st[d2] : -offset * st[d1];
  Shape shape, strides;
  for (int64_t d = 0; d < out.dim(); ++d) {
    if (d == d1 || d == d2) continue;
    shape.push_back(sz[d]);
    strides.push_back(st[d]);
  }
  shape.push_back(len);
  strides.push_back(st[d1] + st[d2]);
  const Tensor v = Tensor::from_storage(out.storage(), off, shape, strides, out.dtype());
  check_src(v, src);
  copy_into(self, out);
  copy_into(src, v);
  return {Value(out)};
}

// clone(self) with "preserve" memory format: self's strides when self is non-overlapping and
// dense, else contiguous.
Tensor preserve_clone(const Tensor& self) {
  const Shape& sz = self.shape();
  std::vector<size_t> perm(sz.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::sort(perm.begin(), perm.end(),
            [&](size_t x, size_t y) { return self.strides()[x] < self.strides()[y]; });
  bool dense = true;
  int64_t expect = 1;
  for (size_t p : perm) {
    if (sz[p] < 2) continue;
    if (self.strides()[p] != expect) dense = false;
    expect *= sz[p];
  }
  if (!dense || self.numel() == 0) return contiguous_copy(self);
  Tensor out = Tensor::uninitialized_strided(sz, self.strides(), self.dtype());
  copy_into(self, out);
  return out;
}

Values as_strided_scatter(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  const Tensor& self = a.tensor("self");
  const Tensor& src = a.tensor("src");
  Tensor out = preserve_clone(self);
  const Value& off = a.value("storage_offset");
  const Tensor v =
      out.as_strided(a.ints("size"), a.ints("stride"), off.is_none() ? out.offset() : off.to_int());
  check_src(v, src);
  copy_into(src, v);
  return {Value(out)};
}

}  // namespace

void register_view_backward_kernels(KernelTable& t) {
  const std::vector<DType> all = shape_dtypes();
  t.add("aten.select_backward.default", {&select_backward, &shape_supports, all});
  t.add("aten.slice_backward.default", {&slice_backward, &shape_supports, all});
  t.add("aten.select_scatter.default", {&select_scatter, &shape_supports, all});
  t.add("aten.slice_scatter.default", {&slice_scatter, &shape_supports, all});
  t.add("aten.diagonal_scatter.default", {&diagonal_scatter, &shape_supports, all});
  t.add("aten.as_strided_scatter.default", {&as_strided_scatter, &shape_supports, all});
}

}  // namespace crucible::cpu
