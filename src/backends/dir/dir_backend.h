// `dir:<folder>` (also `--backend directory --ops-directory <folder>` and `--backend
// pregenerated --kernels-dir <folder>`, which mean `dir:cuda:<folder>` where CUDA starts): a folder
// of kernel sources, one op per sub-folder, compiled with the system's compiler into cached shared
// libraries when the backend is first created (in the process that runs crucible, before any worker
// starts) and loaded only in worker processes. An op whose kernel does not compile has every case
// recorded as compile_error with the compiler's diagnostics. docs/kernel-folders.md is the guide.
#pragma once

#include <memory>
#include <string>

#include "crucible/backends/backend.h"

namespace crucible {

// `spec` is "dir:<folder>".
std::unique_ptr<Backend> make_dir_backend(const std::string& spec);

struct DirBackendOptions {
  // The CUDA device (an index among the visible ones) the folder's Python kernels run on: their
  // candidate processes start CUDA before they enter the sandbox and the kernels receive device
  // tensors, as .cu kernels do (docs/gpu.md). -1: Python kernels run on the CPU.
  int python_cuda_device = -1;
};

// Why CUDA cannot start on the first visible device ("" when it can), asked once per process
// of a short-lived child (a process that started CUDA could not fork workers that use it).
std::string cuda_start_problem();

// A kernel folder as a backend named `name` (`--backend flag_gems` synthesizes one).
std::unique_ptr<Backend> make_dir_backend(const std::string& name, const std::string& folder,
                                          const DirBackendOptions& options);

}  // namespace crucible
