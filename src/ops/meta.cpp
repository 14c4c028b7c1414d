// Op family: meta (being written).
#include "ops/families.h"

namespace crucible {

void register_meta_ops(OpRegistry& r) { (void)r; }

}  // namespace crucible
