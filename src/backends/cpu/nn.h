// The `cpu` backend's nn kernel families, each in its own file; register_nn_kernels (nn.cpp)
// calls them all.
#pragma once

#include "backends/cpu/kernel_table.h"

namespace crucible::cpu {

void register_conv_kernels(KernelTable& t);       // conv.cpp
void register_pool_kernels(KernelTable& t);       // pool.cpp
void register_norm_kernels(KernelTable& t);       // norm.cpp, norm_batch.cpp
void register_embedding_kernels(KernelTable& t);  // embedding.cpp
void register_index_kernels(KernelTable& t);      // index.cpp
void register_loss_kernels(KernelTable& t);       // loss.cpp
void register_scan_kernels(KernelTable& t);       // scan.cpp
void register_upsample_kernels(KernelTable& t);   // upsample.cpp
void register_embedding_bag_kernels(KernelTable& t);  // embedding_bag.cpp
void register_im2col_kernels(KernelTable& t);     // im2col.cpp

}  // namespace crucible::cpu
