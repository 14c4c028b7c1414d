// Op family: fft (being written).
#include "ops/families.h"

namespace crucible {

void register_fft_ops(OpRegistry& r) { (void)r; }

}  // namespace crucible
