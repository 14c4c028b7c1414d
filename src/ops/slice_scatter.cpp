// Backward and scatter forms of the views: select_backward, select_scatter, slice_backward,
// slice_scatter, diagonal_scatter, as_strided_scatter.
//
// Reference semantics (PyTorch 2.x; TensorShape.cpp):
//  - *_backward(grad, input_sizes, ...): zeros of input_sizes in grad's dtype, with the view
//    (select/slice) of it given grad by copy_ (so grad broadcasts to the view's shape).
//  - *_scatter(self, src, ...): a clone of self whose view is overwritten by src; src must have
//    exactly the view's shape ("expected src to have a size equal to the slice of self. src
//    size = [..], slice size = [..]"); src of another dtype is converted (copy_); the result has
//    self's dtype. The view arguments follow the views (shape.cpp): wrapped dims, slice
//    clamping and positive steps, diagonal lengths, select index range.
//  - as_strided_scatter: the clone keeps self's strides when self is non-overlapping and dense
//    (clone's preserve format), else it is contiguous; the view is taken on the clone's storage
//    with an absolute storage offset (None = 0, the clone's offset). Views that overlap
//    themselves would make the result depend on write order: the samples avoid them.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "crucible/core/error.h"
#include "crucible/ops/destination.h"
#include "ops/families.h"
#include "ops/samples.h"
#include "ops/shape_internal.h"

