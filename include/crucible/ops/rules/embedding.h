// ATen's rules that the catalog (src/ops) and backends' kernels share: the argument checks of
// embedding, embedding_dense_backward, _embedding_bag and
// _embedding_bag_per_sample_weights_backward (Embedding.cpp, EmbeddingBag.cpp). Written once
// here; the catalog's meta functions and references and the cpu kernels call the same code.
#pragma once

#include <cstdint>
#include <span>

#include "crucible/core/value.h"
#include "crucible/ops/args.h"

namespace crucible::embedding {

// checkScalarTypes(op, {t, arg, pos}, {Long, Int}): "Expected tensor for argument #1 'indices' to
// have one of the following scalar types: Long, Int; but got torch.FloatTensor instead (while
// checking arguments for embedding)".
void check_index_dtype(const Tensor& t, const char* arg, int pos, const char* op);

// embedding's argument checks (a 2-D weight, i64 or i32 indices of any shape); the output's shape
// indices.shape + [weight.size(1)].
Shape embedding_shape(const Args& a);

// embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq)'s
// arguments, checked: indices i64 or i32; grad_output holds one row of D = grad_output.size(-1)
// per index; num_weights non-negative. The output's shape is [num_weights, D].
struct DenseBackwardArgs {
  Tensor grad;  // grad_output
  Tensor indices;
  int64_t num_weights;
  int64_t padding_idx;
  bool scale;  // scale_grad_by_freq
  int64_t d;   // embedding width
};
DenseBackwardArgs dense_backward_args(const Args& a);

// _embedding_bag's outputs as far as the argument checks decide them.
struct BagSpec {
  int64_t n;         // indices, flattened
  int64_t num_bags;  // bags
  int64_t d;         // embedding width
  int64_t mode;      // 0 sum, 1 mean, 2 max
};

// _embedding_bag's argument checks: a 2-D weight, i64/i32 indices (read flattened) and 1-D
// offsets, mode 0..2, per_sample_weights only with mode sum (the weight's dtype, one per index),
// num_bags = offsets.size(0) - include_last_offset not negative.
BagSpec embedding_bag_spec(const Args& a);

// _embedding_bag's checks of the offsets' values against `n` indices: offsets[0] is 0, none
// exceeds n, and they do not decrease.
void check_bag_offsets(std::span<const int64_t> offsets, int64_t n);

// _embedding_bag_per_sample_weights_backward(grad, weight, indices, offsets, offset2bag, mode,
// padding_idx)'s arguments, checked: mode sum, 2-D grad and weight of the same width, 1-D i64/i32
// indices, one offset2bag entry per index. The output's shape is [n].
struct PswBackwardArgs {
  Tensor grad;
  Tensor weight;
  Tensor indices;
  Tensor offset2bag;
  int64_t padding_idx;
  int64_t n;  // indices
  int64_t d;  // embedding width
};
PswBackwardArgs psw_backward_args(const Args& a);

}  // namespace crucible::embedding
