// Op family: pointwise_math (being written).
#include "ops/families.h"

namespace crucible {

void register_pointwise_math_ops(OpRegistry& r) { (void)r; }

}  // namespace crucible
