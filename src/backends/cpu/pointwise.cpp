// The `cpu` backend's pointwise kernels.
#include "backends/cpu/kernel_table.h"

namespace crucible::cpu {

void register_pointwise_kernels(KernelTable& t) { (void)t; }

}  // namespace crucible::cpu