namespace crucible {
namespace {

using namespace samples;  // NOLINT(google-build-using-namespace)

constexpr DType f32 = DType::Float32;
constexpr DType f16 = DType::Float16;
constexpr DType i64 = DType::Int64;

void check_src(const Tensor& view, const Tensor& src) {
  if (view.shape() != src.shape())
    op_error("expected src to have a size equal to the slice of self. src size = " +
             shape_str(src.shape()) + ", slice size = " + shape_str(view.shape()));
}

// The strides of a clone with "preserve" memory format: self's when self is non-overlapping and
// dense and not empty, else contiguous.
Shape preserve_strides(const Tensor& self) {
  const Shape& sz = self.shape();
  std::vector<size_t> perm(sz.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::sort(perm.begin(), perm.end(), [&](size_t a, size_t b) {
    return self.stride(static_cast<int64_t>(a)) < self.stride(static_cast<int64_t>(b));
  });
  bool dense = true;
  int64_t expect = 1;
  for (size_t p : perm) {
    if (sz[p] < 2) continue;
    if (self.stride(static_cast<int64_t>(p)) != expect) dense = false;
    expect *= sz[p];
  }
  if (!dense || self.numel() == 0) return contiguous_strides(sz);
  return self.strides();
}

// The view of the output (the zeros of a backward, the clone of self of a scatter) that the
// op writes.
using ViewOf = Tensor (*)(const Tensor& out, const Args& a);

Tensor select_backward_view(const Tensor& o, const Args& a) {
  return o.select(a.integer("dim"), a.integer("index"));
}
Tensor slice_backward_view(const Tensor& o, const Args& a) {
  return o.slice(a.integer("dim"), a.integer("start"), a.integer("end"), a.integer("step"));
}
Tensor select_scatter_view(const Tensor& o, const Args& a) {
  return o.select(a.integer("dim"), a.integer("index"));
}
Tensor slice_scatter_view(const Tensor& o, const Args& a) {
  return shape_ops::slice(o, a.integer("dim"), a.value("start"), a.value("end"), a.integer("step"));
}
Tensor diagonal_scatter_view(const Tensor& o, const Args& a) {
  return shape_ops::diagonal(o, a.integer("offset"), a.integer("dim1"), a.integer("dim2"));
}
Tensor as_strided_scatter_view(const Tensor& o, const Args& a) {
  return shape_ops::as_strided(o, a.ints("size"), a.ints("stride"), a.value("storage_offset"));
}

// A backward into its output (zeros of input_sizes in grad's dtype; meta: backward_meta): its
// view given grad (broadcast).
void backward_impl(const Args& a, const Values& out, ViewOf view_of) {
  view_of(out.at(0).tensor(), a).copy_from(a.tensor("grad_output"));
}

// The backward's checks on a meta output: the view exists and grad broadcasts to it.
Values backward_meta(const Args& a, ViewOf view_of) {
  const Tensor& grad = a.tensor("grad_output");
  Tensor out = Tensor::meta(a.ints("input_sizes"), grad.dtype());
  const Tensor v = view_of(out, a);
  if (grad.shape() != v.shape()) grad.expand(v.shape());  // copy_from's broadcast check
  return {Value(out)};
}

// A scatter into its output (contiguous, or with self's strides preserved for
// as_strided_scatter; meta: scatter_meta, which checked src against the view): a copy of self
// whose view is overwritten by src.
void scatter_impl(const Args& a, const Values& outs, ViewOf view_of) {
  const Tensor& out = outs.at(0).tensor();
  out.copy_from(a.tensor("self"));
  view_of(out, a).copy_from(a.tensor("src"));
}

Values scatter_meta(const Args& a, ViewOf view_of, bool preserve) {
  const Tensor& self = a.tensor("self");
  Tensor out = preserve ? Tensor::meta_strided(self.shape(), preserve_strides(self), self.dtype())
                        : Tensor::meta(self.shape(), self.dtype());
  check_src(view_of(out, a), a.tensor("src"));
  return {Value(out)};
}

double nbytes(const Tensor& t) { return static_cast<double>(t.numel() * t.itemsize()); }

// Backward: grad read, output written. Scatter: self read, src read, output written.
Cost scatter_cost(const Args& a, const Values& out) {
  Cost c;
  if (out.empty() || !out[0].is_tensor()) return c;
  c.bytes =
      nbytes(a.tensor(a.has("grad_output") ? "grad_output" : "self")) + nbytes(out[0].tensor());
  if (a.has("src") && a.size() > a.index("src") && a.value("src").is_tensor())
    c.bytes += nbytes(a.tensor("src"));
  return c;
}

std::vector<Sample> select_backward_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    for (DType t : {f32, f16})
      out.push_back(make("CLS grad [64, 768] into [64, 128, 768] " + dtype_code_str(t),
                         {T({64, 768}, t), L({64, 128, 768}), I(1), I(0)}));
    return out;
  }
  for (DType t : all_numeric_dtypes())
    out.push_back(make("row " + dtype_code_str(t), {T({4}, t), L({3, 4}), I(0), I(1)}));
  out.push_back(make("column, negative index", {T({3}, f32), L({3, 4}), I(1), I(-1)}));
  out.push_back(make("negative dim, 3-d", {T({2, 3}, f32), L({2, 3, 5}), I(-1), I(4)}));
  out.push_back(make("0-d grad", {T({}, f32), L({5}), I(0), I(2)}));
  out.push_back(make("empty", {T({0}, f32), L({3, 0}), I(0), I(2)}));
  out.push_back(make("broadcast grad", {T({1}, f32), L({3, 4}), I(0), I(1)}));
  out.push_back(make("transposed grad", {T_transposed(3, 4, f16), L({3, 2, 4}), I(1), I(1)}));
  out.push_back(make("expanded grad", {T({3, 4}, f32, {0, 1}), L({3, 4, 2}), I(2), I(0)}));
  out.push_back(make("special values", {T_fill({6}, f32, "special"), L({2, 6}), I(0), I(1)}));
  out.push_back(make("error: index out of range", {T({4}, f32), L({3, 4}), I(0), I(3)}));
  out.push_back(make("error: dim out of range", {T({4}, f32), L({3, 4}), I(2), I(0)}));
  return out;
}

std::vector<Sample> select_scatter_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    for (DType t : {f32, f16})
      out.push_back(make("[64, 128, 768] token 0 " + dtype_code_str(t),
                         {T({64, 128, 768}, t), T({64, 768}, t), I(1), I(0)}));
    return out;
  }
  for (DType t : all_numeric_dtypes())
    out.push_back(make("row " + dtype_code_str(t), {T({3, 4}, t), T({4}, t), I(0), I(1)}));
  out.push_back(make("column, negative index", {T({3, 4}, f32), T({3}, f32), I(1), I(-1)}));
  out.push_back(make("negative dim, 3-d", {T({2, 3, 5}, f32), T({2, 3}, f32), I(-1), I(4)}));
  out.push_back(make("1-d self, 0-d src", {T({5}, f32), T({}, f32), I(0), I(2)}));
  out.push_back(make("empty", {T({3, 0}, f32), T({0}, f32), I(0), I(2)}));
  out.push_back(make("src of another dtype", {T({3, 4}, f32), T({4}, i64), I(0), I(0)}));
  out.push_back(make("transposed self", {T_transposed(4, 3, f32), T({4}, f32), I(1), I(2)}));
  out.push_back(make("expanded self", {T({3, 4}, f16, {0, 1}), T({4}, f16), I(0), I(1)}));
  out.push_back(make("sliced src", {T({3, 4}, f32), T({4}, f32, {2}), I(0), I(2)}));
  out.push_back(make("special values",
                     {T_fill({2, 6}, f32, "special"), T_fill({6}, f32, "special"), I(0), I(1)}));
  out.push_back(make("error: src shape differs", {T({3, 4}, f32), T({3}, f32), I(0), I(1)}));
  out.push_back(make("error: src would broadcast", {T({3, 4}, f32), T({1}, f32), I(0), I(1)}));
  out.push_back(make("error: index out of range", {T({3, 4}, f32), T({4}, f32), I(0), I(-4)}));
  return out;
}

