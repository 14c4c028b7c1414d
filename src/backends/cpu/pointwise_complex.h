// Complex results of the elementwise arithmetic ops (add, sub, mul, div; pointwise_complex.cpp),
// which pw_execute_into hands over when a call's result dtype is complex.
#pragma once

#include <string>

#include "backends/cpu/pointwise_ops.h"

namespace crucible::cpu {

// Whether `op_name` computes complex results (its kernel entry then lists c64 and c128).
bool pw_has_complex(const std::string& op_name);

// Runs a call of `op` whose result dtype `rt` is complex into `out` (the meta function's fresh
// output, self or the out= argument), as `spec` describes; an op without complex results raises
// unsupported.
void pw_execute_complex_into(const OpDef& op, const Args& args, const Tensor& out,
                             const PwSpec& spec, DType rt);

}  // namespace crucible::cpu
