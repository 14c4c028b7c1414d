// ATen semantics of _cdist_forward and _pdist_forward: every p, batching, the matrix-product
// path of p = 2, empty inputs and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "crucible/core/error.h"
#include "crucible/ops/op.h"
#include "ops/families.h"

namespace crucible {
namespace {

const OpRegistry& distance_ops() {
  static const OpRegistry* r = [] {
    auto* reg = new OpRegistry();
    register_distance_ops(*reg);
    return reg;
  }();
  return *r;
}

Tensor tensor(const std::vector<double>& vals, const Shape& shape, DType t) {
  Tensor x = Tensor::empty(shape, t);
  for (size_t i = 0; i < vals.size(); ++i) x.set(static_cast<int64_t>(i), vals[i]);
  return x;
}

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double cdist(const Tensor& a, const Tensor& b, double p, Value mode = Value()) {
  return distance_ops()
      .get("aten._cdist_forward.default")
      .run_ref({a, b, Value(p), mode})[0]
      .tensor()
      .get(0);
}

TEST(Distance, CdistNorms) {
  const Tensor a = tensor({0, 0}, {1, 2}, DType::Float64);
  const Tensor b = tensor({3, 4}, {1, 2}, DType::Float64);
  EXPECT_DOUBLE_EQ(cdist(a, b, 2), 5);
  EXPECT_DOUBLE_EQ(cdist(a, b, 1), 7);
  EXPECT_DOUBLE_EQ(cdist(a, b, 0), 2);
  EXPECT_DOUBLE_EQ(cdist(a, b, kInf), 4);
  EXPECT_NEAR(cdist(a, b, 3), std::cbrt(91.0), 1e-12);
  EXPECT_NEAR(cdist(a, b, 2, Value(int64_t{1})), 5, 1e-12);  // matrix-product path
  // inf-norm ignores NaN differences; p = 0 propagates them.
  const Tensor n = tensor({5, kNaN}, {1, 2}, DType::Float32);
  const Tensor m = tensor({0, 1}, {1, 2}, DType::Float32);
  EXPECT_EQ(cdist(n, m, kInf), 5);
  EXPECT_TRUE(std::isnan(cdist(n, m, 0)));
  // inf - inf is NaN, except for the inf-norm where it is ignored.
  const Tensor i = tensor({0, kInf}, {1, 2}, DType::Float32);
  EXPECT_TRUE(std::isnan(cdist(i, i, 2)));
  EXPECT_EQ(cdist(i, i, kInf), 0);
}

TEST(Distance, CdistShapesAndErrors) {
  const OpDef& op = distance_ops().get("aten._cdist_forward.default");
  Tensor r = op.run_ref({Tensor::zeros({2, 4, 3}, DType::Float32),
                         Tensor::zeros({1, 5, 3}, DType::Float32), Value(2.0), Value()})[0]
                 .tensor();
  EXPECT_EQ(r.shape(), Shape({2, 4, 5}));
  Tensor z = op.run_ref({Tensor::zeros({2, 0}, DType::Float32),
                         Tensor::zeros({3, 0}, DType::Float32), Value(2.0), Value()})[0]
                 .tensor();
  EXPECT_EQ(z.shape(), Shape({2, 3}));
  EXPECT_THROW(op.run_ref({Tensor::zeros({3}, DType::Float32),
                           Tensor::zeros({2, 3}, DType::Float32), Value(2.0), Value()}),
               Error);
  EXPECT_THROW(op.run_ref({Tensor::zeros({4, 3}, DType::Float32),
                           Tensor::zeros({2, 3}, DType::Float32), Value(-1.0), Value()}),
               Error);
  EXPECT_THROW(op.run_ref({Tensor::zeros({4, 3}, DType::Float32),
                           Tensor::zeros({2, 3}, DType::Float32), Value(2.0), Value(int64_t{3})}),
               Error);
}

TEST(Distance, Pdist) {
  const OpDef& op = distance_ops().get("aten._pdist_forward.default");
  Tensor r =
      op.run_ref({tensor({0, 0, 3, 4, 0, 1}, {3, 2}, DType::Float64), Value(2.0)})[0].tensor();
  ASSERT_EQ(r.shape(), Shape({3}));
  EXPECT_DOUBLE_EQ(r.get(0), 5);
  EXPECT_DOUBLE_EQ(r.get(1), 1);
  EXPECT_DOUBLE_EQ(r.get(2), std::sqrt(18.0));
  EXPECT_EQ(op.run_ref({Tensor::zeros({1, 3}, DType::Float32), Value(2.0)})[0].tensor().numel(), 0);
  EXPECT_THROW(op.run_ref({Tensor::zeros({4, 3}, DType::Float32).transpose(0, 1), Value(2.0)}),
               Error);
}

}  // namespace
}  // namespace crucible
