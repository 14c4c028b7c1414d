// Op family: join (being written).
#include "ops/families.h"

namespace crucible {

void register_join_ops(OpRegistry& r) { (void)r; }

}  // namespace crucible
