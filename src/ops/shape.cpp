// Shape views and their _copy variants: alias, _unsafe_view, as_strided, expand, squeeze
// (.default/.dim/.dims), unsqueeze(_), diagonal, select.int, slice.Tensor, split.Tensor,
// split_with_sizes, unbind.int, transpose.int, t, and view_copy, permute_copy, expand_copy,
// squeeze_copy*, unsqueeze_copy, diagonal_copy, as_strided_copy, transpose_copy.int,
// alias_copy, t_copy, unbind_copy.int, split_with_sizes_copy.
//
// Reference semantics (PyTorch 2.x; TensorShape.cpp):
//  - Views return tensors sharing the input's storage with exactly ATen's sizes, strides and
//    storage offset (compare.output_is_view); the _copy variants return fresh contiguous
//    tensors with the same values. Every dtype.
//  - as_strided: storage_offset None keeps the input's storage offset; the offset is absolute
//    (relative to the storage start, not to the view); negative strides and views that leave
//    the storage raise.
//  - expand: -1 keeps a size; new leading dims get stride 0, as do expanded size-1 dims;
//    `implicit` changes nothing in the result.
//  - squeeze() drops every size-1 dim; squeeze.dim drops dim only when its size is 1; squeeze
//    of a 0-d tensor accepts dim 0 and -1 and returns it unchanged; squeeze.dims raises on a
//    repeated dim ("dim 0 appears multiple times in the list of dims").
//  - unsqueeze: the new dim's stride is size*stride of the dim it precedes (1 at the end).
//  - diagonal: dims wrapped, identical dims raise; the diagonal's length is
//    max(0, min(size1, size2 - offset)) (offset >= 0) or max(0, min(size1 + offset, size2));
//    the storage offset moves by offset*stride2 (or -offset*stride1) unless the length is 0;
//    the diagonal dim is last, with stride stride1 + stride2.
//  - select: index in [-size, size), wrapped. slice: start/end None = 0/end, negatives wrapped
//    once then clamped into [0, size] (end to at least start); step must be positive.
//  - split.Tensor: chunks of split_size along dim (the last one shorter); split_size 0 only
//    when the dim is empty; a 0-d input raises. split_with_sizes: sizes non-negative, summing
//    to the dim size. unbind: select of every index. All return a TensorList of views.
//  - t: <= 2-d only; 0-d and 1-d are returned unchanged (as views).
//  - unsqueeze_ changes self's metadata in place. A reference cannot rebind the caller's
//    tensor (argument values are immutable here), so it returns the unsqueezed view of self's
//    storage; the evaluator checks the output shares self's storage and has the new shape.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "crucible/core/error.h"
#include "ops/families.h"
#include "ops/meta_fn.h"
#include "ops/samples.h"
#include "ops/shape_internal.h"

namespace crucible {
namespace shape_ops {

namespace {
std::string list_str(const std::vector<int64_t>& v) { return shape_str(v); }
}  // namespace

Tensor squeeze_all(const Tensor& t) {
  Shape shape, strides;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.size(d) == 1) continue;
    shape.push_back(t.size(d));
    strides.push_back(t.stride(d));
  }
  return t.as_strided(shape, strides, t.offset());
}

Tensor squeeze_dims(const Tensor& t, const std::vector<int64_t>& dims) {
  std::vector<bool> drop(static_cast<size_t>(std::max<int64_t>(t.dim(), 1)), false);
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, t.dim());
    if (drop[static_cast<size_t>(w)])
      op_error("dim " + std::to_string(w) + " appears multiple times in the list of dims");
    drop[static_cast<size_t>(w)] = true;
  }
  Shape shape, strides;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (drop[static_cast<size_t>(d)] && t.size(d) == 1) continue;
    shape.push_back(t.size(d));
    strides.push_back(t.stride(d));
  }
  return t.as_strided(shape, strides, t.offset());
}

Tensor diagonal(const Tensor& t, int64_t offset, int64_t dim1, int64_t dim2) {
  const int64_t d1 = wrap_dim(dim1, t.dim());
  const int64_t d2 = wrap_dim(dim2, t.dim());
  if (d1 == d2)
    op_error("diagonal dimensions cannot be identical " + std::to_string(dim1) + ", " +
             std::to_string(dim2));
  int64_t len = offset >= 0 ? std::min(t.size(d1), t.size(d2) - offset)
                            : std::min(t.size(d1) + offset, t.size(d2));
  len = std::max<int64_t>(len, 0);
  int64_t storage_offset = t.offset();
  if (len > 0) {
    storage_offset += offset >= 0 ? offset * t.stride(d2) : -offset * t.stride(d1);
  }
  Shape shape, strides;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (d == d1 || d == d2) continue;
    shape.push_back(t.size(d));
    strides.push_back(t.stride(d));
  }
  shape.push_back(len);
  strides.push_back(t.stride(d1) + t.stride(d2));
  return Tensor::from_storage(t.storage(), storage_offset, shape, strides, t.dtype());
}

