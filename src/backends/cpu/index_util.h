// Helpers shared by the `cpu` backend's indexing kernels (index.cpp, index_tensor.cpp,
// index_put.cpp): index tensors read as int64, copies and dtype conversions through the
// elementwise engine, the work dtype of accumulating ops and the element copies by width.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "backends/cpu/kernel_table.h"
#include "backends/cpu/shape_copy.h"  // copy_into
#include "crucible/core/tensor.h"
#include "crucible/ops/rules/indexing.h"

namespace crucible::cpu {

void register_index_tensor_kernels(KernelTable& t);  // index_tensor.cpp: index.Tensor
void register_index_put_kernels(KernelTable& t);     // index_put.cpp: index_put, index_put_

// The values of an i64/i32 index tensor in logical order: a pointer into the tensor itself
// when it is contiguous i64, else a converted copy.
class IndexValues {
 public:
  explicit IndexValues(const Tensor& t);
  const int64_t* data() const { return data_; }
  int64_t operator[](int64_t i) const { return data_[i]; }

 private:
  Tensor owned_;
  const int64_t* data_ = nullptr;
};

// `t` as a contiguous tensor of `dt`: t itself when it already is one, else a copy.
Tensor contiguous_as(const Tensor& t, DType dt);

// A fresh contiguous copy of `t` in `dt` (a parallel memcpy when t is contiguous of dt).
Tensor fresh_copy(const Tensor& t, DType dt);
// out (contiguous, t's shape, any dtype) = t, the same way.
void copy_to_contiguous(const Tensor& t, const Tensor& out);

// The dtype an accumulating kernel works in: i64 for integral and bool dtypes (wrapping adds,
// converted back as ATen converts), f64 for f64, f32 for f16/bf16/f32 (computed again in f64
// when a value is extreme, see nn_util.h).
DType accumulate_work(DType t);

// Whether any of n f32 values is NaN, infinite or above 2^50 in magnitude (vectorised scan).
bool any_extreme_f32(const float* p, int64_t n);

// Element copies by width: dst[i] = src[off[i]] for i in [0, n), elements of `width` bytes.
void gather_elements(char* dst, const char* src, const int64_t* off, int64_t n, size_t width);

// The geometry of an advanced-indexing call (index.Tensor, index_put; ops/indexing_advanced.cpp):
// the result is [before dims..., B..., after dims...] where B is the broadcast shape of the
// index tensors; `before` holds self's dims ahead of the indexed block when the indexed dims
// are adjacent (empty otherwise, B then comes first), `after` every other non-indexed dim.
// Boolean masks are replaced by the coordinates of their true elements.
struct IndexPlan {
  Shape result;
  Shape bshape;
  std::vector<int64_t> before, after, indexed;  // dims of self
  std::vector<Tensor> index;                    // one per indexed dim, i64 or i32
};

// Whether `indices` holds a 0-d boolean mask (not handled: the reference does not model it).
bool has_scalar_mask(const std::vector<Tensor>& indices);
IndexPlan make_index_plan(const Tensor& self, const std::vector<Tensor>& indices);

// The offsets (elements, at `strides` of a tensor of self's shape) of every element of B:
// sum over the indexed dims of the wrapped index value times the stride. Raises for an index
// outside [-size, size).
std::vector<int64_t> index_offsets(const IndexPlan& plan, const Shape& self_shape,
                                   const Shape& strides);

// The offsets of every position of `dims` (of `shape`, at `strides`), in logical order.
std::vector<int64_t> dims_offsets(const std::vector<int64_t>& dims, const Shape& shape,
                                  const Shape& strides);

// Sizes and strides of a tensor read as at least 1-d (a 0-d tensor as [1]).
using indexing::ndim_or_1;
using indexing::size_or_1;
inline int64_t stride_or_1(const Tensor& t, int64_t d) { return t.dim() == 0 ? 1 : t.stride(d); }

// The positions p of an index tensor of gather/scatter (its shape, a 0-d index as [1]), row by
// row along the last dim. `a` is addressed at p with p[dim] replaced by the index value, `b` at p
// itself: offset_a = sum_{d != dim} p[d] * as[d] + idx * as[dim], in elements from each view's
// start.
struct IndexWalk {
  int64_t nd = 1, last = 1, rows = 0, dim = 0;
  Shape shape;                      // the index's shape (at least 1-d)
  Shape as, bs;                     // strides of a and b (elements; b's are 0 when it is absent)
  int64_t row_a(int64_t r) const {  // offset of row r in a, without the dim term
    int64_t off = 0;
    for (int64_t d = nd - 2; d >= 0; --d) {
      const int64_t p = r % shape[d];
      r /= shape[d];
      if (d != dim) off += p * as[d];
    }
    return off;
  }
  int64_t row_b(int64_t r) const {
    int64_t off = 0;
    for (int64_t d = nd - 2; d >= 0; --d) {
      off += (r % shape[d]) * bs[d];
      r /= shape[d];
    }
    return off;
  }
  // a's step along a row (0 when the row runs along `dim`, where the index value moves).
  int64_t step_a() const { return dim == nd - 1 ? 0 : as[nd - 1]; }
};

// The walk of `index` over `a` and `b` (`b` undefined: a value, no strides).
IndexWalk make_index_walk(const Tensor& index, int64_t dim, const Tensor& a, const Tensor& b);

// "index 5 is out of bounds for dimension 0 with size 3"
[[noreturn]] void index_out_of_bounds(int64_t v, int64_t dim, int64_t size);

}  // namespace crucible::cpu
