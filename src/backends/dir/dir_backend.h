// `dir:<folder>` (also `--backend directory --ops-directory <folder>` and `--backend
// pregenerated --kernels-dir <folder>`): a folder of kernel sources, one op per sub-folder,
// compiled with the system's compiler into cached shared libraries when the backend is first
// created (in the process that runs crucible, before any worker starts) and loaded only in
// worker processes. An op whose kernel does not compile has every case recorded as
// compile_error with the compiler's diagnostics. docs/kernel-folders.md is the guide.
#pragma once

#include <memory>
#include <string>

#include "crucible/backends/backend.h"

namespace crucible {

// `spec` is "dir:<folder>".
std::unique_ptr<Backend> make_dir_backend(const std::string& spec);

}  // namespace crucible
