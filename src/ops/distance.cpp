// Op family: distance (being written).
#include "ops/families.h"

namespace crucible {

void register_distance_ops(OpRegistry& r) { (void)r; }

}  // namespace crucible
