// Allocation from meta outputs for the references that still allocate their outputs themselves
// (batch norm); references written destination-passing get theirs from structured_ref
// (crucible/ops/destination.h). Internal to libcrucible.
#pragma once

#include "crucible/core/tensor.h"
#include "crucible/core/value.h"

namespace crucible::meta {

// A fresh (contiguous, zero-filled) tensor of the shape and dtype of the meta output `spec`.
inline Tensor empty_as(const Value& spec) {
  return Tensor::empty(spec.tensor().shape(), spec.tensor().dtype());
}

}  // namespace crucible::meta
