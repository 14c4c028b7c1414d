// The f64 arbiter that judges whole-model outputs.
#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "crucible/compare/arbiter.h"

namespace crucible {
namespace {

Tensor filled(DType t, const Shape& shape, double (*f)(int64_t)) {
  Tensor x = Tensor::empty(shape, t);
  for (int64_t i = 0; i < x.numel(); ++i) x.set(i, f(i));
  return x;
}

double wave(int64_t i) { return std::sin(0.37 * static_cast<double>(i)) * 3.0; }

// golden in f64; baseline = golden rounded to f32 plus a small model-like drift.
struct Runs {
  Tensor golden = filled(DType::Float64, {64}, wave);
  Tensor baseline = Tensor::empty({64}, DType::Float32);
  Runs(double drift) {
    for (int64_t i = 0; i < 64; ++i) baseline.set(i, wave(i) + drift * ((i % 3) - 1.0));
  }
  Tensor with_error(double err) const {
    Tensor c = Tensor::empty({64}, DType::Float32);
    for (int64_t i = 0; i < 64; ++i) c.set(i, wave(i) + err * ((i % 2) ? 1.0 : -1.0));
    return c;
  }
};

TEST(Arbiter, PassesWithinKTimesTheBaselineError) {
  Runs r(1e-3);  // baseline RMSE ~ 8.2e-4
  ArbiterCheck c = arbitrate(r.golden, r.baseline, r.with_error(2e-3), {}, "output 0");
  EXPECT_TRUE(c.passed) << c.reason;
  EXPECT_NEAR(c.baseline_rmse, 1e-3 * std::sqrt(2.0 / 3.0), 1e-4);
  EXPECT_NEAR(c.candidate_rmse, 2e-3, 1e-6);
  EXPECT_GT(c.pcc, 0.9999);
}

TEST(Arbiter, FailsBeyondKTimesTheBaselineErrorAndSaysBy) {
  Runs r(1e-3);
  ArbiterCheck c = arbitrate(r.golden, r.baseline, r.with_error(5e-3), {}, "output 0");
  EXPECT_FALSE(c.passed);
  EXPECT_NE(c.reason.find("exceeds"), std::string::npos) << c.reason;
  EXPECT_NE(c.reason.find("output 0"), std::string::npos);
  // A looser k accepts it.
  EXPECT_TRUE(arbitrate(r.golden, r.baseline, r.with_error(5e-3), {.k = 10}, "o").passed);
}

TEST(Arbiter, FloorAcceptsOneRoundingWhereTheBaselineIsExact) {
  Runs r(0.0);  // the baseline equals golden up to f32 rounding
  EXPECT_TRUE(arbitrate(r.golden, r.baseline, r.with_error(1e-6), {}, "o").passed);
  EXPECT_FALSE(arbitrate(r.golden, r.baseline, r.with_error(1e-3), {}, "o").passed);
}

TEST(Arbiter, NonFiniteWhereGoldenIsFiniteFails) {
  Runs r(1e-3);
  Tensor c = r.with_error(0);
  c.set(5, std::numeric_limits<double>::quiet_NaN());
  ArbiterCheck k = arbitrate(r.golden, r.baseline, c, {}, "loss");
  EXPECT_FALSE(k.passed);
  EXPECT_EQ(k.nonfinite_mismatches, 1);
  EXPECT_NE(k.reason.find("NaN or inf"), std::string::npos) << k.reason;
}

TEST(Arbiter, SharedInfinitiesAreExact) {
  Tensor g = filled(DType::Float64, {4}, wave), b = Tensor::empty({4}, DType::Float32);
  g.set(2, std::numeric_limits<double>::infinity());
  b.copy_from(g);
  EXPECT_TRUE(arbitrate(g, b, b, {}, "o").passed);
}

TEST(Arbiter, IntegersMustMatchAndShapesMustAgree) {
  Tensor g = filled(DType::Int64, {5}, [](int64_t i) { return double(i); });
  Tensor c = filled(DType::Int64, {5}, [](int64_t i) { return double(i == 3 ? 7 : i); });
  EXPECT_TRUE(arbitrate(g, g, g, {}, "indices").passed);
  ArbiterCheck k = arbitrate(g, g, c, {}, "indices");
  EXPECT_FALSE(k.passed);
  EXPECT_NE(k.reason.find("element 3 is 7, expected 3"), std::string::npos) << k.reason;
  Tensor wrong = Tensor::empty({6}, DType::Int64);
  EXPECT_NE(arbitrate(g, g, wrong, {}, "o").reason.find("wrong shape"), std::string::npos);
  Tensor f = Tensor::empty({5}, DType::Float32);
  EXPECT_NE(arbitrate(g, g, f, {}, "o").reason.find("wrong dtype"), std::string::npos);
}

TEST(Arbiter, SeveralBaselinesAllowKTimesTheLargestOfTheirErrors) {
  // An ill-conditioned model: the run rounded once per op is close to golden, a run perturbed
  // by honest rounding is ten times further; the candidate is judged against the spread.
  Runs once(1e-4), perturbed(1e-3);
  const Tensor cand = once.with_error(2e-3);
  EXPECT_FALSE(arbitrate(once.golden, once.baseline, cand, {}, "o").passed);
  const ArbiterCheck c =
      arbitrate(once.golden, std::vector<Tensor>{once.baseline, perturbed.baseline}, cand, {}, "o");
  EXPECT_TRUE(c.passed) << c.reason;
  EXPECT_NEAR(c.baseline_rmse, 1e-3 * std::sqrt(2.0 / 3.0), 1e-4);
  // Beyond k times the largest: fails, and the reason says how many runs set the bar.
  const ArbiterCheck f =
      arbitrate(once.golden, std::vector<Tensor>{once.baseline, perturbed.baseline},
                once.with_error(5e-3), {}, "o");
  EXPECT_FALSE(f.passed);
  EXPECT_NE(f.reason.find("the largest of 2 runs"), std::string::npos) << f.reason;
}

TEST(Arbiter, ConstantOrZeroCandidatesFail) {
  Runs r(1e-3);
  Tensor zeros = Tensor::empty({64}, DType::Float32);
  zeros.fill(0);
  ArbiterCheck k = arbitrate(r.golden, r.baseline, zeros, {}, "o");
  EXPECT_FALSE(k.passed);
  EXPECT_LT(k.pcc, 0.5);
}

}  // namespace
}  // namespace crucible
