// Whole arrays of f16 and bf16 widened to double, exactly (each value as half_to_float /
// bf16_to_float gives it), eight at a time where the processor converts (F16C): what reading
// a large reduced-precision tensor costs (the comparator reads every output element).
#pragma once

#include <cstddef>
#include <cstdint>

namespace crucible {

void half_to_double_n(const uint16_t* in, double* out, size_t n);
void bf16_to_double_n(const uint16_t* in, double* out, size_t n);

}  // namespace crucible
