// The `cpu` backend's random generator: Philox4x32-10 (core/rng.h) keyed by the seed that
// Backend::manual_seed gives, with a counter that every draw advances, as ATen's CPU generator
// is a seed plus a position. The same seed gives the same draws in the same order of calls.
#pragma once

#include <cstdint>

namespace crucible::cpu {

// Restarts the generator at `seed` (CpuBackend::manual_seed).
void seed_generator(uint64_t seed);

}  // namespace crucible::cpu
