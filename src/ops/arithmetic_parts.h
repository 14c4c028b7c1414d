// The parts of the arithmetic family registered from register_arithmetic_ops (arithmetic.cpp).
#pragma once

#include "crucible/ops/op.h"

namespace crucible {

void register_arithmetic_division_ops(OpRegistry& r);  // arithmetic_division.cpp
void register_arithmetic_math_ops(OpRegistry& r);      // arithmetic_math.cpp

}  // namespace crucible
