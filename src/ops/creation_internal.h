// Helpers shared by the creation family's files (creation.cpp, creation_fill.cpp) and the random
// family: ATen's factory keyword arguments, the strides of *_like results, and c10's checked
// conversion of a Scalar into a tensor's dtype. Internal to libcrucible.
#pragma once

#include <string>
#include <vector>

#include "crucible/core/value.h"
#include "crucible/ops/op.h"
#include "crucible/ops/rules/creation.h"

namespace crucible::creation {

// Bytes of a tensor's distinct elements (stride-0 dims counted once).
double real_bytes(const Tensor& t);
double tensor_bytes(const Tensor& t);  // numel * itemsize

}  // namespace crucible::creation

namespace crucible {
// creation_fill.cpp: fill, fill_, arange, copy, lift_fresh_copy.
void register_creation_fill_ops(OpRegistry& r);
}  // namespace crucible
