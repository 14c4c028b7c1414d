// ATen's rules that the catalog (src/ops) and backends' kernels share: the argument checks and
// output shapes of cat, stack and constant_pad_nd (TensorShape.cpp, PadNd.cpp, PyTorch 2.x).
// Written once here; the catalog's meta functions and references and the cpu kernels call the
// same code.
#pragma once

#include <cstdint>
#include <vector>

#include "crucible/core/tensor.h"

namespace crucible::join {

// cat's checks and output: its shape and dtype, and the dim the tensors are joined along (-1:
// every tensor is a skipped legacy [0]).
struct CatSpec {
  Shape shape;
  DType dtype;
  int64_t dim = -1;
};

// A legacy empty tensor (1-d of size 0): cat skips it, but it still takes part in the result
// type.
inline bool cat_skipped(const Tensor& t) { return t.dim() == 1 && t.size(0) == 0; }

// cat's checks: a non-empty list; 0-d tensors raise; the dim is wrapped against the first
// tensor that is not skipped (none: the result is [0] and the dim is not checked); the others
// need as many dims and equal sizes outside the dim. The dtype is result_type over every tensor
// (skipped ones included).
CatSpec cat_spec(const std::vector<Tensor>& ts, int64_t dim);

// stack's checks: a non-empty list of equal shapes, `dim` wrapped against dim() + 1. Returns
// the tensors unsqueezed at the wrapped dim (views; stack is cat of them) and sets `wrapped`.
std::vector<Tensor> stack_inputs(const std::vector<Tensor>& ts, int64_t dim, int64_t& wrapped);

// constant_pad_nd's checks: `pad` holds (left, right) pairs from the last dim backwards, an
// even number of at most 2 * self.dim(); a negative output size raises. Returns the output's
// shape and sets `before` to the padding before each dim of self (negative: cropped).
Shape constant_pad_shape(const Tensor& self, const std::vector<int64_t>& pad,
                         std::vector<int64_t>& before);

}  // namespace crucible::join
