// Op family: where (being written).
#include "ops/families.h"

namespace crucible {

void register_where_ops(OpRegistry& r) { (void)r; }

}  // namespace crucible
