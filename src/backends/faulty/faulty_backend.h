#pragma once

#include <memory>

#include "crucible/backends/backend.h"

namespace crucible {
// A test-only backend whose kernels are wrong on purpose, one fault per op. It exists to prove
// that crucible gives each fault its right verdict and carries on.
std::unique_ptr<Backend> make_faulty_backend();
}  // namespace crucible
