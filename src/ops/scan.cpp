// Op family: scan (being written).
#include "ops/families.h"

namespace crucible {

void register_scan_ops(OpRegistry& r) { (void)r; }

}  // namespace crucible
