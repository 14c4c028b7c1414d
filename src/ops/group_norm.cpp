// Op family: group_norm (being written).
#include "ops/families.h"

namespace crucible {

void register_group_norm_ops(OpRegistry& r) { (void)r; }

}  // namespace crucible
