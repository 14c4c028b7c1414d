// Op family: arithmetic (being written).
#include "ops/families.h"

namespace crucible {

void register_arithmetic_ops(OpRegistry& r) { (void)r; }

}  // namespace crucible
