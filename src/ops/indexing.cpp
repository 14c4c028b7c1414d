// Op family: indexing (being written).
#include "ops/families.h"

namespace crucible {

void register_indexing_ops(OpRegistry& r) { (void)r; }

}  // namespace crucible
