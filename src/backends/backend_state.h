// Whether a registered backend can run on this machine, for `crucible backends`.
#pragma once

#include <string>

namespace crucible {

// "ready: ..." or "not ready: <why>" for a backend that needs something from the machine
// (flag_gems: FlagGems in the Python environment, a CUDA device); empty for the others, which
// are built in. May run a probe process.
std::string backend_state(const std::string& name);

}  // namespace crucible
