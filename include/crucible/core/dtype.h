// Element types of crucible tensors, their names in the case grammar and ATen's type promotion.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace crucible {

// The order is ATen's ScalarType order where both have the type; it is not an ABI.
enum class DType : uint8_t {
  Bool,
  UInt8,
  Int8,
  Int16,
  Int32,
  Int64,
  Float16,
  BFloat16,
  Float32,
  Float64,
  Float8E4M3FN,  // storage only: converted to f32 to compute
  Float8E5M2,    // storage only
};

inline constexpr int kNumDTypes = 12;

// Short code used by the case grammar and ATen's operator traces: "b8", "f16", "bf16", ...
std::string_view dtype_code(DType t);
// ATen's spelling: "torch.float16", "torch.bool", ...
std::string dtype_torch_name(DType t);
// c10's ScalarType name: "Half", "Float", "Long", ... (used in ATen-style error messages).
std::string_view dtype_scalar_type_name(DType t);
// Accepts the short codes, "torch.float16"-style names and ATen's ScalarType names ("Half",
// "Float", "Long"). Returns nullopt for anything else.
std::optional<DType> parse_dtype(std::string_view s);
// The list of all dtypes, in enum order.
const std::vector<DType>& all_dtypes();

size_t itemsize(DType t);
bool is_floating(DType t);  // f16 bf16 f32 f64 and the fp8 types
bool is_integral(DType t, bool include_bool);
inline bool is_signed_integral(DType t) {
  return t == DType::Int8 || t == DType::Int16 || t == DType::Int32 || t == DType::Int64;
}
bool is_reduced_float(DType t);  // f16, bf16, fp8: computed in f32 by most kernels

// ATen's promote_types (c10/core/ScalarType.cpp) for the types crucible has. The fp8 types do
// not promote with anything but themselves: that is an error in ATen too (returns nullopt).
std::optional<DType> promote_types(DType a, DType b);

// Category used by result_type: bool < integral < floating.
enum class DTypeCategory : uint8_t { Bool = 0, Integral = 1, Floating = 2 };
DTypeCategory dtype_category(DType t);

// Floating-point properties used by comparison and by special-value generation.
struct FloatInfo {
  double max;         // largest finite
  double tiny;        // smallest normal
  double true_min;    // smallest subnormal
  double eps;         // difference between 1 and the next value
  int mantissa_bits;  // explicit fraction bits
};
FloatInfo float_info(DType t);

}  // namespace crucible
