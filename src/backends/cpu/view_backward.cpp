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
// overwritten by src, converted to self's dtype. Destination-passing: the meta functions
// (ops/slice_scatter.cpp) checked the view arguments and src's shape and laid out the output; the
// views are crucible/ops/rules/shape.h's.
#include <algorithm>
#include <string>
#include <vector>

#include "backends/cpu/parallel.h"
#include "backends/cpu/shape_copy.h"
#include "backends/cpu/shape_kernels.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"
#include "crucible/ops/rules/shape.h"

namespace crucible::cpu {

namespace {

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

void select_backward(const OpDef&, const Args& a, const Values& outputs) {
  const Tensor& out = outputs[0].tensor();
  if (out.numel() == 0) return;
  const Tensor v = out.select(a.integer("dim"), a.integer("index"));
  const Tensor& grad = a.tensor("grad_output");
  const Tensor g = grad.shape() == v.shape() ? grad : grad.expand(v.shape());
  const int64_t d = wrap_dim(a.integer("dim"), out.dim());
  const int64_t i = start_of(out, v, d);
  write_slab(out, d, i, i + 1, g, Tensor());
}

void slice_backward(const OpDef&, const Args& a, const Values& outputs) {
  const Tensor& out = outputs[0].tensor();
  if (out.numel() == 0) return;
  const int64_t step = a.integer("step");
  const Tensor v = out.slice(a.integer("dim"), a.integer("start"), a.integer("end"), step);
  const Tensor& grad = a.tensor("grad_output");
  const Tensor g = grad.shape() == v.shape() ? grad : grad.expand(v.shape());
  const int64_t d = wrap_dim(a.integer("dim"), out.dim());
  if (step == 1) {
    const int64_t lo = start_of(out, v, d);
    write_slab(out, d, lo, lo + v.shape()[d], g, Tensor());
  } else {
    fill_tensor(out, pattern_of_int(0, out.dtype()));
    copy_into(g, v);
  }
}

// self with the view `v` of out, at [lo, lo + v's size) of dim d, taken from src.
void scatter_slab(const Tensor& out, const Tensor& v, int64_t d, const Tensor& self,
                  const Tensor& src) {
  const int64_t lo = start_of(out, v, d);
  const Tensor s = src.dtype() == out.dtype() ? src : contiguous_copy(src, out.dtype());
  write_slab(out, d, lo, lo + v.shape()[d], s, self);
}

void select_scatter(const OpDef&, const Args& a, const Values& outputs) {
  const Tensor& out = outputs[0].tensor();
  if (out.numel() == 0) return;
  const Tensor v = out.select(a.integer("dim"), a.integer("index"));
  const int64_t d = wrap_dim(a.integer("dim"), out.dim());
  // The selected index as a one-element slab.
  scatter_slab(out, v.unsqueeze(d), d, a.tensor("self"), a.tensor("src").unsqueeze(d));
}

void slice_scatter(const OpDef&, const Args& a, const Values& outputs) {
  const Tensor& out = outputs[0].tensor();
  if (out.numel() == 0) return;
  const int64_t step = a.integer("step");
  const Tensor v = shape_ops::slice(out, a.integer("dim"), a.value("start"), a.value("end"), step);
  if (step == 1)
    return scatter_slab(out, v, wrap_dim(a.integer("dim"), out.dim()), a.tensor("self"),
                        a.tensor("src"));
  copy_into(a.tensor("self"), out);
  copy_into(a.tensor("src"), v);
}

// self's values, then src into the view of the output.
void scatter_by_view(const Args& a, const Tensor& out, const Tensor& v) {
  copy_into(a.tensor("self"), out);
  copy_into(a.tensor("src"), v);
}

void diagonal_scatter(const OpDef&, const Args& a, const Values& outputs) {
  const Tensor& out = outputs[0].tensor();
  scatter_by_view(
      a, out, shape_ops::diagonal(out, a.integer("offset"), a.integer("dim1"), a.integer("dim2")));
}

// The output keeps self's strides when self is dense (clone's preserve format: the meta function's
// layout); the view is taken on its storage.
void as_strided_scatter(const OpDef&, const Args& a, const Values& outputs) {
  const Tensor& out = outputs[0].tensor();
  scatter_by_view(
      a, out,
      shape_ops::as_strided(out, a.ints("size"), a.ints("stride"), a.value("storage_offset")));
}

}  // namespace

void register_view_backward_kernels(KernelTable& t) {
  const std::vector<DType> all = shape_dtypes();
  for (auto [name, fn] : {std::pair{"aten.select_backward.default", &select_backward},
                          {"aten.slice_backward.default", &slice_backward},
                          {"aten.select_scatter.default", &select_scatter},
                          {"aten.slice_scatter.default", &slice_scatter},
                          {"aten.diagonal_scatter.default", &diagonal_scatter},
                          {"aten.as_strided_scatter.default", &as_strided_scatter}})
    t.add(name, {.supports = &shape_supports, .dtypes = all, .run_into = fn});
}

}  // namespace crucible::cpu
