// A worker process that can no longer run cases says so here: a device context that a kernel
// broke (a CUDA device-side assert, an illegal address) fails every later call in that process.
// The worker pool delivers the report of the case that broke it, then replaces the worker, so
// the next case runs in a fresh process and the failure stays with the case that caused it.
#pragma once

#include <string>

namespace crucible {

// Marks this process as unable to run further cases, with the reason (the first one is kept).
void request_worker_retirement(const std::string& why);
// Whether request_worker_retirement was called in this process.
bool worker_retirement_requested();
// The reason given to the first request ("" when none).
std::string worker_retirement_reason();

}  // namespace crucible
