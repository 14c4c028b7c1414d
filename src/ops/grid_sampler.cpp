// Op family: grid_sampler (being written).
#include "ops/families.h"

namespace crucible {

void register_grid_sampler_ops(OpRegistry& r) { (void)r; }

}  // namespace crucible
