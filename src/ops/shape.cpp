// Op family: shape (being written).
#include "ops/families.h"

namespace crucible {

void register_shape_ops(OpRegistry& r) { (void)r; }

}  // namespace crucible
