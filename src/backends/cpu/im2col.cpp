// The `cpu` backend's im2col kernels (filled in by the next change).
#include "backends/cpu/nn.h"

namespace crucible::cpu {

void register_im2col_kernels(KernelTable&) {}

}  // namespace crucible::cpu
