// ATen's rules that the catalog (src/ops) and backends' kernels share: the dtypes the
// normalisation ops accept and compute their parameters in, group norm's input layout, and
// batch norm's statistics layout, checks and running-stat update (Normalization.cpp). Written
// once here; the catalog's meta functions and references and the cpu kernels call the same code.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/core/tensor.h"
#include "crucible/ops/args.h"

namespace crucible::nnops {

inline bool is_half_or_bf16(DType t) { return t == DType::Float16 || t == DType::BFloat16; }

inline bool is_std_float(DType t) {
  return t == DType::Float16 || t == DType::BFloat16 || t == DType::Float32 || t == DType::Float64;
}

// AT_DISPATCH_FLOATING_TYPES_AND2(Half, BFloat16, ...): raises for every other dtype.
inline void check_floating_dispatch(DType t, const std::string& kernel) {
  if (!is_std_float(t)) not_implemented_for(kernel, t);
}

// ATen's is_mixed_type + check_mixed_data_type (cpu/mixed_data_type.h) over the defined
// parameters: a reduced-precision input whose first defined parameter has another dtype is
// "mixed" and needs every defined parameter in f32 (returns f32); otherwise every parameter must
// have the input's dtype (the kernel reads it as the input's element type; returns that dtype).
inline DType param_dtype(const Tensor& x, const std::vector<std::optional<Tensor>>& params) {
  std::optional<DType> first;
  for (const auto& p : params)
    if (p && !first) first = p->dtype();
  if (first && *first != x.dtype()) {
    if (!is_half_or_bf16(x.dtype()))
      op_error("mixed dtype (CPU): all inputs must share same datatype.");
    for (const auto& p : params)
      if (p && p->dtype() != DType::Float32)
        op_error("mixed dtype (CPU): expect parameter to have scalar type of Float");
    return DType::Float32;
  }
  for (const auto& p : params) {
    if (p && p->dtype() != x.dtype())
      op_error("expected scalar type " + scalar_type_name(x.dtype()) + " but found " +
               scalar_type_name(p->dtype()));
  }
  return x.dtype();
}

// native_batch_norm_backward's parameter dtype (that of grad_weight and grad_bias). Besides
// param_dtype's CPU rules, the combination every real-model trace records on CUDA is accepted
// as CUDA's kernel accepts it: a reduced-precision input (f16, bf16) whose weight and running
// stats (where defined) have the input's dtype and whose saved statistics are f32 (CUDA's
// forward saves them in the accumulation type). ATen's CPU kernel raises "mixed dtype (CPU)"
// for it (docs/aten-differences.md); the parameter grads then have the input's dtype, as on
// CUDA.
inline DType backward_param_dtype(const Tensor& x, const std::optional<Tensor>& w,
                                  const std::optional<Tensor>& rm, const std::optional<Tensor>& rv,
                                  const std::optional<Tensor>& sm,
                                  const std::optional<Tensor>& si) {
  if (is_half_or_bf16(x.dtype()) && sm && si && sm->dtype() == DType::Float32 &&
      si->dtype() == DType::Float32) {
    bool params_as_input = true, any = false;
    for (const auto& p : {w, rm, rv}) {
      if (!p) continue;
      any = true;
      params_as_input = params_as_input && p->dtype() == x.dtype();
    }
    if (any && params_as_input) return x.dtype();
  }
  return param_dtype(x, {w, rm, rv, sm, si});
}

// Contiguous, or channels-last (3-d spatial: channels_last_3d) contiguous: group norm's
// X.is_contiguous(memory_format) check.
bool memory_format_contiguous(const Tensor& t);

// The statistics layout of a batch norm input [N, C, *]: statistics per channel over the
// n = N * prod(*) elements of the channel.
struct BatchLayout {
  int64_t batch = 0, c = 0;  // N, C
  int64_t inner = 1, n = 0;  // elements per (batch, channel) and per channel
  // The channel of element i (in [N, C, *] order).
  int64_t channel(int64_t i) const { return (i / inner) % c; }
};

// The layout of `x`; an input of fewer than 2 dims raises ATen's error for its dim 1.
BatchLayout batch_layout(const Tensor& x);

// Raises unless the parameter `name` (when defined) has c elements (at::batch_norm's check).
void check_channel_param(const char* name, const std::optional<Tensor>& p, int64_t c);

// The batch norm forward's checks (native_batch_norm, _native_batch_norm_legit and its
// overloads): the dtype dispatch, at least 2 dims, the parameters' dtypes and sizes, running
// stats in evaluation mode, a non-empty input in training mode. Returns the dtype of save_mean
// and save_invstd (param_dtype).
DType check_batch_norm(const Tensor& x, const std::optional<Tensor>& w,
                       const std::optional<Tensor>& b, const std::optional<Tensor>& rm,
                       const std::optional<Tensor>& rv, bool training);

// native_batch_norm_backward's checks (output_mask aside): the dtype dispatch, at least 2 dims,
// grad_out with the input's shape and dtype, the weight's size, save_mean and save_invstd
// (train) or the running stats (eval) defined and of C elements. Returns the dtype of
// grad_weight and grad_bias (backward_param_dtype).
DType check_batch_norm_backward(const Args& a);

// What native_batch_norm_backward normalises with, per channel: save_mean and save_invstd
// (train) or running_mean and 1 / sqrt(running_var + eps) (eval), and the weight (1 when
// undefined).
struct BatchBackwardStats {
  std::vector<double> mean, invstd, weight;
};

BatchBackwardStats batch_norm_backward_stats(const Args& a, int64_t c);

// A training call's outputs save_mean and save_invstd (`mean`, `invstd`) and the in-place
// update of the running stats where defined: running_mean = momentum * mean + (1 - momentum) *
// running_mean, running_var = momentum * var_sum / (n - 1) + (1 - momentum) * running_var (the
// unbiased variance; n == 1 divides by zero, as ATen does).
void store_batch_stats(const Tensor& save_mean, const Tensor& save_invstd,
                       const std::optional<Tensor>& rm, const std::optional<Tensor>& rv,
                       const std::vector<double>& mean, const std::vector<double>& invstd,
                       const std::vector<double>& var_sum, int64_t n, double momentum);

// native_layer_norm_backward in f64 over m contiguous rows of n elements: the reference's formulas
// in its order of summation (the cpu backend's path for calls with extreme values runs the same
// code). w (gamma), dx, dw and db may be nullptr.
void layer_norm_backward_f64(const double* dy, const double* x, const double* mean,
                             const double* rstd, const double* w, int64_t m, int64_t n, double* dx,
                             double* dw, double* db);

}  // namespace crucible::nnops
