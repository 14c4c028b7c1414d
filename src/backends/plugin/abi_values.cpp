// crucible dtypes as DLPack's.
#include "backends/plugin/abi_values.h"

#include <cstring>

#include <fmt/format.h>

#include "crucible/core/error.h"

namespace crucible {

DLDataType to_dl_dtype(DType t) {
  auto dt = [](int code, int bits) {
    return DLDataType{static_cast<uint8_t>(code), static_cast<uint8_t>(bits), 1};
  };
  switch (t) {
    case DType::Bool:
      return dt(CRUCIBLE_DL_BOOL, 8);
    case DType::UInt8:
      return dt(kDLUInt, 8);
    case DType::Int8:
      return dt(kDLInt, 8);
    case DType::Int16:
      return dt(kDLInt, 16);
    case DType::Int32:
      return dt(kDLInt, 32);
    case DType::Int64:
      return dt(kDLInt, 64);
    case DType::Float16:
      return dt(kDLFloat, 16);
    case DType::BFloat16:
      return dt(kDLBfloat, 16);
    case DType::Float32:
      return dt(kDLFloat, 32);
    case DType::Float64:
      return dt(kDLFloat, 64);
    case DType::Float8E4M3FN:
      return dt(CRUCIBLE_DL_FLOAT8_E4M3FN, 8);
    case DType::Float8E5M2:
      return dt(CRUCIBLE_DL_FLOAT8_E5M2, 8);
    case DType::Complex32:
      return dt(kDLComplex, 32);
    case DType::Complex64:
      return dt(kDLComplex, 64);
    case DType::Complex128:
      return dt(kDLComplex, 128);
  }
  internal_error("to_dl_dtype: unknown dtype");
}

std::optional<DType> from_dl_dtype(DLDataType t) {
  for (DType d : all_dtypes()) {
    DLDataType x = to_dl_dtype(d);
    if (x.code == t.code && x.bits == t.bits && x.lanes == t.lanes) return d;
  }
  return std::nullopt;
}

}  // namespace crucible
