// The cpu backend's _cdist_forward and _pdist_forward: hand-computed distances for every p,
// the matrix-product path of p = 2, broadcast batches and strided inputs against the
// reference, and the special values (NaN differences ignored by p = inf).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "test_cpu_nn_check.h"

namespace crucible::cpu_test {
namespace {

const DType f32 = DType::Float32;
const DType f64 = DType::Float64;
const double kInf = std::numeric_limits<double>::infinity();

Tensor reals(const std::vector<double>& v, const Shape& shape, DType dt = f32) {
  Tensor t = Tensor::empty(shape, dt);
  for (size_t i = 0; i < v.size(); ++i) t.set(static_cast<int64_t>(i), v[i]);
  return t;
}

TEST(CpuDistance, CdistEveryPByHand) {
  // x1 = (0, 0), x2 = (3, -4): d = (3, 4).
  const Tensor a = reals({0, 0}, {1, 2});
  const Tensor b = reals({3, -4}, {1, 2});
  struct Case {
    double p, expected;
  };
  const Case cases[] = {
      {0, 2},   {1, 7}, {2, 5}, {3, std::cbrt(91.0)}, {0.5, std::pow(std::sqrt(3.0) + 2, 2)},
      {kInf, 4}};
  for (const Case& c : cases) {
    const Values out = expect_matches_ref("aten._cdist_forward.default", {a, b, c.p, Value()});
    EXPECT_NEAR(out[0].tensor().get(0), c.expected, 1e-5 * c.expected) << c.p;
  }
  // The matrix-product path (compute_mode 1) gives the same distance.
  const Values mm = expect_matches_ref("aten._cdist_forward.default", {a, b, 2.0, int64_t{1}});
  EXPECT_NEAR(mm[0].tensor().get(0), 5.0, 1e-5);
}

TEST(CpuDistance, CdistShapesAndPaths) {
  for (double p : {0.0, 1.0, 2.0, 3.0, kInf}) {
    expect_matches_ref("aten._cdist_forward.default",
                       {filled({2, 1, 4, 3}, f32), filled({3, 5, 3}, f32, 2), p, Value()});
    expect_matches_ref("aten._cdist_forward.default",
                       {filled({5, 3}, f64).transpose(0, 1), filled({4, 5}, f64, 2), p, Value()});
  }
  // P > 25 takes the product path by default, compute_mode 2 forces the direct one.
  expect_matches_ref("aten._cdist_forward.default",
                     {filled({40, 9}, f32), filled({30, 9}, f32, 3), 2.0, Value()});
  expect_matches_ref("aten._cdist_forward.default",
                     {filled({40, 9}, f32), filled({30, 9}, f32, 3), 2.0, int64_t{2}});
  expect_matches_ref("aten._cdist_forward.default",
                     {filled({3, 40, 9}, f64), filled({3, 30, 9}, f64, 3), 2.0, Value()});
  // Empty M gives zeros.
  const Values z =
      expect_matches_ref("aten._cdist_forward.default",
                         {Tensor::zeros({2, 0}, f32), Tensor::zeros({3, 0}, f32), 2.0, Value()});
  EXPECT_EQ(z[0].tensor().get(5), 0.0);
}

TEST(CpuDistance, SpecialValues) {
  // A NaN difference: p = inf ignores it, p = 1 propagates it.
  const Tensor a = reals({NAN, 1}, {1, 2}, f64);
  const Tensor b = reals({0, 3}, {1, 2}, f64);
  Values out = expect_matches_ref("aten._cdist_forward.default", {a, b, kInf, Value()});
  EXPECT_EQ(out[0].tensor().get(0), 2.0);
  out = expect_matches_ref("aten._cdist_forward.default", {a, b, 1.0, Value()});
  EXPECT_TRUE(std::isnan(out[0].tensor().get(0)));
  // inf - inf is NaN; inf - 0 is inf.
  const Tensor c = reals({kInf, 0, kInf, 1}, {2, 2}, f64);
  for (double p : {0.0, 1.0, 2.0, 3.0, kInf}) {
    expect_matches_ref("aten._cdist_forward.default", {c, c, p, Value()});
    expect_matches_ref("aten._pdist_forward.default", {c, p});
  }
  expect_matches_ref("aten._cdist_forward.default", {c, c, 2.0, int64_t{1}});
  // f32 coordinates of 1e30: their squares overflow f32, so the call is computed in f64 (the
  // reference's result, 5e30, is finite in f32).
  const Tensor big1 = reals({0, 0}, {1, 2});
  const Tensor big2 = reals({3e30, -4e30}, {1, 2});
  out = expect_matches_ref("aten._cdist_forward.default", {big1, big2, 2.0, int64_t{2}});
  EXPECT_NEAR(out[0].tensor().get(0), 5e30, 1e25);
  out =
      expect_matches_ref("aten._pdist_forward.default", {reals({0, 0, 3e30, -4e30}, {2, 2}), 2.0});
  EXPECT_NEAR(out[0].tensor().get(0), 5e30, 1e25);
}

TEST(CpuDistance, PdistPairsInRowMajorOrder) {
  // Rows (0), (1), (3): pairs (0,1), (0,2), (1,2) -> 1, 3, 2.
  const Values out =
      expect_matches_ref("aten._pdist_forward.default", {reals({0, 1, 3}, {3, 1}), 1.0});
  EXPECT_EQ(out[0].tensor().get(0), 1.0);
  EXPECT_EQ(out[0].tensor().get(1), 3.0);
  EXPECT_EQ(out[0].tensor().get(2), 2.0);
  for (double p : {0.0, 1.0, 2.0, 0.5, kInf}) {
    // Rows longer than two vectors of every ISA, with a partial tail (the f32 vector loops).
    expect_matches_ref("aten._pdist_forward.default", {filled({9, 37}, f32), p});
    expect_matches_ref("aten._cdist_forward.default",
                       {filled({3, 70}, f32), filled({4, 70}, f32, 2), p, int64_t{2}});
    expect_matches_ref("aten._pdist_forward.default", {filled({41, 5}, f32), p});
    expect_matches_ref("aten._pdist_forward.default", {filled({9, 3}, f64), p});
  }
  EXPECT_EQ(expect_matches_ref("aten._pdist_forward.default", {filled({1, 3}, f32), 2.0})[0]
                .tensor()
                .numel(),
            0);
}

}  // namespace
}  // namespace crucible::cpu_test
