// The cpu backend's views (alias, view, as_strided, expand, squeeze*, unsqueeze(_), diagonal,
// select, slice, split*, unbind, transpose, t, permute) and their _copy forms, _unsafe_view
// included. A view is metadata over the input's storage with ATen's sizes, strides and storage
// offset (TensorShape.cpp); a copy is that view written out contiguously by the byte movers
// (shape_copy.h). unsqueeze_ cannot rebind the caller's tensor (argument values are immutable
// here), so it returns the unsqueezed view of self, as the catalog's contract says.
#include <algorithm>
#include <string>
#include <vector>

#include "backends/cpu/shape_copy.h"
#include "backends/cpu/shape_kernels.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"

namespace crucible::cpu {

namespace {

const Tensor& self_of(const Args& a) { return a.tensor("self"); }

Tensor same_view(const Tensor& t) { return t.as_strided(t.shape(), t.strides(), t.offset()); }

// squeeze.dims: only the listed dims of size 1 go; a repeated dim raises.
Tensor squeeze_listed(const Tensor& t, const std::vector<int64_t>& dims) {
  std::vector<bool> drop(static_cast<size_t>(std::max<int64_t>(t.dim(), 1)), false);
  for (int64_t d : dims) {
    const auto w = static_cast<size_t>(wrap_dim(d, t.dim()));
    if (drop[w])
      op_error("dim " + std::to_string(w) + " appears multiple times in the list of dims");
    drop[w] = true;
  }
  Shape shape, strides;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (drop[static_cast<size_t>(d)] && t.shape()[d] == 1) continue;
    shape.push_back(t.shape()[d]);
    strides.push_back(t.strides()[d]);
  }
  return Tensor::from_storage(t.storage(), t.offset(), std::move(shape), std::move(strides),
                              t.dtype());
}

Tensor squeeze_every(const Tensor& t) {
  Shape shape, strides;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.shape()[d] == 1) continue;
    shape.push_back(t.shape()[d]);
    strides.push_back(t.strides()[d]);
  }
  return Tensor::from_storage(t.storage(), t.offset(), std::move(shape), std::move(strides),
                              t.dtype());
}

// The diagonal of dims (dim1, dim2) as the last dim, stride stride1 + stride2; the storage
// offset moves only when the diagonal is not empty.
Tensor diagonal_of(const Tensor& t, int64_t offset, int64_t dim1, int64_t dim2) {
  const int64_t d1 = wrap_dim(dim1, t.dim());
  const int64_t d2 = wrap_dim(dim2, t.dim());
  if (d1 == d2)
    op_error("diagonal dimensions cannot be identical " + std::to_string(dim1) + ", " +
             std::to_string(dim2));
  const Shape& sz = t.shape();
  const Shape& st = t.strides();
  int64_t len = offset >= 0 ? std::min(sz[d1], sz[d2] - offset) : std::min(sz[d1] + offset, sz[d2]);
  len = std::max<int64_t>(len, 0);
  int64_t storage_offset = t.offset();
  if (len > 0) storage_offset += offset >= 0 ? offset * st[d2] : -offset * st[d1];
  Shape shape, strides;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (d == d1 || d == d2) continue;
    shape.push_back(sz[d]);
    strides.push_back(st[d]);
  }
  shape.push_back(len);
  strides.push_back(st[d1] + st[d2]);
  return Tensor::from_storage(t.storage(), storage_offset, std::move(shape), std::move(strides),
                              t.dtype());
}

// ---- the views, one function of the bound arguments each ----------------------------------

