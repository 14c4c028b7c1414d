// Op family: upsample (being written).
#include "ops/families.h"

namespace crucible {

void register_upsample_ops(OpRegistry& r) { (void)r; }

}  // namespace crucible
