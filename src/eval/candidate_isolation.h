// How a worker's backends isolate the kernels from outside they run: candidate processes that
// enter `sandbox` (nullptr: no sandbox), re-arm its per-job limits before each call, and leave
// their death note on the worker's page.
#pragma once

#include "crucible/backends/backend.h"
#include "sandbox/sandbox.h"

namespace crucible {

CandidateIsolation worker_candidate_isolation(const SandboxOptions* sandbox);

}  // namespace crucible