Tensor v_alias(const Args& a) { return same_view(self_of(a)); }
Tensor v_view(const Args& a) { return self_of(a).view(a.ints("size")); }
Tensor v_as_strided(const Args& a) {
  const Tensor& t = self_of(a);
  const Value& off = a.value("storage_offset");
  return t.as_strided(a.ints("size"), a.ints("stride"), off.is_none() ? t.offset() : off.to_int());
}
Tensor v_expand(const Args& a) { return self_of(a).expand(a.ints("size")); }
Tensor v_squeeze(const Args& a) { return squeeze_every(self_of(a)); }
Tensor v_squeeze_dim(const Args& a) { return squeeze_listed(self_of(a), {a.integer("dim")}); }
Tensor v_squeeze_dims(const Args& a) { return squeeze_listed(self_of(a), a.ints("dim")); }
Tensor v_unsqueeze(const Args& a) { return self_of(a).unsqueeze(a.integer("dim")); }
Tensor v_diagonal(const Args& a) {
  return diagonal_of(self_of(a), a.integer("offset"), a.integer("dim1"), a.integer("dim2"));
}
Tensor v_select(const Args& a) { return self_of(a).select(a.integer("dim"), a.integer("index")); }
Tensor v_slice(const Args& a) {
  const int64_t start = a.given("start") ? a.integer("start") : 0;
  const int64_t end = a.given("end") ? a.integer("end") : INT64_MAX;
  return self_of(a).slice(a.integer("dim"), start, end, a.integer("step"));
}
Tensor v_transpose(const Args& a) {
  return self_of(a).transpose(a.integer("dim0"), a.integer("dim1"));
}
Tensor v_t(const Args& a) {
  const Tensor& t = self_of(a);
  if (t.dim() > 2)
    op_error("t() expects a tensor with <= 2 dimensions, but self is " + std::to_string(t.dim()) +
             "D");
  return t.dim() < 2 ? same_view(t) : t.transpose(0, 1);
}
Tensor v_permute(const Args& a) { return self_of(a).permute(a.ints("dims")); }

// ---- the list views ---------------------------------------------------------------------------

std::vector<Tensor> l_split(const Args& a) {
  const Tensor& t = self_of(a);
  const int64_t split_size = a.integer("split_size");
  CRUCIBLE_CHECK(t.dim() != 0, "split expects at least a 1-dimensional tensor");
  if (split_size < 0)
    op_error("split expects split_size be non-negative, but got split_size=" +
             std::to_string(split_size));
  const int64_t w = wrap_dim(a.integer("dim"), t.dim());
  const int64_t n = t.shape()[w];
  if (split_size == 0 && n != 0)
    op_error("split_size can only be 0 if dimension size is 0, but got dimension size of " +
             std::to_string(n));
  const int64_t chunks =
      split_size == 0 ? 1 : std::max<int64_t>((n + split_size - 1) / split_size, 1);
  std::vector<Tensor> out;
  out.reserve(static_cast<size_t>(chunks));
  for (int64_t i = 0; i < chunks; ++i) {
    const int64_t lo = i * split_size;
    out.push_back(t.slice(w, lo, std::min(n, lo + split_size)));
  }
  return out;
}

std::vector<Tensor> l_split_with_sizes(const Args& a) {
  const Tensor& t = self_of(a);
  const std::vector<int64_t> sizes = a.ints("split_sizes");
  const int64_t dim = a.integer("dim");
  CRUCIBLE_CHECK(t.dim() != 0, "split expects at least a 1-dimensional tensor");
  const int64_t w = wrap_dim(dim, t.dim());
  const int64_t n = t.shape()[w];
  int64_t sum = 0;
  for (int64_t s : sizes) {
    if (s < 0)
      op_error(
          "split_with_sizes expects split_sizes have only non-negative entries, but got "
          "split_sizes=" +
          shape_str(sizes));
    sum += s;
  }
  if (sum != n)
    op_error("split_with_sizes expects split_sizes to sum exactly to " + std::to_string(n) +
             " (input tensor's size at dimension " + std::to_string(dim) +
             "), but got split_sizes=" + shape_str(sizes));
  std::vector<Tensor> out;
  out.reserve(sizes.size());
  int64_t lo = 0;
  for (int64_t s : sizes) {
    out.push_back(t.slice(w, lo, lo + s));
    lo += s;
  }
  return out;
}

