// ATen semantics of nll_loss(2d)_forward/backward: reductions, weights, ignore_index,
// total_weight, out-of-range targets and shape checks.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "crucible/core/error.h"
#include "crucible/ops/op.h"
#include "ops/families.h"

namespace crucible {
namespace {

const OpRegistry& nll_ops() {
  static const OpRegistry* r = [] {
    auto* reg = new OpRegistry();
    register_nll_loss_ops(*reg);
    return reg;
  }();
  return *r;
}

Tensor tensor(const std::vector<double>& vals, const Shape& shape, DType t) {
  Tensor x = Tensor::empty(shape, t);
  for (size_t i = 0; i < vals.size(); ++i) x.set(static_cast<int64_t>(i), vals[i]);
  return x;
}

Values forward(const Tensor& x, const Tensor& t, Value w, int64_t red, int64_t ignore = -100) {
  return nll_ops()
      .get("aten.nll_loss_forward.default")
      .run_ref({x, t, w, Value(red), Value(ignore)});
}

const DType f32 = DType::Float32;

TEST(NllLoss, Reductions) {
  const Tensor x = tensor({1, 2, 3, 4, 5, 6}, {2, 3}, f32);
  const Tensor t = tensor({2, 0}, {2}, DType::Int64);
  const Tensor w = tensor({1, 2, 3}, {3}, f32);
  Values none = forward(x, t, w, 0);
  EXPECT_EQ(none[0].tensor().get(0), -9.0);
  EXPECT_EQ(none[0].tensor().get(1), -4.0);
  EXPECT_EQ(none[1].tensor().get(0), 0.0);  // total_weight is 0 for reduction none
  Values mean = forward(x, t, w, 1);
  EXPECT_FLOAT_EQ(mean[0].tensor().get(0), -3.25f);
  EXPECT_EQ(mean[1].tensor().get(0), 4.0);
  EXPECT_EQ(forward(x, t, Value(), 2)[0].tensor().get(0), -7.0);
  // Everything ignored: mean is 0 / 0.
  Values ign = forward(x, tensor({1, 1}, {2}, DType::Int64), Value(), 1, 1);
  EXPECT_TRUE(std::isnan(ign[0].tensor().get(0)));
  // 1-d input, 0-d target.
  Values one = forward(tensor({1, 2, 3}, {3}, f32), Tensor::scalar(1, DType::Int64), Value(), 0);
  EXPECT_EQ(one[0].tensor().dim(), 0);
  EXPECT_EQ(one[0].tensor().get(0), -2.0);
}

TEST(NllLoss, Errors) {
  const Tensor x = Tensor::zeros({3, 4}, f32);
  try {
    forward(x, tensor({1, 5, 1}, {3}, DType::Int64), Value(), 1);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "Target 5 is out of bounds.");
  }
  // The default ignore_index -100 is skipped, not out of bounds.
  EXPECT_NO_THROW(forward(x, tensor({1, -100, 1}, {3}, DType::Int64), Value(), 2));
  EXPECT_THROW(forward(x, tensor({1, 1}, {2}, DType::Int64), Value(), 1), Error);
  EXPECT_THROW(forward(x, tensor({1, 1, 1}, {3}, DType::Int32), Value(), 1), Error);
  EXPECT_THROW(forward(x, tensor({1, 1, 1}, {3}, DType::Int64), Tensor::zeros({3}, f32), 1), Error);
}

TEST(NllLoss, Backward) {
  const OpDef& op = nll_ops().get("aten.nll_loss_backward.default");
  const Tensor x = Tensor::zeros({3, 4}, f32);
  const Tensor t = tensor({1, 0, 3}, {3}, DType::Int64);
  Tensor g = op.run_ref({Tensor::scalar(1, f32), x, t, Value(), Value(int64_t{1}),
                         Value(int64_t{-100}), Tensor::scalar(3, f32)})[0]
                 .tensor();
  EXPECT_FLOAT_EQ(g.get(1), -1.0f / 3);
  EXPECT_EQ(g.get(0), 0.0);
  EXPECT_FLOAT_EQ(g.get(11), -1.0f / 3);
  EXPECT_THROW(op.run_ref({Tensor::zeros({2}, f32), x, t, Value(), Value(int64_t{0}),
                           Value(int64_t{-100}), Tensor::scalar(3, f32)}),
               Error);
}

TEST(NllLoss, TwoD) {
  const OpDef& op = nll_ops().get("aten.nll_loss2d_forward.default");
  const Tensor x = tensor({1, 2, 3, 4, 5, 6, 7, 8}, {1, 2, 2, 2}, f32);  // classes 0: 1..4, 1: 5..8
  const Tensor t = tensor({0, 1, 1, 0}, {1, 2, 2}, DType::Int64);
  Values none = op.run_ref({x, t, Value(), Value(int64_t{0}), Value(int64_t{-100})});
  EXPECT_EQ(none[0].tensor().shape(), Shape({1, 2, 2}));
  EXPECT_EQ(none[0].tensor().get(1), -6.0);
  EXPECT_EQ(none[0].tensor().get(3), -4.0);
  EXPECT_THROW(op.run_ref({Tensor::zeros({2, 2, 2}, f32), t, Value(), Value(int64_t{0}),
                           Value(int64_t{-100})}),
               Error);
}

}  // namespace
}  // namespace crucible
