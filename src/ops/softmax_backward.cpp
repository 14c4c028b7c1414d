// Op family: softmax_backward (being written).
#include "ops/families.h"

namespace crucible {

void register_softmax_backward_ops(OpRegistry& r) { (void)r; }

}  // namespace crucible
