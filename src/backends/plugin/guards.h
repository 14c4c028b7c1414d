// Element-level helpers of the kernel ABI backend's defences: decoy inputs, equal results,
// elements still holding their poison.
#pragma once

#include <cstdint>
#include <random>

#include "crucible/core/tensor.h"

namespace crucible {

// Puts t's elements from logical index `keep` on in a random order (bit-exact values: a decoy
// input with the same value set, so index tensors stay in range); the first `keep` stay.
void permute_elements(const Tensor& t, std::mt19937_64& rng, int64_t keep = 0);

// Whether a and b (same shape and dtype) hold the same bytes in every element.
bool same_elements(const Tensor& a, const Tensor& b);

// The number of elements i where a[i] has the bytes of pa[i] and b[i] those of pb[i] (all four
// of one shape and dtype): elements a kernel left unwritten in two calls under two poisons.
// *first gets the first one's logical index.
int64_t count_unwritten(const Tensor& a, const Tensor& pa, const Tensor& b, const Tensor& pb,
                        int64_t* first);

}  // namespace crucible
