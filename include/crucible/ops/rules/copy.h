// ATen's rules that the catalog (src/ops) and backends' kernels share: the argument checks of
// copy_ (and of the functional copy, which broadcasts src into a clone of self) and _to_copy's
// result dtype. Written once here; the catalog's meta functions and references and the cpu
// kernels call the same code.
#pragma once

#include "crucible/core/value.h"
#include "crucible/ops/args.h"

namespace crucible::copy_ops {

// src must broadcast to the shape of self, which it is written into: "output with shape [2]
// doesn't match the broadcast shape [3, 2]".
void check_broadcasts_to(const Tensor& self, const Tensor& src);

// copy_'s checks: self must not have internally overlapping elements (a dim of stride 0 and
// size > 1: "unsupported operation: more than one element of the written-to tensor refers to a
// single memory location. ..."), then check_broadcasts_to.
void check_copy_inplace(const Tensor& self, const Tensor& src);

// _to_copy's result dtype: `dtype`, else self's. A layout other than strided raises ("to(options)
// doesn't support converting to a different layout ..."); device, pin_memory and non_blocking do
// not change the result.
DType to_copy_dtype(const Args& a);

}  // namespace crucible::copy_ops
