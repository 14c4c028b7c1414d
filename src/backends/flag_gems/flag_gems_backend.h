// `--backend flag_gems`: FlagGems' Triton kernels (github.com/FlagOpen/FlagGems), from the
// Python environment Python kernels use ($CRUCIBLE_PYTHON, else the interpreter crucible was
// built with), evaluated like any backend.
//
// At run start a probe process imports flag_gems and reads its op table (flag_gems_table.h).
// Every entry that names a catalog overload becomes a Python kernel synthesized in the backend's
// scratch folder: a file that reads the same table in its candidate process and calls FlagGems'
// function for that overload directly (never through ATen's dispatcher, where ATen would run
// instead). The synthesized folder is then an ordinary kernel folder (`dir:`), so every defence
// of Python kernels applies: one sandboxed candidate process per op, guard zones, poison,
// untouched inputs, aliasing, repeated and decoy calls. When FlagGems runs on CUDA, each
// candidate process starts CUDA before it enters the sandbox and the kernels receive device
// tensors (docs/gpu.md, "FlagGems"). Entries that name no catalog overload are listed at start.
#pragma once

#include <memory>
#include <string>

#include "crucible/backends/backend.h"

namespace crucible {

// `spec` is "flag_gems". A FlagGems that cannot be imported, or that runs on CUDA where no CUDA
// device is visible, is a Usage error (exit status 2) saying why and what to do.
std::unique_ptr<Backend> make_flag_gems_backend(const std::string& spec);

// What `crucible backends` says of it: "ready: FlagGems 3.0 from ..., N kernels ..." or
// "not ready: <why>". Runs the probe.
std::string flag_gems_state();

}  // namespace crucible