std::vector<Tensor> l_unbind(const Args& a) {
  const Tensor& t = self_of(a);
  CRUCIBLE_CHECK(t.dim() != 0, "Dimension specified as 0 but tensor has no dimensions");
  const int64_t w = wrap_dim(a.integer("dim"), t.dim());
  std::vector<Tensor> out;
  out.reserve(static_cast<size_t>(t.shape()[w]));
  for (int64_t i = 0; i < t.shape()[w]; ++i) out.push_back(t.select(w, i));
  return out;
}

// ---- kernels ------------------------------------------------------------------------------------

using ViewFn = Tensor (*)(const Args&);
using ListFn = std::vector<Tensor> (*)(const Args&);

template <ViewFn F>
Values as_view(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  return {Value(F(a))};
}

template <ViewFn F>
Values as_copy(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  return {Value(contiguous_copy(F(a)))};
}

template <ListFn F>
Values as_list(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  return {Value::tensor_list(F(a))};
}

template <ListFn F>
Values as_list_copy(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  std::vector<Tensor> ts = F(a);
  for (Tensor& t : ts) t = contiguous_copy(t);
  return {Value::tensor_list(std::move(ts))};
}

}  // namespace

void register_view_kernels(KernelTable& t) {
  const std::vector<DType> all = shape_dtypes();
  auto view = [&](const char* name, KernelFn fn) { t.add(name, {fn, &shape_supports, all}); };
  view("aten.alias.default", &as_view<v_alias>);
  view("aten.view.default", &as_view<v_view>);
  view("aten.as_strided.default", &as_view<v_as_strided>);
  view("aten.expand.default", &as_view<v_expand>);
  view("aten.squeeze.default", &as_view<v_squeeze>);
  view("aten.squeeze.dim", &as_view<v_squeeze_dim>);
  view("aten.squeeze.dims", &as_view<v_squeeze_dims>);
  view("aten.unsqueeze.default", &as_view<v_unsqueeze>);
  view("aten.unsqueeze_.default", &as_view<v_unsqueeze>);
  view("aten.diagonal.default", &as_view<v_diagonal>);
  view("aten.select.int", &as_view<v_select>);
  view("aten.slice.Tensor", &as_view<v_slice>);
  view("aten.transpose.int", &as_view<v_transpose>);
  view("aten.t.default", &as_view<v_t>);
  view("aten.permute.default", &as_view<v_permute>);
  view("aten.split.Tensor", &as_list<l_split>);
  view("aten.split_with_sizes.default", &as_list<l_split_with_sizes>);
  view("aten.unbind.int", &as_list<l_unbind>);

  // ATen's _unsafe_view returns the view itself (the schema has no alias annotation; the
  // catalog accepts an alias there, see compare.output_may_alias).
  view("aten._unsafe_view.default", &as_view<v_view>);

  // The schema gives these a new tensor: the view written out contiguously.
  view("aten.view_copy.default", &as_copy<v_view>);
  view("aten.alias_copy.default", &as_copy<v_alias>);
  view("aten.as_strided_copy.default", &as_copy<v_as_strided>);
  view("aten.expand_copy.default", &as_copy<v_expand>);
  view("aten.squeeze_copy.default", &as_copy<v_squeeze>);
  view("aten.squeeze_copy.dim", &as_copy<v_squeeze_dim>);
  view("aten.squeeze_copy.dims", &as_copy<v_squeeze_dims>);
  view("aten.unsqueeze_copy.default", &as_copy<v_unsqueeze>);
  view("aten.diagonal_copy.default", &as_copy<v_diagonal>);
  view("aten.transpose_copy.int", &as_copy<v_transpose>);
  view("aten.t_copy.default", &as_copy<v_t>);
  view("aten.permute_copy.default", &as_copy<v_permute>);
  view("aten.unbind_copy.int", &as_list_copy<l_unbind>);
  view("aten.split_with_sizes_copy.default", &as_list_copy<l_split_with_sizes>);
}

}  // namespace crucible::cpu
