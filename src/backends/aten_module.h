// The aten backend's shared library. libtorch starts slowly (its static initialisers register
// thousands of operators: ~0.7 s before main), so the aten backend is built as a library of its
// own, libcrucible_aten.so, that crucible loads the first time a run names aten. A run that
// does not pays nothing for libtorch (docs/aten-backend.md, "Loading").
#pragma once

#include <memory>
#include <string>

#include "crucible/backends/backend.h"
#include "crucible/build_info.h"

// This build's identity (crucible's version, commit and compiler), compiled into the program and
// into the library alike.
#define CRUCIBLE_ATEN_MODULE_BUILD \
  "crucible " CRUCIBLE_VERSION " " CRUCIBLE_GIT_COMMIT " " CRUCIBLE_CXX_COMPILER

namespace crucible {

// What libcrucible_aten.so gives the program that loads it (its one exported symbol,
// crucible_aten_module, returns it). The library links against the program's own crucible
// symbols, so it loads only into the build it was built with: `build` must be equal.
struct AtenModule {
  const char* build;  // CRUCIBLE_ATEN_MODULE_BUILD, as the library was compiled
  std::unique_ptr<Backend> (*make)(const std::string& spec);
  std::string (*version)();
};

// Loads libcrucible_aten.so (once per process; a forked worker inherits it). Looked for, in
// order: $CRUCIBLE_ATEN_LIBRARY, beside the program, in the install tree's lib/crucible, in the
// build tree. A library that is missing, does not load or is of another build is a Usage
// error naming it and the fix.
const AtenModule& load_aten_module();

// "ready: libtorch loaded from <library>" or "not ready: <why>", for `crucible backends`.
std::string aten_module_state();

// The aten backend for `spec` (aten, aten:cpu, aten:cuda[:N]), from the loaded library.
std::unique_ptr<Backend> make_aten_backend_from_module(const std::string& spec);

}  // namespace crucible
