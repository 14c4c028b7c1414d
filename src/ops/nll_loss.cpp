// Op family: nll_loss (being written).
#include "ops/families.h"

namespace crucible {

void register_nll_loss_ops(OpRegistry& r) { (void)r; }

}  // namespace crucible
