// ATen's dispatch vocabulary, written once: the ScalarType names its messages use and the error
// AT_DISPATCH raises for a dtype a kernel has no case for. The reference and the cpu kernels
// both raise through these.
#pragma once

#include <string>
#include <string_view>

#include "crucible/core/dtype.h"
#include "crucible/core/error.h"

namespace crucible {

// c10's ScalarType name ("Float", "Half", "Long"), as ATen's messages spell it.
inline std::string scalar_type_name(DType t) { return std::string(dtype_scalar_type_name(t)); }

// "\"<kernel>\" not implemented for '<ScalarType name>'", as an op error.
[[noreturn]] inline void not_implemented_for(std::string_view kernel, DType t) {
  op_error("\"" + std::string(kernel) + "\" not implemented for '" + scalar_type_name(t) + "'");
}

}  // namespace crucible
