// The elementwise engine: runs a PwOp over out's shape with inputs broadcast to it, any strides,
// any (real) dtypes. Dims are coalesced, the innermost run is processed in blocks of the
// compute type (f32 for f32/f16/bf16, f64, or int64 for integral and bool); contiguous inputs
// of the compute type are read in place, others are converted block by block in L1 (no
// full-size temporaries). Blocks are spread over the thread pool.
#pragma once

#include <span>

#include "backends/cpu/pointwise_kernels.h"
#include "crucible/core/tensor.h"

namespace crucible::cpu {

enum class Compute : uint8_t { F32, F64, I64 };
// The compute type for a computation dtype (f16/bf16/f32 -> F32, f64 -> F64, others -> I64).
Compute compute_for(DType t);

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