Tensor as_strided(const Tensor& t, const Shape& size, const Shape& stride, const Value& offset) {
  const int64_t off = offset.is_none() ? t.offset() : offset.to_int();
  return t.as_strided(size, stride, off);
}

Tensor slice(const Tensor& t, int64_t dim, const Value& start, const Value& end, int64_t step) {
  const int64_t s = start.is_none() ? 0 : start.to_int();
  const int64_t e = end.is_none() ? INT64_MAX : end.to_int();
  return t.slice(dim, s, e, step);
}

std::vector<Tensor> split(const Tensor& t, int64_t split_size, int64_t dim) {
  CRUCIBLE_CHECK(t.dim() != 0, "split expects at least a 1-dimensional tensor");
  if (split_size < 0)
    op_error("split expects split_size be non-negative, but got split_size=" +
             std::to_string(split_size));
  const int64_t w = wrap_dim(dim, t.dim());
  const int64_t n = t.size(w);
  if (split_size == 0 && n != 0)
    op_error("split_size can only be 0 if dimension size is 0, but got dimension size of " +
             std::to_string(n));
  const int64_t chunks =
      split_size == 0 ? 1 : std::max<int64_t>((n + split_size - 1) / split_size, 1);
  std::vector<Tensor> out;
  for (int64_t i = 0; i < chunks; ++i) {
    const int64_t lo = i * split_size;
    out.push_back(t.slice(w, lo, std::min(n, lo + split_size)));
  }
  return out;
}

std::vector<Tensor> split_with_sizes(const Tensor& t, const std::vector<int64_t>& sizes,
                                     int64_t dim) {
  CRUCIBLE_CHECK(t.dim() != 0, "split expects at least a 1-dimensional tensor");
  const int64_t w = wrap_dim(dim, t.dim());
  const int64_t n = t.size(w);
  int64_t sum = 0;
  for (int64_t s : sizes) {
    if (s < 0)
      op_error(
          "split_with_sizes expects split_sizes have only non-negative entries, but got "
          "split_sizes=" +
          list_str(sizes));
    sum += s;
  }
  if (sum != n)
    op_error("split_with_sizes expects split_sizes to sum exactly to " + std::to_string(n) +
             " (input tensor's size at dimension " + std::to_string(dim) +
             "), but got split_sizes=" + list_str(sizes));
  std::vector<Tensor> out;
  int64_t lo = 0;
  for (int64_t s : sizes) {
    out.push_back(t.slice(w, lo, lo + s));
    lo += s;
  }
  return out;
}

std::vector<Tensor> unbind(const Tensor& t, int64_t dim) {
  CRUCIBLE_CHECK(t.dim() != 0, "Dimension specified as 0 but tensor has no dimensions");
  const int64_t w = wrap_dim(dim, t.dim());
  std::vector<Tensor> out;
  for (int64_t i = 0; i < t.size(w); ++i) out.push_back(t.select(w, i));
  return out;
}

Tensor t_2d(const Tensor& t) {
  if (t.dim() > 2)
    op_error("t() expects a tensor with <= 2 dimensions, but self is " + std::to_string(t.dim()) +
             "D");
  if (t.dim() < 2) return t.as_strided(t.shape(), t.strides(), t.offset());
  return t.transpose(0, 1);
}

}  // namespace shape_ops

