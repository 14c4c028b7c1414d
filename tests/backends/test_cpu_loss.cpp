// The cpu backend's nll_loss kernels against the reference: class weights, ignore_index (in
// range, and the default -100 out of range), every reduction, strided inputs, the spatial (2d)
// forms, the backward's zeros and its mean scaling, and the errors ATen raises.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "test_cpu_nn_check.h"

namespace crucible::cpu_test {
namespace {

const DType f32 = DType::Float32;

Tensor targets(const std::vector<int64_t>& v, const Shape& shape, DType dt = DType::Int64) {
  Tensor t = Tensor::empty(shape, dt);
  for (size_t i = 0; i < v.size(); ++i) t.set_int(static_cast<int64_t>(i), v[i]);
  return t;
}

Values forward_args(const Tensor& self, const Tensor& target, const Tensor& weight,
                    int64_t reduction, int64_t ignore) {
  return {self, target, weight.defined() ? Value(weight) : Value(), Value(reduction),
          Value(ignore)};
}

TEST(CpuLoss, NllForwardWeightsIgnoreAndReductions) {
  const Tensor x = filled({6, 4}, f32);
  const Tensor w = filled({4}, f32, 3);
  const Tensor t = targets({3, 1, 0, 1, 2, 1}, {6});
  for (int64_t red : {0, 1, 2}) {
    expect_matches_ref("aten.nll_loss_forward.default", forward_args(x, t, Tensor(), red, -100));
    expect_matches_ref("aten.nll_loss_forward.default", forward_args(x, t, w, red, 1));
  }
  // mean with weights and class 1 ignored: -(w3 x[0,3] + w0 x[2,0] + w2 x[4,2]) / (w3+w0+w2).
  const Values out =
      expect_matches_ref("aten.nll_loss_forward.default", forward_args(x, t, w, 1, 1));
  const double num = w.get(3) * x.get(3) + w.get(0) * x.get(8) + w.get(2) * x.get(18);
  const double den = w.get(3) + w.get(0) + w.get(2);
  EXPECT_NEAR(out[0].tensor().get(0), -num / den, 1e-6);
  EXPECT_NEAR(out[1].tensor().get(0), den, 1e-6);
}

TEST(CpuLoss, NllStridedInputsAndEveryTargetIgnored) {
  // A transposed self and a target read with a step.
  const Tensor x = filled({7, 5}, f32).transpose(0, 1);
  const Tensor t = targets({4, 9, 0, 9, 2, 9, 1, 9, 3, 9}, {10}).slice(0, 0, 10, 2);
  expect_matches_ref("aten.nll_loss_forward.default", forward_args(x, t, Tensor(), 2, -100));
  // Every target ignored: mean is 0 / 0.
  const Values out = expect_matches_ref(
      "aten.nll_loss_forward.default",
      forward_args(filled({3, 2}, f32), targets({1, 1, 1}, {3}), Tensor(), 1, 1));
  EXPECT_TRUE(std::isnan(out[0].tensor().get(0)));
}

TEST(CpuLoss, NllBackwardScattersIntoZeros) {
  const Tensor x = filled({5, 300}, f32);
  const Tensor t = targets({299, 0, 7, 0, 150}, {5});
  const Tensor tw = Tensor::scalar(2.5, f32);
  const Values out = expect_matches_ref(
      "aten.nll_loss_backward.default",
      {Tensor::scalar(3.0, f32), x, t, Value(), Value(int64_t{1}), Value(int64_t{7}), tw});
  const Tensor g = out[0].tensor();
  EXPECT_FLOAT_EQ(static_cast<float>(g.get(299)), -1.2f);
  EXPECT_EQ(g.get(2 * 300 + 7), 0.0);  // ignored
  EXPECT_EQ(g.get(1), 0.0);
  // Per-element gradients with weights (reduction none).
  expect_matches_ref("aten.nll_loss_backward.default",
                     {filled({5}, f32, 2), x, t, filled({300}, f32, 4), Value(int64_t{0}),
                      Value(int64_t{-100}), tw});
}

TEST(CpuLoss, Nll2dForwardAndBackward) {
  const Tensor x = filled({2, 3, 4, 5}, f32);
  Tensor t = Tensor::empty({2, 4, 5}, DType::Int64);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_int(i, i % 4 == 3 ? -100 : i % 3);
  for (int64_t red : {0, 1, 2})
    expect_matches_ref("aten.nll_loss2d_forward.default", forward_args(x, t, Tensor(), red, -100));
  expect_matches_ref("aten.nll_loss2d_backward.default",
                     {filled({2, 4, 5}, f32, 3), x, t, filled({3}, f32, 5), Value(int64_t{0}),
                      Value(int64_t{-100}), Tensor::scalar(1.0, f32)});
}

TEST(CpuLoss, NllErrorsRaise) {
  auto cpu = make_cpu_backend();
  const OpDef& op = OpRegistry::catalog().get("aten.nll_loss_forward.default");
  const Tensor x = filled({3, 4}, f32);
  EXPECT_THROW(cpu->run(op, forward_args(x, targets({0, 4, 1}, {3}), Tensor(), 1, -100)),
               crucible::Error);
  EXPECT_THROW(cpu->run(op, forward_args(x, targets({0, 1}, {2}), Tensor(), 1, -100)),
               crucible::Error);
  EXPECT_THROW(
      cpu->run(op, forward_args(x, targets({0, 1, 2}, {3}, DType::Int32), Tensor(), 1, -100)),
      crucible::Error);
  EXPECT_THROW(cpu->run(op, forward_args(x, targets({0, 1, 2}, {3}), filled({3}, f32), 1, -100)),
               crucible::Error);
}

}  // namespace
}  // namespace crucible::cpu_test
