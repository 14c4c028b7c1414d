// The `cpu` backend's shape kernels (filled in by the next change).
#include "backends/cpu/kernel_table.h"

namespace crucible::cpu {

void register_shape_kernels(KernelTable&) {}

}  // namespace crucible::cpu