namespace {

using namespace shape_ops;  // NOLINT(google-build-using-namespace)

using ViewFn = std::function<Tensor(const Args& a)>;
using ListFn = std::function<std::vector<Tensor>(const Args& a)>;

double bytes_of(const Values& outs) {
  double b = 0;
  for (const Value& v : outs) {
    if (v.is_tensor()) b += static_cast<double>(v.tensor().numel() * v.tensor().itemsize());
    if (v.kind() == ValueKind::TensorList)
      for (const Tensor& t : v.tensors()) b += static_cast<double>(t.numel() * t.itemsize());
  }
  return b;
}

const Tensor& self(const Args& a) { return a.tensor("self"); }

// A view moves no data: the cost is zero (timings report latency only).
Cost view_cost(const Args&, const Values&) { return {}; }
// A copy reads and writes every output element once.
Cost copy_cost(const Args&, const Values& out) { return {0, 2 * bytes_of(out)}; }

void add_view(OpRegistry& r, const char* schema, const ViewFn& fn, SampleFn samples) {
  OpDef op = OpDef::from_schema(schema, "view");
  op.dtypes = samples::all_numeric_dtypes();
  // The view costs nothing to compute: the meta output is the reference's view itself.
  op.meta = [fn](const Args& a) { return Values{fn(a)}; };
  op.ref = [fn](const Args& a) { return Values{fn(a)}; };
  op.samples = std::move(samples);
  op.cost = view_cost;
  op.compare.output_is_view = true;
  r.add(std::move(op));
}

void add_copy(OpRegistry& r, const char* schema, const ViewFn& fn, SampleFn samples,
              bool may_alias = false) {
  OpDef op = OpDef::from_schema(schema, "view");
  op.compare.output_may_alias = may_alias;
  op.dtypes = samples::all_numeric_dtypes();
  op.meta = [fn](const Args& a) { return Values{meta::fresh(fn(a).shape(), self(a).dtype())}; };
  op.ref = [fn](const Args& a) { return Values{fn(a).clone()}; };
  op.samples = std::move(samples);
  op.cost = copy_cost;
  r.add(std::move(op));
}

void add_list(OpRegistry& r, const char* schema, const ListFn& fn, SampleFn samples, bool copy) {
  OpDef op = OpDef::from_schema(schema, "view");
  op.dtypes = samples::all_numeric_dtypes();
  op.meta = [fn, copy](const Args& a) {
    std::vector<Tensor> ts = fn(a);
    if (copy)
      for (Tensor& t : ts) t = Tensor::meta(t.shape(), t.dtype());
    return Values{Value::tensor_list(std::move(ts))};
  };
  op.ref = [fn, copy](const Args& a) {
    std::vector<Tensor> ts = fn(a);
    if (copy)
      for (Tensor& t : ts) t = t.clone();
    return Values{Value::tensor_list(std::move(ts))};
  };
  op.samples = std::move(samples);
  op.cost = copy ? CostFn(copy_cost) : CostFn(view_cost);
  op.compare.output_is_view = !copy;
  r.add(std::move(op));
}

}  // namespace

