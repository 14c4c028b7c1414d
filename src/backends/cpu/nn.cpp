// The `cpu` backend's neural-network kernels: convolution, pooling, norms, embedding, index ops.
#include "backends/cpu/nn.h"

namespace crucible::cpu {

void register_nn_kernels(KernelTable& t) {
  register_conv_kernels(t);
  register_norm_kernels(t);
  register_pool_kernels(t);
  register_embedding_kernels(t);
  register_index_kernels(t);
  register_loss_kernels(t);
  register_scan_kernels(t);
  register_upsample_kernels(t);
  register_embedding_bag_kernels(t);
  register_im2col_kernels(t);
}

}  // namespace crucible::cpu
