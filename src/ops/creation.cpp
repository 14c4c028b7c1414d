// Op family: creation (being written).
#include "ops/families.h"

namespace crucible {

void register_creation_ops(OpRegistry& r) { (void)r; }

}  // namespace crucible