void register_shape_ops(OpRegistry& r) {
  const ViewFn alias = [](const Args& a) {
    return self(a).as_strided(self(a).shape(), self(a).strides(), self(a).offset());
  };
  const ViewFn as_strided_fn = [](const Args& a) {
    return as_strided(self(a), a.ints("size"), a.ints("stride"), a.value("storage_offset"));
  };
  const ViewFn expand = [](const Args& a) { return self(a).expand(a.ints("size")); };
  const ViewFn squeeze = [](const Args& a) { return squeeze_all(self(a)); };
  const ViewFn squeeze_dim = [](const Args& a) {
    return squeeze_dims(self(a), {a.integer("dim")});
  };
  const ViewFn squeeze_dims_fn = [](const Args& a) { return squeeze_dims(self(a), a.ints("dim")); };
  const ViewFn unsqueeze = [](const Args& a) { return self(a).unsqueeze(a.integer("dim")); };
  const ViewFn diagonal_fn = [](const Args& a) {
    return diagonal(self(a), a.integer("offset"), a.integer("dim1"), a.integer("dim2"));
  };
  const ViewFn select = [](const Args& a) {
    return self(a).select(a.integer("dim"), a.integer("index"));
  };
  const ViewFn slice_fn = [](const Args& a) {
    return slice(self(a), a.integer("dim"), a.value("start"), a.value("end"), a.integer("step"));
  };
  const ViewFn transpose = [](const Args& a) {
    return self(a).transpose(a.integer("dim0"), a.integer("dim1"));
  };
  const ViewFn t = [](const Args& a) { return t_2d(self(a)); };
  const ViewFn view = [](const Args& a) { return self(a).view(a.ints("size")); };
  const ViewFn permute = [](const Args& a) { return self(a).permute(a.ints("dims")); };
  const ListFn split_fn = [](const Args& a) {
    return split(self(a), a.integer("split_size"), a.integer("dim"));
  };
  const ListFn split_sizes_fn = [](const Args& a) {
    return split_with_sizes(self(a), a.ints("split_sizes"), a.integer("dim"));
  };
  const ListFn unbind_fn = [](const Args& a) { return unbind(self(a), a.integer("dim")); };

  add_view(r, "aten::alias(Tensor(a) self) -> Tensor(a)", alias, alias_samples);
  add_copy(r, "aten::_unsafe_view(Tensor self, SymInt[] size) -> Tensor", view, unsafe_view_samples,
           /*may_alias=*/true);
  // ATen's _unsafe_view returns self's storage under the new shape (a view that autograd does
  // not track), though the schema has no alias annotation: an alias and a copy are both right.
  add_view(r,
           "aten::as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? "
           "storage_offset=None) -> Tensor(a)",
           as_strided_fn, as_strided_samples);
  add_view(r, "aten::expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)",
           expand, expand_samples);
  add_view(r, "aten::squeeze(Tensor(a) self) -> Tensor(a)", squeeze, squeeze_samples);
  add_view(r, "aten::squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)", squeeze_dim,
           squeeze_dim_samples);
  add_view(r, "aten::squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)", squeeze_dims_fn,
           squeeze_dims_samples);
  add_view(r, "aten::unsqueeze(Tensor(a) self, int dim) -> Tensor(a)", unsqueeze,
           unsqueeze_samples);
  {
    OpDef op =
        OpDef::from_schema("aten::unsqueeze_(Tensor(a!) self, int dim) -> Tensor(a!)", "view");
    op.dtypes = samples::all_numeric_dtypes();
    op.meta = [unsqueeze](const Args& a) { return Values{unsqueeze(a)}; };
    op.ref = [unsqueeze](const Args& a) { return Values{unsqueeze(a)}; };
    op.samples = unsqueeze_samples;
    op.cost = view_cost;
    r.add(std::move(op));
  }
  add_view(r, "aten::diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)",
           diagonal_fn, diagonal_samples);
  add_view(r, "aten::select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)", select,
           select_samples);
  add_view(r,
           "aten::slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, "
           "SymInt step=1) -> Tensor(a)",
           slice_fn, slice_samples);
  add_list(r,
           "aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
           split_fn, split_samples, false);
  add_list(r,
           "aten::split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> "
           "Tensor(a)[]",
           split_sizes_fn, split_with_sizes_samples, false);
  add_list(r, "aten::unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]", unbind_fn,
           unbind_samples, false);
  add_view(r, "aten::transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)", transpose,
           transpose_samples);
  add_view(r, "aten::t(Tensor(a) self) -> Tensor(a)", t, t_samples);

  add_copy(r, "aten::view_copy(Tensor self, SymInt[] size) -> Tensor", view, view_copy_samples);
  add_copy(r, "aten::permute_copy(Tensor self, int[] dims) -> Tensor", permute,
           permute_copy_samples);
  add_copy(r, "aten::expand_copy(Tensor self, SymInt[] size, *, bool implicit=False) -> Tensor",
           expand, expand_samples);
  add_copy(r, "aten::squeeze_copy(Tensor self) -> Tensor", squeeze, squeeze_samples);
  add_copy(r, "aten::squeeze_copy.dim(Tensor self, int dim) -> Tensor", squeeze_dim,
           squeeze_dim_samples);
  add_copy(r, "aten::squeeze_copy.dims(Tensor self, int[] dim) -> Tensor", squeeze_dims_fn,
           squeeze_dims_samples);
  add_copy(r, "aten::unsqueeze_copy(Tensor self, int dim) -> Tensor", unsqueeze, unsqueeze_samples);
  add_copy(r, "aten::diagonal_copy(Tensor self, int offset=0, int dim1=0, int dim2=1) -> Tensor",
           diagonal_fn, diagonal_samples);
  add_copy(r,
           "aten::as_strided_copy(Tensor self, SymInt[] size, SymInt[] stride, SymInt? "
           "storage_offset=None) -> Tensor",
           as_strided_fn, as_strided_samples);
  add_copy(r, "aten::transpose_copy.int(Tensor self, int dim0, int dim1) -> Tensor", transpose,
           transpose_samples);
  add_copy(r, "aten::alias_copy(Tensor self) -> Tensor", alias, alias_samples);
  add_copy(r, "aten::t_copy(Tensor self) -> Tensor", t, t_samples);
  add_list(r, "aten::unbind_copy.int(Tensor self, int dim=0) -> Tensor[]", unbind_fn,
           unbind_samples, true);
  add_list(r,
           "aten::split_with_sizes_copy(Tensor self, SymInt[] split_sizes, int dim=0) -> Tensor[]",
           split_sizes_fn, split_with_sizes_samples, true);
}

}  // namespace crucible
