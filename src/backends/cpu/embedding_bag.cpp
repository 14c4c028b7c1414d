// The `cpu` backend's embedding_bag kernels (filled in by the next change).
#include "backends/cpu/nn.h"

namespace crucible::cpu {

void register_embedding_bag_kernels(KernelTable&) {}

}  // namespace crucible::cpu
