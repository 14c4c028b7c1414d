// The cpu backend's views (alias, view, as_strided, expand, squeeze*, unsqueeze(_), diagonal,
// select, slice, split*, unbind, transpose, t, permute) and their _copy forms, _unsafe_view
// included. A view is metadata over the input's storage with ATen's sizes, strides and storage
// offset (TensorShape.cpp; the views with argument checks are the shared ones of
// crucible/ops/rules/shape.h); a copy is that view written out contiguously by the byte movers
// (shape_copy.h). unsqueeze_ cannot rebind the caller's tensor (argument values are immutable
// here), so it returns the unsqueezed view of self, as the catalog's contract says.
#include <utility>
#include <vector>

#include "backends/cpu/shape_copy.h"
#include "backends/cpu/shape_kernels.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"
#include "crucible/ops/rules/shape.h"

namespace crucible::cpu {

namespace {

const Tensor& self_of(const Args& a) { return a.tensor("self"); }

Tensor same_view(const Tensor& t) { return t.as_strided(t.shape(), t.strides(), t.offset()); }

// ---- the views, one function of the bound arguments each ----------------------------------

Tensor v_alias(const Args& a) { return same_view(self_of(a)); }
Tensor v_view(const Args& a) { return self_of(a).view(a.ints("size")); }
Tensor v_as_strided(const Args& a) {
  return shape_ops::as_strided(self_of(a), a.ints("size"), a.ints("stride"),
                               a.value("storage_offset"));
}
Tensor v_expand(const Args& a) { return self_of(a).expand(a.ints("size")); }
Tensor v_squeeze(const Args& a) { return shape_ops::squeeze_all(self_of(a)); }
Tensor v_squeeze_dim(const Args& a) {
  return shape_ops::squeeze_dims(self_of(a), {a.integer("dim")});
}
Tensor v_squeeze_dims(const Args& a) { return shape_ops::squeeze_dims(self_of(a), a.ints("dim")); }
Tensor v_unsqueeze(const Args& a) { return self_of(a).unsqueeze(a.integer("dim")); }
Tensor v_diagonal(const Args& a) {
  return shape_ops::diagonal(self_of(a), a.integer("offset"), a.integer("dim1"), a.integer("dim2"));
}
Tensor v_select(const Args& a) { return self_of(a).select(a.integer("dim"), a.integer("index")); }
Tensor v_slice(const Args& a) {
  return shape_ops::slice(self_of(a), a.integer("dim"), a.value("start"), a.value("end"),
                          a.integer("step"));
}
Tensor v_transpose(const Args& a) {
  return self_of(a).transpose(a.integer("dim0"), a.integer("dim1"));
}
Tensor v_t(const Args& a) { return shape_ops::t_2d(self_of(a)); }
Tensor v_permute(const Args& a) { return self_of(a).permute(a.ints("dims")); }

// ---- the list views ---------------------------------------------------------------------------

std::vector<Tensor> l_split(const Args& a) {
  return shape_ops::split(self_of(a), a.integer("split_size"), a.integer("dim"));
}

std::vector<Tensor> l_split_with_sizes(const Args& a) {
  return shape_ops::split_with_sizes(self_of(a), a.ints("split_sizes"), a.integer("dim"));
}

std::vector<Tensor> l_unbind(const Args& a) {
  return shape_ops::unbind(self_of(a), a.integer("dim"));
}

// ---- kernels ------------------------------------------------------------------------------------

using ViewFn = Tensor (*)(const Args&);
using ListFn = std::vector<Tensor> (*)(const Args&);

template <ViewFn F>
Values as_view(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  return {Value(F(a))};
}

// The _copy forms: destination-passing, the view written into the meta function's fresh
// contiguous output.
template <ViewFn F>
void as_copy(const OpDef&, const Args& a, const Values& out) {
  copy_into(F(a), out[0].tensor());
}

template <ListFn F>
Values as_list(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  return {Value::tensor_list(F(a))};
}

template <ListFn F>
void as_list_copy(const OpDef&, const Args& a, const Values& out) {
  const std::vector<Tensor> views = F(a);
  const std::vector<Tensor>& outs = out[0].tensors();
  for (size_t i = 0; i < views.size(); ++i) copy_into(views[i], outs[i]);
}

}  // namespace

void register_view_kernels(KernelTable& t) {
  const std::vector<DType> all = shape_dtypes();
  auto view = [&](const char* name, KernelFn fn) { t.add(name, {fn, &shape_supports, all}); };
  auto copy = [&](const char* name, KernelIntoFn fn) {
    t.add(name, {.supports = &shape_supports, .dtypes = all, .run_into = fn});
  };
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
  copy("aten.view_copy.default", &as_copy<v_view>);
  copy("aten.alias_copy.default", &as_copy<v_alias>);
  copy("aten.as_strided_copy.default", &as_copy<v_as_strided>);
  copy("aten.expand_copy.default", &as_copy<v_expand>);
  copy("aten.squeeze_copy.default", &as_copy<v_squeeze>);
  copy("aten.squeeze_copy.dim", &as_copy<v_squeeze_dim>);
  copy("aten.squeeze_copy.dims", &as_copy<v_squeeze_dims>);
  copy("aten.unsqueeze_copy.default", &as_copy<v_unsqueeze>);
  copy("aten.diagonal_copy.default", &as_copy<v_diagonal>);
  copy("aten.transpose_copy.int", &as_copy<v_transpose>);
  copy("aten.t_copy.default", &as_copy<v_t>);
  copy("aten.permute_copy.default", &as_copy<v_permute>);
  copy("aten.unbind_copy.int", &as_list_copy<l_unbind>);
  copy("aten.split_with_sizes_copy.default", &as_list_copy<l_split_with_sizes>);
}

}  // namespace crucible::cpu
