// Op family: comparison (being written).
#include "ops/families.h"

namespace crucible {

void register_comparison_ops(OpRegistry& r) { (void)r; }

}  // namespace crucible
