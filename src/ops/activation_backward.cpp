// Op family: activation_backward (being written).
#include "ops/families.h"

namespace crucible {

void register_activation_backward_ops(OpRegistry& r) { (void)r; }

}  // namespace crucible
