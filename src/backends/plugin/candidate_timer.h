// How a kernel's call is timed from the trusted worker. The kernel runs in its candidate
// process, next to any clock that process reads, so a time measured there may be overwritten by
// the kernel; the authoritative time is the trusted worker's own: the wall time of the request
// less the bare round trip to the candidate process (measured before any kernel code was loaded
// into it, so a kernel cannot inflate it).
//
// On CUDA the candidate process also reports the time between two CUDA events around the call
// (the start recorded after a device synchronise, the stop after the call's device synchronise:
// every stream's work is in it). That finer time is used only when it agrees with the trusted
// one: not above it (beyond the events' resolution and 1%), and not below it by more than twice
// the gap measured on empty timed requests before any kernel code was loaded, plus 50 us and a
// tenth of the trusted time for the host's own noise. A time further below counts as the
// trusted time (the request of a large call holds more than its kernel: a device synchronise,
// the event records; on a 64M-element relu on an H100 the events said 220 us of a trusted
// 400 us), never as a speed-up; a time above the trusted one, or not a time, is a timing error
// for the case (crucible::Error).
#pragma once

#include <chrono>
#include <functional>
#include <memory>

#include "crucible/backends/backend.h"

namespace crucible {

struct CandidateSample {
  double bare = 0;   // the bare round trip, seconds
  double gap = 0;    // CUDA: CandidateProcess::empty_sample_gap(), seconds
  double event = 0;  // CUDA: the event time the candidate process reported, seconds
  // Whether `event` is to be used: a CUDA call on device-resident inputs, without copies (the
  // first call of a timing loop also copies the arena, and gives the trusted time).
  bool device_timed = false;
};

// The seconds one sample counts for, from its trusted wall time and what the candidate process
// said about it; throws crucible::Error when the event time disagrees with the wall time.
double candidate_sample_seconds(double wall, const CandidateSample& s);

// A DeviceTimer over candidate_sample_seconds; `sample` says, after stop(), what is known of the
// call that was timed.
std::unique_ptr<DeviceTimer> make_candidate_timer(std::function<CandidateSample()> sample);

}  // namespace crucible
