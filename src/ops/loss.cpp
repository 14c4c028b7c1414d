// Op family: loss (being written).
#include "ops/families.h"

namespace crucible {

void register_loss_ops(OpRegistry& r) { (void)r; }

}  // namespace crucible
