// Allocation from meta outputs, for the references of the reduction, norm, sort, scan, softmax,
// matmul, convolution, pooling, upsample and fft families that compute their output spec with
// their op's meta function first. Internal to libcrucible.
#pragma once

#include "crucible/core/tensor.h"
#include "crucible/core/value.h"

namespace crucible::meta {

// A fresh (contiguous, uninitialised) tensor of the shape and dtype of the meta output `spec`.
inline Tensor empty_as(const Value& spec) {
  return Tensor::empty(spec.tensor().shape(), spec.tensor().dtype());
}

}  // namespace crucible::meta
