// Op family: embedding_backward (being written).
#include "ops/families.h"

namespace crucible {

void register_embedding_backward_ops(OpRegistry& r) { (void)r; }

}  // namespace crucible
