// Op family: activation (being written).
#include "ops/families.h"

namespace crucible {

void register_activation_ops(OpRegistry& r) { (void)r; }

}  // namespace crucible
