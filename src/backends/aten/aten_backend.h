// The `aten` backend: catalog ops run through libtorch's c10 dispatcher by schema name. This
// header is free of libtorch's headers; only the sources under src/backends/aten/ include them.
#pragma once

#include <memory>
#include <string>

#include "crucible/backends/backend.h"

namespace crucible {

// Creates the backend for "aten" / "aten:cpu" (the CPU) or "aten:cuda" / "aten:cuda:N" (a CUDA
// device, when libtorch has CUDA and a device is present). Anything else is a Usage error.
std::unique_ptr<Backend> make_aten_backend(const std::string& spec);

// "libtorch 1.13.0" (the version of the libtorch headers crucible was built against).
std::string aten_version();

}  // namespace crucible
