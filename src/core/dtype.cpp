// DType names, sizes, categories, ATen's promote_types and floating-point properties.
#include "crucible/core/dtype.h"

#include <array>
#include <cmath>
#include <iterator>
#include <limits>
#include <utility>

#include "crucible/core/error.h"
#include "crucible/numeric.h"

namespace crucible {

namespace {

struct DTypeNames {
  DType type;
  std::string_view code;
  std::string_view torch;        // torch.<name>
  std::string_view scalar_type;  // c10::ScalarType name
  size_t size;
};

constexpr std::array<DTypeNames, kNumDTypes> kNames = {{
    {DType::Bool, "b8", "bool", "Bool", 1},
    {DType::UInt8, "u8", "uint8", "Byte", 1},
    {DType::Int8, "i8", "int8", "Char", 1},
    {DType::Int16, "i16", "int16", "Short", 2},
    {DType::Int32, "i32", "int32", "Int", 4},
    {DType::Int64, "i64", "int64", "Long", 8},
    {DType::Float16, "f16", "float16", "Half", 2},
    {DType::BFloat16, "bf16", "bfloat16", "BFloat16", 2},
    {DType::Float32, "f32", "float32", "Float", 4},
    {DType::Float64, "f64", "float64", "Double", 8},
    {DType::Float8E4M3FN, "f8e4m3fn", "float8_e4m3fn", "Float8_e4m3fn", 1},
    {DType::Float8E5M2, "f8e5m2", "float8_e5m2", "Float8_e5m2", 1},
    {DType::Complex32, "c32", "complex32", "ComplexHalf", 4},
    {DType::Complex64, "c64", "complex64", "ComplexFloat", 8},
    {DType::Complex128, "c128", "complex128", "ComplexDouble", 16},
}};

// torch.* aliases beyond the canonical names.
struct Alias {
  std::string_view name;
  DType type;
};
constexpr std::array<Alias, 10> kTorchAliases = {{
    {"half", DType::Float16},
    {"float", DType::Float32},
    {"double", DType::Float64},
    {"long", DType::Int64},
    {"int", DType::Int32},
    {"short", DType::Int16},
    {"char", DType::Int8},
    {"chalf", DType::Complex32},
    {"cfloat", DType::Complex64},
    {"cdouble", DType::Complex128},
}};

const DTypeNames& names_of(DType t) {
  auto i = static_cast<size_t>(t);
  if (i >= kNames.size()) internal_error("invalid dtype " + std::to_string(i));
  return kNames[i];
}

}  // namespace

std::string_view dtype_code(DType t) { return names_of(t).code; }
std::string dtype_code_str(DType t) { return std::string(names_of(t).code); }

std::string dtype_torch_name(DType t) { return "torch." + std::string(names_of(t).torch); }

std::string_view dtype_scalar_type_name(DType t) { return names_of(t).scalar_type; }

std::string_view dtype_cpp_type_name(DType t) {
  switch (t) {
    case DType::Bool:
      return "bool";
    case DType::UInt8:
      return "unsigned char";
    case DType::Int8:
      return "signed char";
    case DType::Int16:
      return "short int";
    case DType::Int32:
      return "int";
    case DType::Int64:
      return "long int";
    case DType::Float16:
      return "c10::Half";
    case DType::BFloat16:
      return "c10::BFloat16";
    case DType::Float32:
      return "float";
    case DType::Float64:
      return "double";
    default:
      return dtype_scalar_type_name(t);
  }
}

std::optional<DType> parse_dtype(std::string_view s) {
  for (const auto& n : kNames) {
    if (s == n.code || s == n.scalar_type) return n.type;
  }
  constexpr std::string_view kTorch = "torch.";
  if (s.starts_with(kTorch)) {
    std::string_view rest = s.substr(kTorch.size());
    for (const auto& n : kNames) {
      if (rest == n.torch) return n.type;
    }
    for (const auto& a : kTorchAliases) {
      if (rest == a.name) return a.type;
    }
  }
  return std::nullopt;
}

const std::vector<DType>& all_dtypes() {
  static const std::vector<DType> kAll = [] {
    std::vector<DType> v;
    for (const auto& n : kNames) v.push_back(n.type);
    return v;
  }();
  return kAll;
}

size_t itemsize(DType t) { return names_of(t).size; }

bool is_floating(DType t) {
  switch (t) {
    case DType::Float16:
    case DType::BFloat16:
    case DType::Float32:
    case DType::Float64:
    case DType::Float8E4M3FN:
    case DType::Float8E5M2:
      return true;
    default:
      return false;
  }
}

bool is_integral(DType t, bool include_bool) {
  if (t == DType::Bool) return include_bool;
  return t == DType::UInt8 || is_signed_integral(t);
}

bool is_reduced_float(DType t) {
  return t == DType::Float16 || t == DType::BFloat16 || t == DType::Float8E4M3FN ||
         t == DType::Float8E5M2;
}

bool is_complex(DType t) {
  return t == DType::Complex32 || t == DType::Complex64 || t == DType::Complex128;
}

DType to_real(DType t) {
  switch (t) {
    case DType::Complex32:
      return DType::Float16;
    case DType::Complex64:
      return DType::Float32;
    case DType::Complex128:
      return DType::Float64;
    default:
      return t;
  }
}

std::optional<DType> to_complex(DType t) {
  switch (t) {
    case DType::Float16:
      return DType::Complex32;
    case DType::BFloat16:
    case DType::Float32:
      return DType::Complex64;
    case DType::Float64:
      return DType::Complex128;
    case DType::Complex32:
    case DType::Complex64:
    case DType::Complex128:
      return t;
    default:
      return std::nullopt;
  }
}

DTypeCategory dtype_category(DType t) {
  if (t == DType::Bool) return DTypeCategory::Bool;
  if (is_complex(t)) return DTypeCategory::Complex;
  return is_floating(t) ? DTypeCategory::Floating : DTypeCategory::Integral;
}

namespace {

// DType and the ABI's scalar types, which have the fp8 types after the complex ones.
constexpr std::pair<DType, numeric::ScalarType> kScalarTypes[] = {
    {DType::Bool, numeric::ScalarType::Bool},
    {DType::UInt8, numeric::ScalarType::UInt8},
    {DType::Int8, numeric::ScalarType::Int8},
    {DType::Int16, numeric::ScalarType::Int16},
    {DType::Int32, numeric::ScalarType::Int32},
    {DType::Int64, numeric::ScalarType::Int64},
    {DType::Float16, numeric::ScalarType::Float16},
    {DType::BFloat16, numeric::ScalarType::BFloat16},
    {DType::Float32, numeric::ScalarType::Float32},
    {DType::Float64, numeric::ScalarType::Float64},
    {DType::Float8E4M3FN, numeric::ScalarType::Float8E4M3FN},
    {DType::Float8E5M2, numeric::ScalarType::Float8E5M2},
    {DType::Complex32, numeric::ScalarType::Complex32},
    {DType::Complex64, numeric::ScalarType::Complex64},
    {DType::Complex128, numeric::ScalarType::Complex128},
};
static_assert(std::size(kScalarTypes) == kNumDTypes);

numeric::ScalarType scalar_type_of(DType t) {
  for (const auto& [d, s] : kScalarTypes)
    if (d == t) return s;
  return numeric::ScalarType::Undefined;
}

std::optional<DType> dtype_of(numeric::ScalarType t) {
  for (const auto& [d, s] : kScalarTypes)
    if (s == t) return d;
  return std::nullopt;
}

}  // namespace

std::optional<DType> promote_types(DType a, DType b) {
  return dtype_of(numeric::promote_types(scalar_type_of(a), scalar_type_of(b)));
}

bool can_cast(DType from, DType to) {
  return numeric::can_cast(scalar_type_of(from), scalar_type_of(to));
}

FloatInfo float_info(DType t) {
  if (is_complex(t)) return float_info(to_real(t));
  switch (t) {
    case DType::Float16:
      return {65504.0, std::ldexp(1.0, -14), std::ldexp(1.0, -24), std::ldexp(1.0, -10), 10};
    case DType::BFloat16:
      return {3.3895313892515355e38, std::ldexp(1.0, -126), std::ldexp(1.0, -133),
              std::ldexp(1.0, -7), 7};
    case DType::Float32:
      return {3.4028234663852886e38, std::ldexp(1.0, -126), std::ldexp(1.0, -149),
              std::ldexp(1.0, -23), 23};
    case DType::Float64:
      return {std::numeric_limits<double>::max(), std::numeric_limits<double>::min(),
              std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::epsilon(),
              52};
    case DType::Float8E4M3FN:
      return {448.0, std::ldexp(1.0, -6), std::ldexp(1.0, -9), std::ldexp(1.0, -3), 3};
    case DType::Float8E5M2:
      return {57344.0, std::ldexp(1.0, -14), std::ldexp(1.0, -16), std::ldexp(1.0, -2), 2};
    default:
      internal_error("float_info of non-floating dtype " + std::string(dtype_code(t)));
  }
}

}  // namespace crucible
