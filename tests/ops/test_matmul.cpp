// ATen semantics of the matmul catalog entries: mm, addmm (beta/alpha, bias broadcasting,
// beta=0 ignoring NaN), bmm, baddbmm, their shape and dtype errors, integer wrap-around and cost.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "crucible/core/error.h"
#include "crucible/ops/op.h"
#include "nn_test_util.h"
#include "ops/families.h"

namespace crucible {
namespace {

const OpRegistry& matmul_ops() {
  static const OpRegistry* r = [] {
    auto* reg = new OpRegistry();
    register_matmul_ops(*reg);
    return reg;
  }();
  return *r;
}

Values call(const std::string& op, const Values& args) {
  return matmul_ops().get(op).run_ref(args);
}

Tensor tensor(const std::vector<double>& vals, const Shape& shape, DType t) {
  Tensor x = Tensor::empty(shape, t);
  for (size_t i = 0; i < vals.size(); ++i) x.set(static_cast<int64_t>(i), vals[i]);
  return x;
}

template <typename Fn>
std::string op_error_of(Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OpError) << e.what();
    return e.what();
  }
  return "";
}

TEST(Matmul, MmValues) {
  const Tensor a = tensor({1, 2, 3, 4, 5, 6}, {2, 3}, DType::Float32);
  const Tensor b = tensor({7, 8, 9, 10, 11, 12}, {3, 2}, DType::Float32);
  Tensor c = call("aten.mm.default", {a, b})[0].tensor();
  EXPECT_EQ(c.shape(), Shape({2, 2}));
  EXPECT_EQ(c.dtype(), DType::Float32);
  EXPECT_EQ(c.get(0), 58.0);
  EXPECT_EQ(c.get(1), 64.0);
  EXPECT_EQ(c.get(2), 139.0);
  EXPECT_EQ(c.get(3), 154.0);
  // The same product with a transposed (non-contiguous) left operand.
  const Tensor at = tensor({1, 4, 2, 5, 3, 6}, {3, 2}, DType::Float32).transpose(0, 1);
  EXPECT_EQ(call("aten.mm.default", {at, b})[0].tensor().get(3), 154.0);
}

TEST(Matmul, MmErrors) {
  const Tensor a = Tensor::zeros({3, 4}, DType::Float32);
  const Tensor b = Tensor::zeros({5, 6}, DType::Float32);
  EXPECT_EQ(op_error_of([&] {
              call("aten.mm.default", {a, b});
            }),
            "mat1 and mat2 shapes cannot be multiplied (3x4 and 5x6)");
  EXPECT_EQ(op_error_of([&] {
              call("aten.mm.default", {Tensor::zeros({4}, DType::Float32), b});
            }),
            "self must be a matrix");
  EXPECT_EQ(op_error_of([&] {
              call("aten.mm.default", {a, Tensor::zeros({4, 2}, DType::Float64)});
            }),
            "expected m1 and m2 to have the same dtype, but got: float != double");
  EXPECT_NE(op_error_of([&] {
              call("aten.mm.default",
                   {Tensor::zeros({2, 2}, DType::Bool), Tensor::zeros({2, 2}, DType::Bool)});
            }),
            "");
}

TEST(Matmul, IntegerProductsWrap) {
  const Tensor a = tensor({100, 100}, {1, 2}, DType::Int8);
  const Tensor b = tensor({1, 1}, {2, 1}, DType::Int8);
  Tensor c = call("aten.mm.default", {a, b})[0].tensor();
  EXPECT_EQ(c.dtype(), DType::Int8);
  EXPECT_EQ(c.get_int(0), -56);
}

TEST(Matmul, EmptyInnerDimGivesZeros) {
  Tensor c = call("aten.mm.default",
                  {Tensor::zeros({2, 0}, DType::Float32), Tensor::zeros({0, 3}, DType::Float32)})[0]
                 .tensor();
  EXPECT_EQ(c.shape(), Shape({2, 3}));
  EXPECT_EQ(c.get(5), 0.0);
}

