// The cpu backend's cat and stack. The output (contiguous, ATen's result type over every input)
// is a sequence of rows, one per index of the dims before `dim`; each row is the inputs' slabs
// side by side. Rows are produced in parallel chunks (shape_copy.h): a slab whose elements are
// contiguous in its input is one memcpy, other layouts are gathered run by run, and inputs of
// another dtype are converted once up front by the elementwise engine.
//
// ATen's rules (TensorShape.cpp, PyTorch 2.x; crucible/ops/rules/join.h), which the meta function
// checked before the kernel runs: a non-empty list; 0-d inputs raise; 1-d inputs of size 0 are
// skipped (legacy) but still take part in the result type; the dim is wrapped against the first
// input that is not skipped (none: the result is [0]); the others need as many dims and equal sizes
// outside `dim`. stack: equal shapes, dim wrapped against dim() + 1, then cat of the inputs
// unsqueezed there.
#include <vector>

#include "backends/cpu/shape_copy.h"
#include "backends/cpu/shape_kernels.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"
#include "crucible/ops/rules/join.h"

namespace crucible::cpu {

namespace {

// The inputs (checked) concatenated along `dim` into `out`, of cat's shape and result type.
void cat_tensors(const std::vector<Tensor>& ts, int64_t dim, const Tensor& out) {
  if (out.numel() == 0) return;
  const join::CatSpec spec = join::cat_spec(ts, dim);  // the wrapped dim and the result type
  const int64_t d = spec.dim;
  const DType out_t = spec.dtype;
  int64_t outer = 1;
  for (int64_t k = 0; k < d; ++k) outer *= spec.shape[k];
  std::vector<Tensor> keep;  // converted inputs live until the rows are written
  std::vector<Piece> pieces;
  for (const Tensor& t : ts) {
    if (join::cat_skipped(t) || t.numel() == 0) continue;
    const Tensor& src = t.dtype() == out_t ? t : keep.emplace_back(contiguous_copy(t, out_t));
    pieces.push_back(copy_piece(src, outer));
  }
  write_rows(out, outer, pieces);
}

void cat(const OpDef&, const Args& a, const Values& out) {
  cat_tensors(a.tensors("tensors"), a.integer("dim"), out[0].tensor());
}

void stack(const OpDef&, const Args& a, const Values& out) {
  int64_t d = 0;
  const std::vector<Tensor> us = join::stack_inputs(a.tensors("tensors"), a.integer("dim"), d);
  cat_tensors(us, d, out[0].tensor());
}

}  // namespace

void register_cat_kernels(KernelTable& t) {
  const std::vector<DType> all = shape_dtypes();
  t.add("aten.cat.default", {.supports = &shape_supports, .dtypes = all, .run_into = &cat});
  t.add("aten.stack.default", {.supports = &shape_supports, .dtypes = all, .run_into = &stack});
}

}  // namespace crucible::cpu
