// Op family: convolution (being written).
#include "ops/families.h"

namespace crucible {

void register_convolution_ops(OpRegistry& r) { (void)r; }

}  // namespace crucible
