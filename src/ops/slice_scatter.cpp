// Op family: slice_scatter (being written).
#include "ops/families.h"

namespace crucible {

void register_slice_scatter_ops(OpRegistry& r) { (void)r; }

}  // namespace crucible