TEST(Matmul, AddmmBroadcastsBiasAndScales) {
  const Tensor bias = tensor({1, 2}, {2}, DType::Float32);
  const Tensor a = tensor({1, 2, 3, 4}, {2, 2}, DType::Float32);
  const Tensor eye = tensor({1, 0, 0, 1}, {2, 2}, DType::Float32);
  Tensor c = call("aten.addmm.default", {bias, a, eye, Value(0.5), Value(int64_t{2})})[0].tensor();
  // 0.5 * [1, 2] + 2 * [[1, 2], [3, 4]]
  EXPECT_EQ(c.get(0), 2.5);
  EXPECT_EQ(c.get(1), 5.0);
  EXPECT_EQ(c.get(2), 6.5);
  EXPECT_EQ(c.get(3), 9.0);
  // A column bias [M, 1].
  const Tensor col = tensor({10, 20}, {2, 1}, DType::Float32);
  Tensor d =
      call("aten.addmm.default", {col, a, eye, Value(int64_t{1}), Value(int64_t{1})})[0].tensor();
  EXPECT_EQ(d.get(1), 12.0);
  EXPECT_EQ(d.get(2), 23.0);
  EXPECT_NE(op_error_of([&] {
              call("aten.addmm.default", {tensor({1, 2, 3}, {3}, DType::Float32), a, eye,
                                          Value(int64_t{1}), Value(int64_t{1})});
            }).find("The expanded size of the tensor (2) must match the existing size (3)"),
            std::string::npos);
}

TEST(Matmul, AddmmBetaZeroIgnoresNaNInSelf) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor self = tensor({nan, nan, nan, nan}, {2, 2}, DType::Float32);
  const Tensor a = tensor({1, 2, 3, 4}, {2, 2}, DType::Float32);
  const Tensor eye = tensor({1, 0, 0, 1}, {2, 2}, DType::Float32);
  Tensor c =
      call("aten.addmm.default", {self, a, eye, Value(int64_t{0}), Value(int64_t{1})})[0].tensor();
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(c.get(i), static_cast<double>(i + 1));
  Tensor d = call("aten.addmm.default", {self, a, eye, Value(1.0), Value(int64_t{1})})[0].tensor();
  EXPECT_TRUE(std::isnan(d.get(0)));
}

TEST(Matmul, AddmmDtypeChecks) {
  const Tensor a = Tensor::zeros({2, 2}, DType::Float32);
  EXPECT_EQ(op_error_of([&] {
              call("aten.addmm.default", {Tensor::zeros({2}, DType::Float64), a, a,
                                          Value(int64_t{1}), Value(int64_t{1})});
            }),
            "self and mat2 must have the same dtype, but got Double and Float");
}

TEST(Matmul, BmmValuesAndErrors) {
  const Tensor a = tensor({1, 2, 3, 4}, {2, 1, 2}, DType::Float64);
  const Tensor b = tensor({5, 6, 7, 8}, {2, 2, 1}, DType::Float64);
  Tensor c = call("aten.bmm.default", {a, b})[0].tensor();
  EXPECT_EQ(c.shape(), Shape({2, 1, 1}));
  EXPECT_EQ(c.get(0), 17.0);
  EXPECT_EQ(c.get(1), 53.0);
  EXPECT_EQ(
      op_error_of([&] {
        call("aten.bmm.default",
             {Tensor::zeros({2, 3, 4}, DType::Float32), Tensor::zeros({3, 4, 5}, DType::Float32)});
      }),
      "Expected size for first two dimensions of batch2 tensor to be: [2, 4] but got: [3, 4].");
  EXPECT_EQ(op_error_of([&] {
              call("aten.bmm.default", {Tensor::zeros({3, 4}, DType::Float32),
                                        Tensor::zeros({3, 4, 5}, DType::Float32)});
            }),
            "batch1 must be a 3D tensor");
}

TEST(Matmul, CostAndTolerance) {
  const OpDef& mm = matmul_ops().get("aten.mm.default");
  const Values args{Tensor::zeros({8, 16}, DType::Float32), Tensor::zeros({16, 4}, DType::Float32)};
  const Values out = mm.run_ref(args);
  const Cost c = mm.run_cost(args, out);
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * 8 * 4 * 16);
  EXPECT_DOUBLE_EQ(c.bytes, 4.0 * (8 * 16 + 16 * 4 + 8 * 4));
  EXPECT_DOUBLE_EQ(mm.compare.tol_scale(args), 4.0);
  const OpDef& bmm = matmul_ops().get("aten.bmm.default");
  const Values bargs{Tensor::zeros({2, 3, 25}, DType::Float32),
                     Tensor::zeros({2, 25, 5}, DType::Float32)};
  EXPECT_DOUBLE_EQ(bmm.compare.tol_scale(bargs), 5.0);
  EXPECT_DOUBLE_EQ(bmm.run_cost(bargs, bmm.run_ref(bargs)).flops, 2.0 * 2 * 3 * 5 * 25);
}

