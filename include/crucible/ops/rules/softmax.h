// ATen's rules that the catalog (src/ops) and backends' kernels share: the checks and output of
// _softmax_backward_data and _log_softmax_backward_data (SoftMax.cpp). Written once here; the
// catalog's meta functions and references and the cpu kernels call the same code.
#pragma once

#include <cstdint>

#include "crucible/core/tensor.h"

namespace crucible::softmax_rules {

// What a softmax backward call makes: the wrapped dim and the result's dtype.
struct BackwardSpec {
  int64_t dim = 0;
  DType dtype = DType::Float32;
};

// The checks before any dtype check: grad and output of one shape; the dim wrapped. The result
// has grad's dtype, except that grad f32 with input_dtype f16 asks for f16 (the backward of
// CUDA's half_to_float softmax).
BackwardSpec backward_spec(const Tensor& grad, const Tensor& output, int64_t dim,
                           DType input_dtype);

// The dtype checks of a call with a non-empty output, in ATen's order: the kernel's dispatch
// error for a dtype it does not take (f16, bf16, f32, f64), then grad and output of one dtype.
void check_backward_dtypes(const Tensor& grad, const Tensor& output, int64_t dim, bool log);

}  // namespace crucible::softmax_rules
