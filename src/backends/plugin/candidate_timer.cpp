// The trusted timing of a kernel's calls.
#include "backends/plugin/candidate_timer.h"

#include <algorithm>

#include <fmt/format.h>

#include "backends/plugin/kernel_call.h"

namespace crucible {

double candidate_sample_seconds(double wall, const CandidateSample& s) {
  const double trusted = std::max(wall - s.bare, 1e-9);
  if (!s.device_timed) return trusted;
  const double above = 2e-6 + 0.01 * trusted;
  const double below = 2 * s.gap + 50e-6 + 0.1 * trusted;
  // Far below: the trusted time counts (a forged small time buys nothing, and an honest large
  // call, whose request holds more than its kernel, still gets its conservative figure).
  if (s.event < trusted - below && s.event >= 0) return trusted;
  if (!(s.event <= trusted + above) || !(s.event >= trusted - below))
    kernel_fault(fmt::format(
        "timing error: the kernel's process reported a device time of {:.1f} us for a call "
        "whose trusted wall time (less the bare round trip) was {:.1f} us; device times are "
        "accepted from {:.1f} to {:.1f} us (did the kernel overwrite crucible's timing?)",
        s.event * 1e6, trusted * 1e6, std::max(trusted - below, 0.0) * 1e6,
        (trusted + above) * 1e6));
  return std::max(s.event, 1e-9);
}

namespace {

class CandidateTimer final : public DeviceTimer {
 public:
  explicit CandidateTimer(std::function<CandidateSample()> sample) : sample_(std::move(sample)) {}
  void start() override { t0_ = std::chrono::steady_clock::now(); }
  void stop() override { t1_ = std::chrono::steady_clock::now(); }
  double elapsed_seconds() override {
    return candidate_sample_seconds(std::chrono::duration<double>(t1_ - t0_).count(), sample_());
  }

 private:
  std::function<CandidateSample()> sample_;
  std::chrono::steady_clock::time_point t0_, t1_;
};

}  // namespace

std::unique_ptr<DeviceTimer> make_candidate_timer(std::function<CandidateSample()> sample) {
  return std::make_unique<CandidateTimer>(std::move(sample));
}

}  // namespace crucible
