// ATen semantics of native_layer_norm: values, mean/rstd shapes and dtypes (CPU: the input's
// dtype, f32 for mixed reduced-precision input with f32 parameters), optional weight/bias,
// shape and dtype errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "crucible/core/error.h"
#include "crucible/ops/op.h"
#include "ops/families.h"

namespace crucible {
namespace {

const OpRegistry& norm_ops() {
  static const OpRegistry* r = [] {
    auto* reg = new OpRegistry();
    register_norm_ops(*reg);
    return reg;
  }();
  return *r;
}

Values layer_norm(const Tensor& x, std::vector<int64_t> shape, Value w, Value b, double eps) {
  return norm_ops()
      .get("aten.native_layer_norm.default")
      .run_ref({x, Value(std::move(shape)), w, b, eps});
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

TEST(LayerNorm, ValuesMeanAndRstd) {
  const Tensor x = tensor({1, 2, 3, 4, 2, 2, 2, 2}, {2, 4}, DType::Float64);
  const Values r = layer_norm(x, {4}, Value(), Value(), 0.0 + 1e-5);
  ASSERT_EQ(r.size(), 3u);
  const Tensor &y = r[0].tensor(), &mean = r[1].tensor(), &rstd = r[2].tensor();
  EXPECT_EQ(mean.shape(), Shape({2, 1}));
  EXPECT_EQ(rstd.shape(), Shape({2, 1}));
  EXPECT_DOUBLE_EQ(mean.get(0), 2.5);
  EXPECT_DOUBLE_EQ(rstd.get(0), 1.0 / std::sqrt(1.25 + 1e-5));
  EXPECT_DOUBLE_EQ(y.get(0), -1.5 / std::sqrt(1.25 + 1e-5));
  // A constant row: variance 0, output 0, rstd = 1/sqrt(eps).
  EXPECT_DOUBLE_EQ(y.get(5), 0.0);
  EXPECT_DOUBLE_EQ(rstd.get(1), 1.0 / std::sqrt(1e-5));
}

TEST(LayerNorm, WeightAndBias) {
  const Tensor x = tensor({0, 2}, {1, 2}, DType::Float32);
  const Tensor w = tensor({2, 3}, {2}, DType::Float32);
  const Tensor b = tensor({10, 20}, {2}, DType::Float32);
  const Tensor y = layer_norm(x, {2}, w, b, 0.0)[0].tensor();
  EXPECT_FLOAT_EQ(y.get(0), 8.0f);   // -1 * 2 + 10
  EXPECT_FLOAT_EQ(y.get(1), 23.0f);  // +1 * 3 + 20
}

TEST(LayerNorm, StatShapesWithSeveralNormalizedDims) {
  const Tensor x = Tensor::zeros({2, 3, 4, 5}, DType::Float32);
  const Values r = layer_norm(x, {4, 5}, Value(), Value(), 1e-5);
  EXPECT_EQ(r[0].tensor().shape(), Shape({2, 3, 4, 5}));
  EXPECT_EQ(r[1].tensor().shape(), Shape({2, 3, 1, 1}));
  EXPECT_EQ(r[2].tensor().shape(), Shape({2, 3, 1, 1}));
  const Values one = layer_norm(Tensor::zeros({6}, DType::Float32), {6}, Value(), Value(), 1e-5);
  EXPECT_EQ(one[1].tensor().shape(), Shape({1}));
}

TEST(LayerNorm, StatDtypes) {
  const Tensor h = Tensor::zeros({2, 4}, DType::Float16);
  const Values same = layer_norm(h, {4}, Tensor::zeros({4}, DType::Float16), Value(), 1e-5);
  EXPECT_EQ(same[0].tensor().dtype(), DType::Float16);
  EXPECT_EQ(same[1].tensor().dtype(), DType::Float16);
  const Tensor bf = Tensor::zeros({2, 4}, DType::BFloat16);
  const Values mixed = layer_norm(bf, {4}, Tensor::zeros({4}, DType::Float32),
                                  Tensor::zeros({4}, DType::Float32), 1e-5);
  EXPECT_EQ(mixed[0].tensor().dtype(), DType::BFloat16);
  EXPECT_EQ(mixed[1].tensor().dtype(), DType::Float32);
  EXPECT_EQ(mixed[2].tensor().dtype(), DType::Float32);
}

TEST(LayerNorm, Errors) {
  const Tensor x = Tensor::zeros({4, 8}, DType::Float32);
  EXPECT_EQ(op_error_of([&] { layer_norm(x, {7}, Value(), Value(), 1e-5); }),
            "Given normalized_shape=[7], expected input with shape [*, 7], but got input of "
            "size[4, 8]");
  EXPECT_NE(op_error_of([&] { layer_norm(x, {}, Value(), Value(), 1e-5); }), "");
  EXPECT_EQ(
      op_error_of([&] { layer_norm(x, {8}, Tensor::zeros({7}, DType::Float32), Value(), 1e-5); }),
      "Expected weight to be of same shape as normalized_shape, but got weight of shape [7] "
      "and normalized_shape = [8]");
  EXPECT_NE(op_error_of([&] {
              layer_norm(Tensor::zeros({4, 8}, DType::Int32), {8}, Value(), Value(), 1e-5);
            }),
            "");
  EXPECT_EQ(
      op_error_of([&] { layer_norm(x, {8}, Tensor::zeros({8}, DType::Float16), Value(), 1e-5); }),
      "mixed dtype (CPU): expect parameter to have scalar type of Float");
}

TEST(LayerNorm, ToleranceGrowsWithNormalizedSize) {
  const OpDef& op = norm_ops().get("aten.native_layer_norm.default");
  const Values args{Tensor::zeros({2, 4, 16}, DType::Float32), Value(std::vector<int64_t>{4, 16}),
                    Value(), Value(), Value(1e-5)};
  EXPECT_DOUBLE_EQ(op.compare.tol_scale(args), 8.0);
}

}  // namespace
}  // namespace crucible
