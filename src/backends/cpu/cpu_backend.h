// The `cpu` backend: vectorized (AVX-512 / AVX2 / portable, chosen at run time), multithreaded
// kernels for the catalog ops that matter for speed. Ops outside its kernel table are
// unsupported; nothing is forwarded to another backend.
#pragma once

#include <memory>

#include "crucible/backends/backend.h"

namespace crucible {
std::unique_ptr<Backend> make_cpu_backend();
}