std::vector<Sample> slice_backward_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    for (DType t : {f32, f16})
      out.push_back(make("half features [64, 128, 384] " + dtype_code_str(t),
                         {T({64, 128, 384}, t), L({64, 128, 768}), I(2), I(0), I(384), I(1)}));
    return out;
  }
  for (DType t : all_numeric_dtypes())
    out.push_back(
        make("range " + dtype_code_str(t), {T({2, 4}, t), L({5, 4}), I(0), I(1), I(3), I(1)}));
  out.push_back(make("step 2", {T({3, 3}, f32), L({3, 6}), I(1), I(0), I(6), I(2)}));
  out.push_back(make("end INT64_MAX", {T({2, 3}, f32), L({5, 3}), I(0), I(3), I(INT64_MAX), I(1)}));
  out.push_back(make("negative start", {T({2}, f32), L({6}), I(0), I(-2), I(6), I(1)}));
  out.push_back(make("negative dim", {T({2, 2}, f32), L({2, 7}), I(-1), I(1), I(5), I(3)}));
  out.push_back(make("empty slice", {T({0, 4}, f32), L({5, 4}), I(0), I(3), I(3), I(1)}));
  out.push_back(
      make("transposed grad", {T_transposed(3, 4, f16), L({3, 8}), I(1), I(0), I(8), I(2)}));
  out.push_back(
      make("special values", {T_fill({6}, f32, "special"), L({9}), I(0), I(3), I(9), I(1)}));
  out.push_back(make("error: step 0", {T({2}, f32), L({6}), I(0), I(0), I(2), I(0)}));
  out.push_back(make("error: dim out of range", {T({2}, f32), L({6}), I(1), I(0), I(2), I(1)}));
  return out;
}

