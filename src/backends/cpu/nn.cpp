// The `cpu` backend's neural-network kernels: convolution, pooling, norms, embedding, index ops.
#include "kernel_table.h"

namespace crucible::cpu {

void register_nn_kernels(KernelTable& t) { (void)t; }

}  // namespace crucible::cpu
