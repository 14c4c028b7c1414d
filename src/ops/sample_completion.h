// Completing an op's correctness samples so that every classic wrong kernel has a case to fail
// on, whatever its family's generator wrote: special values, every supported dtype, and a
// non-contiguous input. Internal to libcrucible (applied once by OpRegistry::catalog()).
#pragma once

#include <string>
#include <vector>

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
//  - "values: R": for each value regime R of the op's family (value_regimes) that no sample
//    uses, every floating Data tensor without a fill gets fill=R;
//  - elementwise and reduction families: "large" (the largest tensor's first dim grown past
//    40000 elements) when no sample is that large; reductions also "width W" (the last dim at
//    every vector width 1, 3, 7, 8, 15, 16, 17, 31, 33, 63, 65) and "integer extremes" (i8,
//    i32, i64 data at the dtype's min/max, which must wrap as ATen does).
// Performance samples are left as they are. The derived list is computed once per op.
void complete_samples(OpDef& op);

// The op families whose correctness samples get the large and vector-width cases.
bool is_elementwise_family(const std::string& family);
bool is_reduction_family(const std::string& family);

// The value regimes (materialize's fills) an op family's floating data is drawn in besides the
// ordinary and special values: "integers", "big_integers", "tiny", "subnormal", "huge",
// "wide", "exp_edge" (elementwise families); "integers", "tiny", "subnormal" (reductions);
// "integers" (the other families that take floating data).
std::vector<std::string> value_regimes(const std::string& family);

// Whether `regime` of its family's list does not apply to op `op` (a table in
// sample_completion.cpp, each entry with its reason: lerp's "huge", where ATen's own formula
// overflows in the dtype).
bool regime_skipped(const std::string& op, const std::string& regime);

}  // namespace crucible
