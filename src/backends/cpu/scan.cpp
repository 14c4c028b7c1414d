// The `cpu` backend's scan kernels (filled in by the next change).
#include "backends/cpu/nn.h"

namespace crucible::cpu {

void register_scan_kernels(KernelTable&) {}

}  // namespace crucible::cpu
