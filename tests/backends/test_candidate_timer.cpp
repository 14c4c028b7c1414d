// The trusted timing of a kernel's calls (backends/plugin/candidate_timer.h): the wall time less
// the bare round trip, and on CUDA the candidate's event time only where it agrees with it.
#include <gtest/gtest.h>

#include <limits>

#include "backends/plugin/candidate_timer.h"
#include "crucible/core/error.h"

namespace crucible {
namespace {

TEST(CandidateTiming, OnTheCpuTheTrustedWallTimeLessTheBareRoundTrip) {
  CandidateSample s;
  s.bare = 20e-6;
  EXPECT_DOUBLE_EQ(candidate_sample_seconds(120e-6, s), 100e-6);
  // An event time the candidate process reported is ignored when not device-timed.
  s.event = 1e-9;
  EXPECT_DOUBLE_EQ(candidate_sample_seconds(120e-6, s), 100e-6);
  // Never zero or negative.
  EXPECT_GT(candidate_sample_seconds(10e-6, s), 0.0);
}

TEST(CandidateTiming, AConsistentDeviceTimeIsReported) {
  CandidateSample s;
  s.bare = 20e-6;
  s.gap = 5e-6;
  s.device_timed = true;
  s.event = 90e-6;  // trusted: 100 us
  EXPECT_DOUBLE_EQ(candidate_sample_seconds(120e-6, s), 90e-6);
  s.event = 100e-6;
  EXPECT_DOUBLE_EQ(candidate_sample_seconds(120e-6, s), 100e-6);
}

TEST(CandidateTiming, ADeviceTimeAboveTheWallTimeIsATimingError) {
  CandidateSample s;
  s.bare = 20e-6;
  s.device_timed = true;
  s.event = 200e-6;  // trusted: 100 us; the kernel cannot have taken longer than its request
  try {
    candidate_sample_seconds(120e-6, s);
    FAIL() << "accepted a device time above the trusted wall time";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("timing error"), std::string::npos) << e.what();
  }
}

TEST(CandidateTiming, ADeviceTimeFarBelowTheWallTimeCountsAsTheTrustedTimeNotASpeedUp) {
  CandidateSample s;
  s.bare = 20e-6;
  s.gap = 5e-6;
  s.device_timed = true;
  // Trusted: 1000 us; accepted down to 1000 - (2*5 + 50 + 100) = 840 us.
  s.event = 850e-6;
  EXPECT_DOUBLE_EQ(candidate_sample_seconds(1020e-6, s), 850e-6);
  s.event = 830e-6;
  EXPECT_DOUBLE_EQ(candidate_sample_seconds(1020e-6, s), 1000e-6);
  s.event = 1e-6;  // a forged, hundredfold "speed-up": the trusted time counts
  EXPECT_DOUBLE_EQ(candidate_sample_seconds(1020e-6, s), 1000e-6);
  s.event = -1;  // nonsense
  EXPECT_THROW(candidate_sample_seconds(1020e-6, s), Error);
  s.event = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(candidate_sample_seconds(1020e-6, s), Error);
}

TEST(CandidateTiming, ALargerMeasuredGapWidensTheAcceptedRange) {
  CandidateSample s;
  s.device_timed = true;
  s.event = 700e-6;
  s.gap = 5e-6;
  EXPECT_DOUBLE_EQ(candidate_sample_seconds(1000e-6, s), 1000e-6);  // the trusted time
  s.gap = 150e-6;  // accepted down to 1000 - (300 + 50 + 100) = 550 us
  EXPECT_DOUBLE_EQ(candidate_sample_seconds(1000e-6, s), 700e-6);
}

}  // namespace
}  // namespace crucible
