// Op family: pooling (being written).
#include "ops/families.h"

namespace crucible {

void register_pooling_ops(OpRegistry& r) { (void)r; }

}  // namespace crucible
