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

// ATen's CUDA nll_loss2d adds each block's partial sum to the f16 output with atomics: a block
// whose finite terms overflow f16 meets another holding an infinite term, and the loss is NaN
// although the f64 reference gives inf. Accepted where the finite terms' magnitudes overflow the
// dtype (the reference on |x| is negative, as the loss negates its sum); refused where they
// cannot overflow.
TEST(NllLoss2d, ANanFromPartialSumsOverflowingBothWaysIsAcceptedOnlyWhereTheyCan) {
  const OpDef& op = nll_ops().get("aten.nll_loss2d_forward.default");
  auto judge = [&](double big) {
    // x [1, 2, 1, 3], every target class 0: terms -x[0, 0, 0, w].
    const Tensor x = tensor({-INFINITY, big, big, 0, 0, 0}, {1, 2, 1, 3}, DType::Float16);
    Tensor t = Tensor::empty({1, 1, 3}, DType::Int64);
    for (int64_t i = 0; i < 3; ++i) t.set_int(i, 0);
    const Values args{x, t, Value(), Value(int64_t{2}), Value(int64_t{-100})};
    const Values ref = op.run_ref(args);
    EXPECT_TRUE(std::isinf(ref[0].tensor().get(0)));
    Tensor got = ref[0].tensor().clone();
    got.set(0, NAN);
    const std::vector<TensorCheck> c = op.compare.custom(args, ref, {got, ref[1]});
    EXPECT_EQ(c.size(), 2u);
    return c.at(0).passed;
  };
  EXPECT_TRUE(judge(40000));  // 80000 > 65504: a block's partial sum overflows to -inf
  EXPECT_FALSE(judge(1));     // no partial sum of 1 + 1 overflows: NaN is wrong
}

// ATen's CUDA kernel never writes total_weight with reduction 'none' (the CPU's is 0): its value
// is unspecified there, and judged by shape and dtype only; with a reduction it is data.
TEST(NllLoss2d, TotalWeightIsUnspecifiedWithoutAReductionOnly) {
  for (const char* name : {"aten.nll_loss2d_forward.default", "aten.nll_loss2d_forward.output"}) {
    const OpDef& op = OpRegistry::catalog().get(name);
    const Tensor x = tensor({1, 2, 3, 4}, {1, 2, 1, 2}, f32);
    Tensor t = Tensor::empty({1, 1, 2}, DType::Int64);
    t.set_int(0, 0);
    t.set_int(1, 1);
    for (int64_t red : {0, 1, 2}) {
      Values args{x, t, Value(), Value(red), Value(int64_t{-100})};
      if (op.schema.arguments.size() > 5) {  // out=: output and total_weight of their shapes
        args.emplace_back(Tensor::empty(red == 0 ? Shape{1, 1, 2} : Shape{}, f32));
        args.emplace_back(Tensor::empty({}, f32));
      }
      EXPECT_FALSE(op.compare.output_unspecified(0, args)) << name << " reduction " << red;
      EXPECT_EQ(op.compare.output_unspecified(1, args), red == 0) << name << " reduction " << red;
      // The judge passes any total_weight there, and only there.
      const Values ref = op.run_ref(args);
      Tensor tw = ref[1].tensor().clone();
      tw.set(0, -0.000134);
      const std::vector<TensorCheck> c = op.compare.custom(args, ref, {ref[0], tw});
      ASSERT_EQ(c.size(), 2u);
      EXPECT_EQ(c[1].passed, red == 0) << name << " reduction " << red << ": " << c[1].reason;
    }
  }
}

}  // namespace
}  // namespace crucible
