// The `cpu` backend's matmul family: mm, addmm, bmm, baddbmm.
#include "kernel_table.h"

namespace crucible::cpu {

void register_matmul_kernels(KernelTable& t) { (void)t; }

}  // namespace crucible::cpu
