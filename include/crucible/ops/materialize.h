// Materialisation: a case's call (the case grammar) made into bound argument values.
#pragma once

#include <cstdint>

#include "crucible/cases/literal.h"
#include "crucible/core/value.h"
#include "crucible/ops/op.h"

namespace crucible {

// Turns a case into bound arguments: tensors are allocated (storage large enough for their
// strides) and filled from the seeded RNG according to the op's argument roles and the
// tensor literal's fill; other literals become Values of the schema's argument types.
// Errors (a literal that cannot be the argument, an unknown keyword) are op errors.
Values materialize(const OpDef& op, const cases::CallSpec& call, uint64_t seed);
// The same arguments with meta tensors (shape, strides and dtype, no data) for the meta layer:
// a call's outputs and cost are known without allocating or filling anything.
Values materialize_meta(const OpDef& op, const cases::CallSpec& call);

}  // namespace crucible
