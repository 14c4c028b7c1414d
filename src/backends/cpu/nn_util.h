// Helpers shared by the `cpu` backend's matmul and nn kernels: f32 working copies of
// f16/bf16/f32 tensors, argument access, and the dtype lists the kernels register.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "crucible/core/error.h"
#include "crucible/core/value.h"
#include "crucible/ops/args.h"

namespace crucible::cpu {

inline bool is_float_family(DType t) {
  return t == DType::Float32 || t == DType::Float16 || t == DType::BFloat16;
}

// The dtypes computed in f32 (f16 and bf16 convert to f32 and round once at the end).
inline std::vector<DType> f32_family() { return {DType::Float16, DType::BFloat16, DType::Float32}; }

// A contiguous f32 tensor with the values of `t` (t itself when it already is one).
inline Tensor as_f32(const Tensor& t) {
  if (t.dtype() == DType::Float32) return t.contiguous();
  return t.to(DType::Float32);
}

// Whether any of n 32-bit patterns, sign cleared, exceeds `limit`; the same for 16-bit
// patterns (f16: exponent all ones; bf16: exponent above 2^50). Compiled for AVX-512, AVX2 and
// the baseline, picked at load time (nn.cpp).
bool any_above32(const char* p, int64_t n, int32_t limit);
bool any_above16(const char* p, int64_t n, int16_t limit);

// Whether a floating tensor holds a non-finite value or one of magnitude above 2^50 (scanned
// over the storage its view spans, so a value just outside a sliced view also counts). f32
// arithmetic on such values can overflow where the reference's f64 does not, and f64 sums of
// them depend on the order; the kernels compute such calls in f64, in the reference's order
// where that matters. Integer tensors are never extreme.
inline bool extreme(const Tensor& t) {
  if (!t.defined() || t.numel() == 0) return false;
  const auto [lo, hi] = t.storage_extent();
  const char* base = static_cast<const char*>(t.storage()->data());
  const int64_t n = hi - lo;
  switch (t.dtype()) {
    case DType::Float32:  // 2^50 is 0x58800000
      return any_above32(base + 4 * lo, n, 0x58800000);
    case DType::BFloat16:  // the top half of an f32
      return any_above16(base + 2 * lo, n, 0x5880);
    case DType::Float16:  // inf or NaN: 0x7c00 and above
      return any_above16(base + 2 * lo, n, 0x7bff);
    case DType::Float64: {
      const double* p = reinterpret_cast<const double*>(base) + lo;
      bool bad = false;
      for (int64_t i = 0; i < n; ++i) bad |= !(std::fabs(p[i]) <= 1125899906842624.0);
      return bad;
    }
    default:
      return false;
  }
}

// Whether any of the (optional) tensor arguments is extreme.
inline bool any_extreme(std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts)
    if (t && extreme(*t)) return true;
  return false;
}

// The optional tensor argument `name`, or an undefined tensor.
inline Tensor opt_tensor_arg(const Args& args, const char* name) {
  if (!args.given(name)) return Tensor();
  return args.tensor(name);
}

// Whether every floating tensor argument is f16, bf16 or f32; sets `why` otherwise.
inline bool all_f32_family(const Values& args, std::string* why) {
  for (const Value& v : args) {
    if (!v.is_tensor()) continue;
    const DType t = v.tensor().dtype();
    if (is_floating(t) && !is_float_family(t)) {
      if (why)
        *why = std::string("the cpu backend computes this op in f32, f16 and bf16 only, not ") +
               std::string(dtype_code(t));
      return false;
    }
  }
  return true;
}

}  // namespace crucible::cpu
