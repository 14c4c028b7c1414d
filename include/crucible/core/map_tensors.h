// Mapping a call's tensors: every defined tensor of a value list, those in lists included.
#pragma once

#include <functional>

#include "crucible/core/value.h"

namespace crucible {

// `vs` with every defined tensor, those in lists included, replaced by f(tensor); other values
// as they are.
Values map_tensors(const Values& vs, const std::function<Tensor(const Tensor&)>& f);

}  // namespace crucible
