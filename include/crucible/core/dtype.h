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
  // Complex types: two components (real, imaginary) of the component type, stored
  // interleaved. Appended after the others so the earlier values do not move.
  Complex32,   // c32, torch.complex32 / torch.chalf (ComplexHalf): two f16
  Complex64,   // c64, torch.complex64 / torch.cfloat (ComplexFloat): two f32
  Complex128,  // c128, torch.complex128 / torch.cdouble (ComplexDouble): two f64
};

inline constexpr int kNumDTypes = 15;

// Short code used by the case grammar and ATen's operator traces: "b8", "f16", "bf16", ...
std::string_view dtype_code(DType t);
// The same as a std::string, for messages and labels joined with +.
std::string dtype_code_str(DType t);
// ATen's spelling: "torch.float16", "torch.bool", ...
std::string dtype_torch_name(DType t);
// c10's ScalarType name: "Half", "Float", "Long", ... (used in ATen-style error messages).
std::string_view dtype_scalar_type_name(DType t);
// The C++ type c10 names in some messages ("int", "long int", "c10::Half"); the ScalarType
// name for dtypes without one.
std::string_view dtype_cpp_type_name(DType t);
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
// c32 c64 c128 (ATen's isComplexType). Complex types are not is_floating (as in ATen).
bool is_complex(DType t);
// The component (value) type of a complex dtype: c32 -> f16, c64 -> f32, c128 -> f64 (ATen's
// toRealValueType); any other dtype is returned unchanged.
DType to_real(DType t);
// The complex dtype with component `t` (ATen's toComplexType): f16 -> c32, f32 -> c64,
// f64 -> c128, bf16 -> c64 (bfloat16 has f32's range); complex dtypes are returned unchanged.
// nullopt for integral, bool and fp8 dtypes (ATen raises "Unknown Complex ScalarType").
std::optional<DType> to_complex(DType t);

// ATen's promote_types (c10/core/ScalarType.cpp) for the types crucible has. The fp8 types do
// not promote with anything but themselves: that is an error in ATen too (returns nullopt).
// Complex wins and keeps the wider component: the result is the complex type whose component is
// the promotion of both value types (i64 + c32 -> c32, f16 + c32 -> c32, bf16 + c32 -> c64,
// f32 + c32 -> c64, f64 + c64 -> c128, c32 + c128 -> c128).
std::optional<DType> promote_types(DType a, DType b);
// ATen's canCast: whether an in-place or out= op may write a result of dtype `from` into a
// tensor of dtype `to` (no complex -> real, no floating -> integral, no non-bool -> bool).
bool can_cast(DType from, DType to);

// Category used by result_type: bool < integral < floating < complex.
enum class DTypeCategory : uint8_t { Bool = 0, Integral = 1, Floating = 2, Complex = 3 };
DTypeCategory dtype_category(DType t);

// Floating-point properties used by comparison and by special-value generation.
struct FloatInfo {
  double max;         // largest finite
  double tiny;        // smallest normal
  double true_min;    // smallest subnormal
  double eps;         // difference between 1 and the next value
  int mantissa_bits;  // explicit fraction bits
};
// Of a complex dtype: the properties of its component type (c64 -> f32's).
FloatInfo float_info(DType t);

}  // namespace crucible
