// Completing an op's correctness samples so that every classic wrong kernel has a case to fail
// on, whatever its family's generator wrote: special values, every supported dtype, and a
// non-contiguous input. Internal to libcrucible (applied once by OpRegistry::catalog()).
#pragma once

#include "crucible/ops/op.h"

namespace crucible {

// Wraps `op.samples`: the op's own correctness samples, followed by the derived ones it lacks,
// each made from one of its computing samples (not an `error:` one) and kept only when the
// reference computes it (so it is never an error case):
//  - "special values": when no sample has fill='special' and the op takes floating data,
//    every floating Data tensor of the sample gets fill='special' (NaN, ±inf, ±0, ...);
//  - "dtype X": for each dtype of op.dtypes that no computing sample has as its first
//    tensor's dtype, the sample's tensors of its first tensor's dtype (Data role) become X;
//  - "non-contiguous": when every tensor of every computing sample is contiguous, the first
//    Data tensor of one is laid out transposed (or with a step of 2 when 1-d).
// Performance samples are left as they are. The derived list is computed once per op.
void complete_samples(OpDef& op);

}  // namespace crucible
