// Building blocks of the catalog's meta functions (OpDef::meta): outputs described without
// computing them. Internal to libcrucible.
#pragma once

#include "crucible/core/tensor.h"
#include "crucible/core/value.h"

namespace crucible::meta {

// A fresh output: a meta tensor, contiguous (or with the given strides).
inline Value fresh(const Shape& shape, DType dtype) { return Value(Tensor::meta(shape, dtype)); }
inline Value fresh_strided(const Shape& shape, const Shape& strides, DType dtype) {
  return Value(Tensor::meta_strided(shape, strides, dtype));
}
// A fresh output shaped like `t` (contiguous), of dtype `dtype`.
inline Value fresh_like(const Tensor& t, DType dtype) { return fresh(t.shape(), dtype); }
inline Value fresh_like(const Tensor& t) { return fresh(t.shape(), t.dtype()); }

}  // namespace crucible::meta