TEST(Matmul, BaddbmmValuesBroadcastAndBetaZero) {
  std::vector<double> v1, v2;
  for (int i = 0; i < 24; ++i) v1.push_back(i / 5.0 - 2);
  for (int i = 0; i < 16; ++i) v2.push_back(i / 3.0 - 2);
  const Tensor b1 = tensor(v1, {2, 3, 4}, DType::Float64),
               b2 = tensor(v2, {2, 4, 2}, DType::Float64);
  // Expected values from torch: aten.baddbmm(self=[0.5, -1], b1, b2, beta=0.5, alpha=2).
  const Tensor r = call("aten.baddbmm.default", {tensor({0.5, -1.0}, {2}, DType::Float64), b1, b2,
                                                 Value(0.5), Value(int64_t{2})})[0]
                       .tensor();
  ASSERT_EQ(r.shape(), Shape({2, 3, 2}));
  const std::vector<double> want{15.183333333333334,
                                 9.9,
                                 8.783333333333333,
                                 5.633333333333333,
                                 2.383333333333333,
                                 1.3666666666666665,
                                 10.916666666666666,
                                 12.033333333333331,
                                 21.583333333333336,
                                 24.83333333333333,
                                 32.25,
                                 37.633333333333326};
  for (int64_t i = 0; i < 12; ++i) EXPECT_NEAR(r.get(i), want[i], 1e-12);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor self = tensor({nan}, {1}, DType::Float32);
  const Tensor z = call("aten.baddbmm.default", {self, Tensor::full({2, 2, 3}, 1.0, DType::Float32),
                                                 Tensor::full({2, 3, 2}, 1.0, DType::Float32),
                                                 Value(int64_t{0}), Value(int64_t{1})})[0]
                       .tensor();
  for (int64_t i = 0; i < z.numel(); ++i) EXPECT_EQ(z.get(i), 3.0);
  // An empty inner dim gives beta * self.
  const Tensor e =
      call("aten.baddbmm.default",
           {tensor({1, 2}, {2}, DType::Float32), Tensor::zeros({2, 2, 0}, DType::Float32),
            Tensor::zeros({2, 0, 2}, DType::Float32), Value(3.0), Value(int64_t{1})})[0]
          .tensor();
  EXPECT_EQ(e.get(3), 6.0);
}

TEST(Matmul, BaddbmmErrors) {
  const Tensor b1 = Tensor::zeros({2, 3, 5}, DType::Float32),
               b2 = Tensor::zeros({2, 5, 6}, DType::Float32);
  EXPECT_EQ(op_error_of([&] {
              call("aten.baddbmm.default",
                   {Tensor::zeros({3, 6}, DType::Float64), b1, b2, Value(1.0), Value(1.0)});
            }),
            "Input dtypes must be the same, got: input double, batch1: float, batch2: float");
  EXPECT_NE(op_error_of([&] {
              call("aten.baddbmm.default",
                   {Tensor::zeros({2, 4}, DType::Float32), b1, b2, Value(1.0), Value(1.0)});
            }),
            "");
  EXPECT_NE(op_error_of([&] {
              call("aten.baddbmm.default",
                   {Tensor::zeros({3, 6}, DType::Float32), b1,
                    Tensor::zeros({2, 4, 6}, DType::Float32), Value(1.0), Value(1.0)});
            }),
            "");
  const OpDef& op = matmul_ops().get("aten.baddbmm.default");
  EXPECT_GE(op.samples(SampleContext{false}).size(), 8u);
  const Values args{Tensor::zeros({3, 6}, DType::Float32),
                    Tensor::zeros({2, 3, 25}, DType::Float32),
                    Tensor::zeros({2, 25, 6}, DType::Float32), Value(1.0), Value(1.0)};
  EXPECT_DOUBLE_EQ(op.compare.tol_scale(args), 5.0);
  EXPECT_DOUBLE_EQ(op.run_cost(args, op.run_ref(args)).flops, 2.0 * 2 * 3 * 6 * 25);
}

// Every matmul sample (baddbmm's included) materialises and raises exactly when labelled so.
TEST(Matmul, SamplesMaterialiseAndRaiseAsLabelled) { nntest::check_samples(matmul_ops()); }

}  // namespace
}  // namespace crucible
