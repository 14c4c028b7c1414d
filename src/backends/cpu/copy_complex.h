// Copies and conversions where the source or the destination is complex (c32, c64, c128),
// which the elementwise engine does not compute (copy_complex.cpp).
#pragma once

#include "crucible/core/tensor.h"

namespace crucible::cpu {

// dst = src converted elementwise (src broadcast to dst's shape), as ATen converts: a real
// source reads as (x, 0), a real destination keeps the real part (bool: either part non-zero),
// each part rounded once. dst must not overlap src unless both are the same view.
void copy_complex(const Tensor& src, const Tensor& dst);

}  // namespace crucible::cpu
