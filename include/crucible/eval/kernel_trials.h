// The trials of the `fastest` kernel policy (crucible/models/kernel_policy.h) in an isolated
// worker process, as cases run: a kernel that crashes, hangs past the timeout or allocates past
// the memory limit costs its trial (the backend is rejected for that op, with the cause), never
// the process that chooses. The worker makes its own backends after the fork.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "crucible/models/kernel_policy.h"

namespace crucible {

struct KernelTrialOptions {
  std::vector<std::string> backends;      // the policy's backends (registry names)
  double timeout_s = 60;                  // per trial (every call of one op on one backend)
  size_t memory_limit = size_t{4} << 30;  // bytes per worker, 0: none
};

models::TrialRunner isolated_trial_runner(const KernelTrialOptions& options);

}  // namespace crucible
