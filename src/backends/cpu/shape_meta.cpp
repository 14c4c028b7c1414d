// The cpu backend's shape queries: sym_size.int, sym_stride.int, sym_numel, sym_storage_offset.
// The dim is wrapped as TensorImpl::sym_size does (maybe_wrap_dim without scalar wrapping): a
// 0-d tensor has no dim 0.
#include <string>
#include <vector>

#include "backends/cpu/shape_kernels.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"

namespace crucible::cpu {

namespace {

int64_t wrap_strict(int64_t dim, int64_t ndim) {
  CRUCIBLE_CHECK(ndim > 0,
                 "Dimension specified as " + std::to_string(dim) + " but tensor has no dimensions");
  CRUCIBLE_CHECK(dim >= -ndim && dim < ndim,
                 "Dimension out of range (expected to be in range of [" + std::to_string(-ndim) +
                     ", " + std::to_string(ndim - 1) + "], but got " + std::to_string(dim) + ")");
  return dim < 0 ? dim + ndim : dim;
}

Values sym_size(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  const Tensor& t = a.tensor("self");
  return {Value(t.shape()[wrap_strict(a.integer("dim"), t.dim())])};
}

Values sym_stride(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  const Tensor& t = a.tensor("self");
  return {Value(t.strides()[wrap_strict(a.integer("dim"), t.dim())])};
}

Values sym_numel(const OpDef& op, const Values& args) {
  return {Value(Args(args, op.schema).tensor("self").numel())};
}

Values sym_storage_offset(const OpDef& op, const Values& args) {
  return {Value(Args(args, op.schema).tensor("self").offset())};
}

}  // namespace

void register_shape_meta_kernels(KernelTable& t) {
  const std::vector<DType> all = shape_dtypes();
  t.add("aten.sym_size.int", {&sym_size, &shape_supports, all});
  t.add("aten.sym_stride.int", {&sym_stride, &shape_supports, all});
  t.add("aten.sym_numel.default", {&sym_numel, &shape_supports, all});
  t.add("aten.sym_storage_offset.default", {&sym_storage_offset, &shape_supports, all});
}

}  // namespace crucible::cpu
