// Op family: padding (being written).
#include "ops/families.h"

namespace crucible {

void register_padding_ops(OpRegistry& r) { (void)r; }

}  // namespace crucible
