// The `cpu` backend's upsample kernels (filled in by the next change).
#include "backends/cpu/nn.h"

namespace crucible::cpu {

void register_upsample_kernels(KernelTable&) {}

}  // namespace crucible::cpu
