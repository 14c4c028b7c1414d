// The elementwise engine: runs a PwOp over out's shape with inputs broadcast to it, any strides,
// any (real) dtypes. Dims are coalesced, the innermost run is processed in blocks of the
// compute type (f32 for f32/f16/bf16, f64, u8 for bool and u8, i8 for i8, int64 for the other
// integral dtypes); contiguous inputs
// of the compute type are read in place, others are converted block by block in L1 (no
// full-size temporaries). Blocks are spread over the thread pool.
#pragma once

#include <span>

#include "backends/cpu/pointwise_kernels.h"
#include "crucible/core/tensor.h"

namespace crucible::cpu {

enum class Compute : uint8_t { F32, F64, I64, U8, I8 };
// The compute type for a computation dtype (f16/bf16/f32 -> F32, f64 -> F64, bool and u8 -> U8,
// i8 -> I8, other integral dtypes -> I64).
Compute compute_for(DType t);
// Whether the compute type is integral (U8, I8, I64).
inline bool is_integral_compute(Compute c) {
  return c == Compute::I64 || c == Compute::U8 || c == Compute::I8;
}
// Whether `op` has a loop for the compute type.
bool pw_has_loop(PwOp op, Compute compute);

// The strides of a fresh output of `shape` for these inputs, as ATen's TensorIterator lays it
// out: dense, its dims ordered in memory as the inputs' are (a transposed or channels-last
// input gives an output of the same layout, so the engine walks every operand in memory
// order); row-major when the inputs are.
Shape pw_output_strides(const Shape& shape, std::span<const Tensor> inputs);

// out[i] = op(inputs[0][i], ...). `inputs` must broadcast to out's shape. An output that
// overlaps an input in any way other than being the same view is the caller's concern.
void pw_run(PwOp op, std::span<const Tensor> inputs, const Tensor& out, Compute compute,
            const PwParams& params);

}  // namespace crucible::cpu
