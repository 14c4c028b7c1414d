// Op family: random (being written).
#include "ops/families.h"

namespace crucible {

void register_random_ops(OpRegistry& r) { (void)r; }

}  // namespace crucible
