// The cpu backend's cat and stack. The output (contiguous, ATen's result type over every input)
// is a sequence of rows, one per index of the dims before `dim`; each row is the inputs' slabs
// side by side. Rows are produced in parallel chunks (shape_copy.h): a slab whose elements are
// contiguous in its input is one memcpy, other layouts are gathered run by run, and inputs of
// another dtype are converted once up front by the elementwise engine.
//
// ATen's rules (TensorShape.cpp, PyTorch 2.x): a non-empty list; 0-d inputs raise; 1-d inputs
// of size 0 are skipped (legacy) but still take part in the result type; the dim is wrapped
// against the first input that is not skipped (none: the result is [0]); the others need as
// many dims and equal sizes outside `dim`. stack: equal shapes, dim wrapped against dim() + 1,
// then cat of the inputs unsqueezed there.
#include <string>
#include <vector>

#include "backends/cpu/shape_copy.h"
#include "backends/cpu/shape_kernels.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"
#include "ops/util.h"

namespace crucible::cpu {

namespace {

bool skipped(const Tensor& t) { return t.dim() == 1 && t.size(0) == 0; }

Tensor cat_tensors(const std::vector<Tensor>& ts, int64_t dim) {
  CRUCIBLE_CHECK(!ts.empty(), "torch.cat(): expected a non-empty list of Tensors");
  std::vector<Value> vs(ts.begin(), ts.end());
  const DType out_t = opsutil::result_type(vs);
  for (size_t i = 0; i < ts.size(); ++i)
    if (ts[i].dim() == 0)
      op_error("zero-dimensional tensor (at position " + std::to_string(i) +
               ") cannot be concatenated");
  const Tensor* first = nullptr;
  for (const Tensor& t : ts)
    if (!skipped(t)) {
      first = &t;
      break;
    }
  if (!first) return Tensor::uninitialized({0}, out_t);
  const int64_t d = wrap_dim(dim, first->dim());
  Shape shape = first->shape();
  shape[d] = 0;
  for (size_t i = 0; i < ts.size(); ++i) {
    const Tensor& t = ts[i];
    if (skipped(t)) continue;
    if (t.dim() != first->dim())
      op_error("Tensors must have same number of dimensions: got " + std::to_string(first->dim()) +
               " and " + std::to_string(t.dim()));
    for (int64_t k = 0; k < t.dim(); ++k) {
      if (k == d || t.shape()[k] == first->shape()[k]) continue;
      op_error("Sizes of tensors must match except in dimension " + std::to_string(d) +
               ". Expected size " + std::to_string(first->shape()[k]) + " but got size " +
               std::to_string(t.shape()[k]) + " for tensor number " + std::to_string(i) +
               " in the list.");
    }
    shape[d] += t.shape()[d];
  }
  Tensor out = Tensor::uninitialized(shape, out_t);
  int64_t outer = 1;
  for (int64_t k = 0; k < d; ++k) outer *= shape[k];
  if (out.numel() == 0) return out;
  std::vector<Tensor> keep;  // converted inputs live until the rows are written
  std::vector<Piece> pieces;
  for (const Tensor& t : ts) {
    if (skipped(t) || t.numel() == 0) continue;
    const Tensor& src = t.dtype() == out_t ? t : keep.emplace_back(contiguous_copy(t, out_t));
    pieces.push_back(copy_piece(src, outer));
  }
  write_rows(out, outer, pieces);
  return out;
}

Values cat(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  return {Value(cat_tensors(a.tensors("tensors"), a.integer("dim")))};
}

Values stack(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  const auto& ts = a.tensors("tensors");
  CRUCIBLE_CHECK(!ts.empty(), "stack expects a non-empty TensorList");
  const int64_t d = wrap_dim(a.integer("dim"), ts[0].dim() + 1);
  std::vector<Tensor> us;
  us.reserve(ts.size());
  for (size_t i = 0; i < ts.size(); ++i) {
    if (ts[i].shape() != ts[0].shape())
      op_error("stack expects each tensor to be equal size, but got " + shape_str(ts[0].shape()) +
               " at entry 0 and " + shape_str(ts[i].shape()) + " at entry " + std::to_string(i));
    us.push_back(ts[i].unsqueeze(d));
  }
  return {Value(cat_tensors(us, d))};
}

}  // namespace

void register_cat_kernels(KernelTable& t) {
  const std::vector<DType> all = shape_dtypes();
  t.add("aten.cat.default", {&cat, &shape_supports, all});
  t.add("aten.stack.default", {&stack, &shape_supports, all});
}

}  // namespace crucible::cpu