std::vector<Sample> slice_scatter_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    for (DType t : {f32, f16})
      out.push_back(make("half features [64, 128, 768] " + dtype_code_str(t),
                         {T({64, 128, 768}, t), T({64, 128, 384}, t), I(2), I(0), I(384)}));
    return out;
  }
  for (DType t : all_numeric_dtypes())
    out.push_back(
        make("range " + dtype_code_str(t), {T({5, 4}, t), T({2, 4}, t), I(0), I(1), I(3)}));
  out.push_back(make("defaults (whole tensor)", {T({3, 4}, f32), T({3, 4}, f32)}));
  out.push_back(make("step 2, start and end None",
                     {T({3, 6}, f32), T({3, 3}, f32), I(1), None(), None(), I(2)}));
  out.push_back(make("keywords", {T({3, 7}, f32), T({3, 2}, f32)},
                     {{"dim", I(-1)}, {"start", I(1)}, {"end", I(6)}, {"step", I(3)}}));
  out.push_back(make("end clamped", {T({5}, f32), T({2}, f32), I(0), I(3), I(100)}));
  out.push_back(make("empty slice", {T({5}, f32), T({0}, f32), I(0), I(4), I(2)}));
  out.push_back(
      make("src of another dtype", {T({5}, f16), T({2}, DType::Int32), I(0), I(0), I(2)}));
  out.push_back(
      make("transposed self", {T_transposed(4, 6, f32), T({4, 3}, f32), I(1), I(0), I(6), I(2)}));
  out.push_back(make("expanded src", {T({4, 6}, f32), T({2, 6}, f32, {0, 1}), I(0), I(2)}));
  out.push_back(make("special values",
                     {T_fill({12}, f32, "special"), T_fill({4}, f32, "special"), I(0), I(8)}));
  out.push_back(make("error: src shape differs", {T({5}, f32), T({3}, f32), I(0), I(1), I(3)}));
  out.push_back(make("error: step 0", {T({5}, f32), T({5}, f32), I(0), None(), None(), I(0)}));
  out.push_back(make("error: 0-d self", {T({}, f32), T({}, f32)}));
  return out;
}

std::vector<Sample> diagonal_scatter_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    for (DType t : {f32, f16})
      out.push_back(make("batched [64, 512, 512] " + dtype_code_str(t),
                         {T({64, 512, 512}, t), T({64, 512}, t), I(0), I(1), I(2)}));
    return out;
  }
  for (DType t : all_numeric_dtypes())
    out.push_back(make("square " + dtype_code_str(t), {T({4, 4}, t), T({4}, t)}));
  out.push_back(make("offset 1", {T({3, 5}, f32), T({3}, f32), I(1)}));
  out.push_back(make("offset -2", {T({5, 3}, f32), T({3}, f32), I(-2)}));
  out.push_back(make("offset past the end (empty)", {T({3, 4}, f32), T({0}, f32), I(4)}));
  out.push_back(make("3-d dims 0, 2", {T({3, 2, 4}, f32), T({2, 3}, f32), I(0), I(0), I(2)}));
  out.push_back(make("keywords, reversed dims", {T({2, 3, 3}, f32), T({2, 2}, f32)},
                     {{"offset", I(1)}, {"dim1", I(2)}, {"dim2", I(1)}}));
  out.push_back(make("transposed self", {T_transposed(4, 4, f16), T({4}, f16)}));
  out.push_back(make("src of another dtype", {T({3, 3}, f32), T({3}, DType::Bool)}));
  out.push_back(
      make("special values", {T_fill({5, 5}, f32, "special"), T_fill({5}, f32, "special")}));
  out.push_back(make("error: src shape differs", {T({3, 3}, f32), T({2}, f32)}));
  out.push_back(make("error: identical dims", {T({3, 3}, f32), T({3}, f32), I(0), I(1), I(1)}));
  return out;
}

