// Op family: statistics (being written).
#include "ops/families.h"

namespace crucible {

void register_statistics_ops(OpRegistry& r) { (void)r; }

}  // namespace crucible
