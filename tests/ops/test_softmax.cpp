// ATen semantics of _softmax and _log_softmax: rows sum to one, -inf and NaN rows, dims,
// 0-d and empty inputs, half_to_float as CUDA computes it, dtype errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "crucible/core/error.h"
#include "crucible/ops/op.h"
#include "ops/families.h"

namespace crucible {
namespace {

const OpRegistry& softmax_ops() {
  static const OpRegistry* r = [] {
    auto* reg = new OpRegistry();
    register_softmax_ops(*reg);
    return reg;
  }();
  return *r;
}

Tensor softmax(const Tensor& x, int64_t dim, bool log = false, bool half_to_float = false) {
  const char* name = log ? "aten._log_softmax.default" : "aten._softmax.default";
  return softmax_ops().get(name).run_ref({x, Value(dim), Value(half_to_float)})[0].tensor();
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

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(Softmax, RowsSumToOne) {
  const Tensor x = tensor({1, 2, 3, -1, 0, 1000}, {2, 3}, DType::Float64);
  Tensor y = softmax(x, -1);
  EXPECT_EQ(y.dtype(), DType::Float64);
  EXPECT_NEAR(y.get(0) + y.get(1) + y.get(2), 1.0, 1e-15);
  EXPECT_NEAR(y.get(2), 1.0 / (std::exp(-2.0) + std::exp(-1.0) + 1.0), 1e-15);
  EXPECT_EQ(y.get(5), 1.0);  // the max shift keeps 1000 finite
  EXPECT_EQ(y.get(3), 0.0);
  // Columns: dim 0.
  Tensor c = softmax(x, 0);
  EXPECT_NEAR(c.get(0) + c.get(3), 1.0, 1e-15);
}

TEST(Softmax, NegativeInfinityAndNaNRows) {
  const Tensor x = tensor({-kInf, -kInf, -kInf, 0, -kInf, 0, 1, kNaN, 2}, {3, 3}, DType::Float32);
  Tensor y = softmax(x, 1);
  for (int64_t i = 0; i < 3; ++i) EXPECT_TRUE(std::isnan(y.get(i))) << i;  // all -inf: NaN
  EXPECT_EQ(y.get(3), 0.5);
  EXPECT_EQ(y.get(4), 0.0);
  for (int64_t i = 6; i < 9; ++i) EXPECT_TRUE(std::isnan(y.get(i))) << i;  // NaN spreads
  Tensor l = softmax(x, 1, /*log=*/true);
  EXPECT_TRUE(std::isnan(l.get(0)));
  EXPECT_FLOAT_EQ(l.get(3), -std::log(2.0f));
  EXPECT_EQ(l.get(4), -kInf);
  // A +inf in the row: inf - inf = NaN.
  Tensor p = softmax(tensor({kInf, 1}, {2}, DType::Float32), 0);
  EXPECT_TRUE(std::isnan(p.get(0)));
  EXPECT_TRUE(std::isnan(p.get(1)));
}

TEST(Softmax, ZeroDimAndEmpty) {
  Tensor y = softmax(Tensor::scalar(3.0, DType::Float32), 0);
  EXPECT_EQ(y.dim(), 0);
  EXPECT_EQ(y.get(0), 1.0);
  EXPECT_EQ(softmax(Tensor::scalar(3.0, DType::Float32), -1, true).get(0), 0.0);
  EXPECT_EQ(softmax(Tensor::zeros({0, 4}, DType::Float16), 1).shape(), Shape({0, 4}));
  // An empty integer input returns before the dtype dispatch.
  EXPECT_EQ(softmax(Tensor::zeros({0, 4}, DType::Int64), 1).dtype(), DType::Int64);
}

TEST(Softmax, Errors) {
  const Tensor h = Tensor::zeros({2, 3}, DType::Float16);
  // half_to_float follows CUDA (the traces that use it were recorded there): f16 computes into
  // f32, every other dtype raises on every device.
  EXPECT_EQ(op_error_of([&] { softmax(h.to(DType::Float32), 1, false, true); }),
            "conversion is supported for Half type only");
  EXPECT_EQ(op_error_of([&] { softmax(h.to(DType::BFloat16), 1, false, true); }),
            "conversion is supported for Half type only");
  EXPECT_EQ(op_error_of([&] { softmax(h, 2); }),
            "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
  EXPECT_EQ(op_error_of([&] {
              softmax(Tensor::zeros({2, 3}, DType::Int64), 1);
            }),
            "\"softmax_lastdim_kernel_impl\" not implemented for 'Long'");
  EXPECT_EQ(op_error_of([&] {
              softmax(Tensor::zeros({2, 3}, DType::Int32), 0, true);
            }),
            "\"log_softmax_kernel_impl\" not implemented for 'Int'");
}

TEST(Softmax, HalfRoundsOnce) {
  Tensor y = softmax(tensor({0, 1, 2}, {3}, DType::BFloat16), 0);
  EXPECT_EQ(y.dtype(), DType::BFloat16);
  const double e0 = 1.0 / (1.0 + std::exp(1.0) + std::exp(2.0));
  EXPECT_EQ(y.get(0), static_cast<double>(BFloat16(e0)));
}

TEST(Softmax, ToleranceGrowsWithRowLength) {
  const OpDef& op = softmax_ops().get("aten._softmax.default");
  EXPECT_DOUBLE_EQ(op.compare.tol_scale(
                       {Tensor::zeros({3, 64}, DType::Float32), Value(int64_t{-1}), Value(false)}),
                   8.0);
}

}  // namespace
TEST(Softmax, HalfToFloatAsCuda) {
  Tensor h = Tensor::empty({2, 3}, DType::Float16);
  const double v[] = {0.5, -1.0, 2.0, 0.0, 0.25, -0.75};
  for (int64_t i = 0; i < 6; ++i) h.set(i, v[i]);
  const Tensor y = softmax(h, 1, false, true);
  EXPECT_EQ(y.dtype(), DType::Float32);
  const Tensor ref32 = softmax(h.to(DType::Float32), 1);
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(y.get(i), ref32.get(i)) << i;
  EXPECT_EQ(softmax(h, 1, true, true).dtype(), DType::Float32);
}

}  // namespace crucible