std::vector<Sample> as_strided_scatter_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    for (DType t : {f32, f16})
      out.push_back(make("every other row [2048, 2048] " + dtype_code_str(t),
                         {T({2048, 2048}, t), T({1024, 2048}, t), L({1024, 2048}), L({4096, 1})}));
    return out;
  }
  for (DType t : all_numeric_dtypes())
    out.push_back(
        make("transpose " + dtype_code_str(t), {T({3, 4}, t), T({4, 3}, t), L({4, 3}), L({1, 4})}));
  out.push_back(make("offset", {T({3, 4}, f32), T({2, 2}, f32), L({2, 2}), L({4, 1}), I(5)}));
  out.push_back(make("offset keyword", {T({12}, f32), T({3}, f32), L({3}), L({4})},
                     {{"storage_offset", I(1)}}));
  out.push_back(
      make("offset None", {T({3, 4}, f32), T({2, 3}, f32), L({2, 3}), L({1, 2}), None()}));
  out.push_back(make("0-d view", {T({6}, f32), T({}, f32), L({}), L({}), I(3)}));
  out.push_back(make("empty view", {T({6}, f32), T({0, 2}, f32), L({0, 2}), L({2, 1})}));
  out.push_back(
      make("transposed (dense) self", {T_transposed(4, 6, f32), T({6}, f32), L({6}), L({4})}));
  out.push_back(
      make("sliced (not dense) self", {T({3, 4}, f32, {8, 2}), T({4}, f32), L({4}), L({3})}));
  out.push_back(make("src of another dtype", {T({3, 4}, f16), T({3}, i64), L({3}), L({4})}));
  out.push_back(make("error: src shape differs", {T({3, 4}, f32), T({3}, f32), L({4}), L({1})}));
  out.push_back(
      make("error: out of storage", {T({3, 4}, f32), T({4, 4}, f32), L({4, 4}), L({4, 1})}));
  return out;
}

void add(OpRegistry& r, const char* schema, MetaFn meta, ImplFn impl, SampleFn samples) {
  OpDef op = OpDef::from_schema(schema, "view.backward");
  op.dtypes = all_numeric_dtypes();
  op.meta = std::move(meta);
  op.ref = structured_ref(op.meta, std::move(impl));
  op.samples = std::move(samples);
  op.cost = scatter_cost;
  r.add(std::move(op));
}

}  // namespace

void register_slice_scatter_ops(OpRegistry& r) {
  auto backward = [](ViewOf view_of) {
    return std::pair<MetaFn, ImplFn>{
        [view_of](const Args& a) { return backward_meta(a, view_of); },
        [view_of](const Args& a, const Values& out) { backward_impl(a, out, view_of); }};
  };
  auto scatter = [](ViewOf view_of, bool preserve = false) {
    return std::pair<MetaFn, ImplFn>{
        [view_of, preserve](const Args& a) { return scatter_meta(a, view_of, preserve); },
        [view_of](const Args& a, const Values& out) { scatter_impl(a, out, view_of); }};
  };
  auto add_op = [&r](const char* schema, const std::pair<MetaFn, ImplFn>& fns, SampleFn samples) {
    add(r, schema, fns.first, fns.second, std::move(samples));
  };
  add_op(
      "aten::select_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt index) -> "
      "Tensor",
      backward(select_backward_view), select_backward_samples);
  add_op("aten::select_scatter(Tensor self, Tensor src, int dim, SymInt index) -> Tensor",
         scatter(select_scatter_view), select_scatter_samples);
  add_op(
      "aten::slice_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt start, "
      "SymInt end, SymInt step) -> Tensor",
      backward(slice_backward_view), slice_backward_samples);
  add_op(
      "aten::slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? "
      "end=None, SymInt step=1) -> Tensor",
      scatter(slice_scatter_view), slice_scatter_samples);
  add_op(
      "aten::diagonal_scatter(Tensor self, Tensor src, int offset=0, int dim1=0, int dim2=1) -> "
      "Tensor",
      scatter(diagonal_scatter_view), diagonal_scatter_samples);
  add_op(
      "aten::as_strided_scatter(Tensor self, Tensor src, SymInt[] size, SymInt[] stride, SymInt? "
      "storage_offset=None) -> Tensor",
      scatter(as_strided_scatter_view, true), as_strided_scatter_samples);
}

}  // namespace crucible
