// Op family: sort (being written).
#include "ops/families.h"

namespace crucible {

void register_sort_ops(OpRegistry& r) { (void)r; }

}  // namespace crucible
