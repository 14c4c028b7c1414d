// Registration functions of the catalog's op families (one file each under src/ops/).
#pragma once

#include "crucible/ops/op.h"

namespace crucible {

void register_pointwise_unary_ops(OpRegistry& r);      // pointwise_unary.cpp
void register_pointwise_binary_ops(OpRegistry& r);     // pointwise_binary.cpp
void register_copy_ops(OpRegistry& r);                 // copy.cpp
void register_view_ops(OpRegistry& r);                 // view.cpp
void register_reduction_ops(OpRegistry& r);            // reduction.cpp
void register_matmul_ops(OpRegistry& r);               // matmul.cpp
void register_softmax_ops(OpRegistry& r);              // softmax.cpp
void register_norm_ops(OpRegistry& r);                 // norm.cpp
void register_embedding_ops(OpRegistry& r);            // embedding.cpp
void register_pointwise_math_ops(OpRegistry& r);       // pointwise_math.cpp
void register_activation_ops(OpRegistry& r);           // activation.cpp
void register_activation_backward_ops(OpRegistry& r);  // activation_backward.cpp
void register_arithmetic_ops(OpRegistry& r);           // arithmetic.cpp
void register_comparison_ops(OpRegistry& r);           // comparison.cpp
void register_where_ops(OpRegistry& r);                // where.cpp
void register_loss_ops(OpRegistry& r);                 // loss.cpp
void register_statistics_ops(OpRegistry& r);           // statistics.cpp
void register_scan_ops(OpRegistry& r);                 // scan.cpp
void register_sort_ops(OpRegistry& r);                 // sort.cpp
void register_distance_ops(OpRegistry& r);             // distance.cpp
void register_softmax_backward_ops(OpRegistry& r);     // softmax_backward.cpp
void register_nll_loss_ops(OpRegistry& r);             // nll_loss.cpp
void register_shape_ops(OpRegistry& r);                // shape.cpp
void register_join_ops(OpRegistry& r);                 // join.cpp
void register_slice_scatter_ops(OpRegistry& r);        // slice_scatter.cpp
void register_indexing_ops(OpRegistry& r);             // indexing.cpp
void register_embedding_backward_ops(OpRegistry& r);   // embedding_backward.cpp
void register_creation_ops(OpRegistry& r);             // creation.cpp
void register_random_ops(OpRegistry& r);               // random.cpp
void register_meta_ops(OpRegistry& r);                 // meta.cpp
void register_convolution_ops(OpRegistry& r);          // convolution.cpp
void register_im2col_ops(OpRegistry& r);               // im2col.cpp
void register_pooling_ops(OpRegistry& r);              // pooling.cpp
void register_batch_norm_ops(OpRegistry& r);           // batch_norm.cpp
void register_group_norm_ops(OpRegistry& r);           // group_norm.cpp
void register_upsample_ops(OpRegistry& r);             // upsample.cpp
void register_grid_sampler_ops(OpRegistry& r);         // grid_sampler.cpp
void register_padding_ops(OpRegistry& r);              // padding.cpp
void register_fft_ops(OpRegistry& r);                  // fft.cpp
void register_bn_functional_ops(OpRegistry& r);        // batch_norm_functional.cpp
void register_creation_permuted_ops(OpRegistry& r);    // creation_permuted.cpp
void register_detach_ops(OpRegistry& r);               // detach.cpp
void register_attention_ops(OpRegistry& r);            // attention.cpp
void register_attention_cuda_ops(OpRegistry& r);       // attention_cuda.cpp

}  // namespace crucible
