// The cpu backend's mse_loss, mse_loss_backward and logsumexp: hand-computed values, every
// reduction, broadcast and strided arguments, the f16 overflow of a square before the mean,
// the integer norm of the backward, and logsumexp's infinite and NaN rows, against the
// reference.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "test_cpu_nn_check.h"

namespace crucible::cpu_test {
namespace {

const DType f32 = DType::Float32;

Tensor reals(const std::vector<double>& v, const Shape& shape, DType dt = f32) {
  Tensor t = Tensor::empty(shape, dt);
  for (size_t i = 0; i < v.size(); ++i) t.set(static_cast<int64_t>(i), v[i]);
  return t;
}

TEST(CpuMseLoss, ReductionsByHand) {
  const Tensor a = reals({1, 2, 3, 4}, {4});
  const Tensor b = reals({0, 4, 3, 1}, {4});
  // Squares 1, 4, 0, 9.
  Values out = expect_matches_ref("aten.mse_loss.default", {a, b, int64_t{0}});
  EXPECT_EQ(out[0].tensor().get(3), 9.0);
  out = expect_matches_ref("aten.mse_loss.default", {a, b, int64_t{1}});
  EXPECT_EQ(out[0].tensor().get(0), 3.5);
  out = expect_matches_ref("aten.mse_loss.default", {a, b, int64_t{2}});
  EXPECT_EQ(out[0].tensor().get(0), 14.0);
  // An empty mean is NaN.
  out = expect_matches_ref("aten.mse_loss.default",
                           {Tensor::zeros({0, 3}, f32), Tensor::zeros({0, 3}, f32), int64_t{1}});
  EXPECT_TRUE(std::isnan(out[0].tensor().get(0)));
}

TEST(CpuMseLoss, LargeBroadcastStridedAndMixedDtypes) {
  // More than one block of the parallel sum, with a broadcast target.
  for (int64_t red : {0, 1, 2}) {
    expect_matches_ref("aten.mse_loss.default",
                       {filled({300, 257}, f32), filled({257}, f32, 2), red});
    expect_matches_ref("aten.mse_loss.default",
                       {filled({9, 7}, f32).transpose(0, 1), filled({7, 9}, DType::Float64), red});
    expect_matches_ref("aten.mse_loss.default", {filled({64, 5}, DType::BFloat16),
                                                 filled({64, 5}, DType::BFloat16, 3), red});
    expect_matches_ref("aten.mse_loss.default",
                       {filled({6, 7}, DType::Int64), filled({6, 7}, f32), red});
  }
}

TEST(CpuMseLoss, HalfSquaresOverflowBeforeTheMean) {
  // 300^2 = 90000 is above f16's largest value: the square is inf, and so is the mean.
  const Tensor a = reals({300, 0}, {2}, DType::Float16);
  const Tensor b = reals({0, 0}, {2}, DType::Float16);
  const Values out = expect_matches_ref("aten.mse_loss.default", {a, b, int64_t{1}});
  EXPECT_TRUE(std::isinf(out[0].tensor().get(0)));
}

TEST(CpuMseLossBackward, StepByStepInTheDtype) {
  const Tensor s = reals({1, 2, 3, 4}, {4});
  const Tensor t = reals({0, 4, 3, 1}, {4});
  // mean: 2 / 4 * (s - t) * g with g = 2: [1, -2, 0, 3].
  Values out = expect_matches_ref("aten.mse_loss_backward.default",
                                  {Tensor::scalar(2.0, f32), s, t, int64_t{1}});
  const std::vector<double> expected = {1, -2, 0, 3};
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(out[0].tensor().get(i), expected[i]);
  // Integers: the norm 2 / 3 truncates to 0; over 2 elements it is 1.
  const DType i64 = DType::Int64;
  out = expect_matches_ref("aten.mse_loss_backward.default",
                           {Tensor::scalar(5.0, i64), reals({7, 1, 2}, {3}, i64),
                            reals({1, 1, 1}, {3}, i64), int64_t{1}});
  EXPECT_EQ(out[0].tensor().get_int(0), 0);
  out = expect_matches_ref(
      "aten.mse_loss_backward.default",
      {Tensor::scalar(5.0, i64), reals({7, 1}, {2}, i64), reals({1, 3}, {2}, i64), int64_t{1}});
  EXPECT_EQ(out[0].tensor().get_int(0), 30);
  EXPECT_EQ(out[0].tensor().get_int(1), -10);
  // Every dtype but bool, broadcast grad and target, a transposed self.
  for (DType dt : {DType::UInt8, DType::Int8, DType::Int16, DType::Int32, DType::Float16,
                   DType::BFloat16, f32, DType::Float64})
    for (int64_t red : {0, 1, 2})
      expect_matches_ref(
          "aten.mse_loss_backward.default",
          {filled({5, 1}, dt), filled({6, 5}, dt, 2).transpose(0, 1), filled({6}, dt, 3), red});
}

TEST(CpuLogsumexp, RowsColumnsAndSpecialRows) {
  const double inf = std::numeric_limits<double>::infinity();
  // Rows: [0, log 3] -> log(1 + 3) = log 4; [-inf, -inf] -> -inf; [1, inf] -> inf; NaN.
  const Tensor x = reals({0, std::log(3.0), -inf, -inf, 1, inf, NAN, 2}, {4, 2});
  const Values out =
      expect_matches_ref("aten.logsumexp.default", {x, std::vector<int64_t>{1}, false});
  const Tensor o = out[0].tensor();
  EXPECT_NEAR(o.get(0), std::log(4.0), 1e-6);
  EXPECT_EQ(o.get(1), -inf);
  EXPECT_EQ(o.get(2), inf);
  EXPECT_TRUE(std::isnan(o.get(3)));
  // Columns (the reduced dim outside contiguous ones), the same special values.
  expect_matches_ref("aten.logsumexp.default", {x, std::vector<int64_t>{0}, true});
  // Long rows and wide columns (more than one block), large values, several dims.
  for (DType dt : {f32, DType::Float64, DType::Float16, DType::BFloat16}) {
    expect_matches_ref("aten.logsumexp.default",
                       {filled({3, 700}, dt), std::vector<int64_t>{-1}, false});
    expect_matches_ref("aten.logsumexp.default",
                       {filled({5, 300}, dt), std::vector<int64_t>{0}, false});
  }
  Tensor big = filled({4, 30}, f32);
  for (int64_t i = 0; i < big.numel(); ++i) big.set(i, big.get(i) * 40);
  expect_matches_ref("aten.logsumexp.default", {big, std::vector<int64_t>{1}, false});
  expect_matches_ref("aten.logsumexp.default",
                     {filled({3, 4, 5}, f32).transpose(0, 2), std::vector<int64_t>{0, 2}, false});
  // Integers are reduced as f32; an empty reduction gives -inf; dim=[] reduces every dim.
  expect_matches_ref("aten.logsumexp.default",
                     {filled({4, 6}, DType::Int32), std::vector<int64_t>{1}, false});
  const Values e = expect_matches_ref("aten.logsumexp.default",
                                      {Tensor::zeros({3, 0}, f32), std::vector<int64_t>{1}, false});
  EXPECT_EQ(e[0].tensor().get(0), -inf);
  expect_matches_ref("aten.logsumexp.default", {filled({3, 4}, f32), std::vector<int64_t>{}, true});
}

}  // namespace
}  // namespace crucible::cpu_test
