// Helpers shared by the batch_norm, group_norm, upsample, grid_sampler and padding families
// (private to those files): dtype names as ATen prints them, byte counts, dtype checks.
#pragma once

#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "crucible/cases/literal.h"
#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/core/value.h"

namespace crucible::nnops {

using cases::Literal;

// c10's ScalarType names ("Float", "Half", "Long"), as dispatch errors print them.

inline bool is_half_or_bf16(DType t) { return t == DType::Float16 || t == DType::BFloat16; }

inline bool is_std_float(DType t) {
  return t == DType::Float16 || t == DType::BFloat16 || t == DType::Float32 || t == DType::Float64;
}

// AT_DISPATCH_FLOATING_TYPES_AND2(Half, BFloat16, ...): raises for every other dtype.
inline void check_floating_dispatch(DType t, const std::string& kernel) {
  if (!is_std_float(t)) not_implemented_for(kernel, t);
}

inline double bytes_of(const Value& v) {
  if (!v.is_tensor() || !v.tensor().defined()) return 0;
  return static_cast<double>(v.tensor().numel()) * static_cast<double>(v.tensor().itemsize());
}

inline double bytes_of_all(const Values& vs) {
  double b = 0;
  for (const Value& v : vs) b += bytes_of(v);
  return b;
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

inline Literal bool_list(const std::vector<bool>& v) {
  std::vector<Literal> items;
  for (bool b : v) items.push_back(Literal::boolean(b));
  return Literal::list(std::move(items));
}

inline std::string int_list_str(const std::vector<int64_t>& v) { return shape_str(v); }

}  // namespace crucible::nnops
