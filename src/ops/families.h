// Registration functions of the catalog's op families (one file each under src/ops/).
#pragma once

#include "crucible/ops/op.h"

namespace crucible {

void register_pointwise_unary_ops(OpRegistry& r);   // pointwise_unary.cpp
void register_pointwise_binary_ops(OpRegistry& r);  // pointwise_binary.cpp
void register_copy_ops(OpRegistry& r);              // copy.cpp
void register_view_ops(OpRegistry& r);              // view.cpp
void register_reduction_ops(OpRegistry& r);         // reduction.cpp
void register_matmul_ops(OpRegistry& r);            // matmul.cpp
void register_softmax_ops(OpRegistry& r);           // softmax.cpp
void register_norm_ops(OpRegistry& r);              // norm.cpp
void register_embedding_ops(OpRegistry& r);         // embedding.cpp

}  // namespace crucible
