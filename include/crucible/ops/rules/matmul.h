// ATen's rules that the catalog (src/ops) and backends' kernels share: the argument checks and
// result shapes of mm, addmm, bmm and baddbmm (LinearAlgebra.cpp): ranks, inner sizes, dtypes,
// self's expand to the result and the kernel's dtype dispatch (bool and fp8 are not implemented
// where the product is not empty). Written once here; the catalog's meta functions and
// references and the cpu kernels call the same code.
#pragma once

#include "crucible/core/value.h"
#include "crucible/ops/args.h"

namespace crucible::matmul {

// mm(self, mat2)'s checks; returns the output shape [M, N].
Shape mm_shape(const Args& args);

// addmm(self, mat1, mat2)'s checks; returns self's shape right-aligned to 2 dims (1 where it
// broadcasts to [M, N]).
Shape addmm_self_shape(const Args& args);

// bmm(self, mat2)'s checks; returns the output shape [B, M, N].
Shape bmm_shape(const Args& args);

// baddbmm(self, batch1, batch2)'s checks; returns self's shape right-aligned to 3 dims (1 where
// it broadcasts to [B, M, N]).
Shape baddbmm_self_shape(const Args& args);

}  // namespace crucible::matmul
