// Op family: im2col (being written).
#include "ops/families.h"

namespace crucible {

void register_im2col_ops(OpRegistry& r) { (void)r; }

}  // namespace crucible
