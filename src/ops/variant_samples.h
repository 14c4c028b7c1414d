// The correctness samples of a derived in-place or out= overload, made from its functional op's
// (include/crucible/ops/variants.h). Internal to the catalog.
#pragma once

#include <vector>

#include "crucible/ops/op.h"
#include "crucible/ops/variants.h"

namespace crucible {

// From the functional op's samples: up to six that compute (one per first-tensor dtype first),
// each with destinations of the result's shape and dtype (out=; every third laid out transposed)
// or unchanged when self can take the result (in place); the rule's own cases (Cast: an out of
// a wider dtype, one the result cannot be cast to, a self that would broadcast or is expanded
// or cannot hold the result's dtype); and up to two of the functional op's error cases.
// Performance samples: the functional op's, each with contiguous destinations of the result's
// shape and dtype (out=) or as they are where self can take the result (in place).
std::vector<Sample> variant_samples(const OpDef& variant, const DerivedVariant& v,
                                    const SampleContext& ctx);

// Registers every derived overload (variants.cpp); called once the functional ops are in.
void register_derived_variants(OpRegistry& r);

}  // namespace crucible
