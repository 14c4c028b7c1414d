// Op family: batch_norm (being written).
#include "ops/families.h"

namespace crucible {

void register_batch_norm_ops(OpRegistry& r) { (void)r; }

}  // namespace crucible
