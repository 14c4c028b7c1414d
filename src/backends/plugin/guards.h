// Guarded output buffers for kernels from outside: guard zones on both sides of each output,
// poison in the output itself, and the checks after a call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "crucible/core/tensor.h"

namespace crucible {

inline constexpr size_t kGuardBytes = 256;           // on each side of every output
inline constexpr uint8_t kGuardByte = 0xCB;          // what the guard zones hold
inline constexpr uint8_t kPoisonByte = 0xFF;         // what an output holds before the call
inline constexpr uint8_t kConfirmPoisonByte = 0x5A;  // the second poison (confirms "unwritten")

// An output allocated with guard zones: [guard | body | guard] in one storage; `tensor` views the
// body with the given shape and strides.
struct GuardedOutput {
  Tensor tensor;
  size_t body_bytes = 0;
};

// Allocates an output of `shape`/`strides`/`dtype` (strides must be non-negative), fills the
// guard zones with kGuardByte and the body with `poison`.
GuardedOutput allocate_guarded(const Shape& shape, const Shape& strides, DType dtype,
                               uint8_t poison);

// "" when both guard zones are intact, else the cause, naming `what` ("output 0"): "wrote past
// the end of output 0 (...)" or "wrote before the start of output 0 (...)".
std::string check_guard_zones(const GuardedOutput& g, const std::string& what);

// The number of elements of `t` whose every byte is `poison`; *first gets the first one's
// logical index (row-major).
int64_t count_poisoned(const Tensor& t, uint8_t poison, int64_t* first);

// Whether element i of `t` is entirely `poison`.
bool element_poisoned(const Tensor& t, int64_t i, uint8_t poison);

// Reverses the order of t's elements in place (bit-exact; a decoy input with the same values).
void reverse_elements(const Tensor& t);

// Whether a and b (same shape and dtype) hold the same bytes in every element.
bool same_elements(const Tensor& a, const Tensor& b);

}  // namespace crucible
