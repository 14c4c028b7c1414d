// The aten backend's compositions of ops libtorch 1.13 lacks (src/backends/aten/aten_compat.cpp):
// each against crucible's reference on a few cases (values, shapes, strides, views, running
// stats written or not), and the refusals (dropout with RNG state).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "crucible/backends/backend.h"
#include "crucible/core/error.h"
#include "crucible/ops/op.h"
#include "crucible/schema/schema.h"

namespace crucible {
namespace {

#ifdef CRUCIBLE_HAVE_ATEN

// Deterministic, irregular values (no two neighbours equal).
Tensor filled(const Shape& shape, DType dtype, double scale = 0.37, double shift = 0.0) {
  Tensor t = Tensor::empty(shape, dtype);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.set(i, std::sin(static_cast<double>(i) * scale + shift) * 1.5);
  return t;
}

Values call(Backend& b, const std::string& op, const Values& positional,
            const std::vector<std::pair<std::string, Value>>& keywords = {}) {
  const OpDef& def = OpRegistry::catalog().get(op);
  return b.run(def, bind_arguments(def.schema, positional, keywords));
}

void expect_close(const Tensor& got, const Tensor& want, double tol, const std::string& what) {
  ASSERT_TRUE(got.defined()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  EXPECT_EQ(got.strides(), want.strides()) << what;
  EXPECT_EQ(got.dtype(), want.dtype()) << what;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double w = want.get(i);
    const double g = got.get(i);
    if (std::isinf(w)) {
      EXPECT_EQ(g, w) << what << " element " << i;
    } else {
      EXPECT_NEAR(g, w, tol * (1.0 + std::abs(w))) << what << " element " << i;
    }
  }
}

void expect_all_close(const Values& got, const Values& want, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    const std::string name = what + " output " + std::to_string(i);
    if (want[i].is_tensor() && want[i].tensor().defined()) {
      ASSERT_TRUE(got[i].is_tensor()) << name;
      expect_close(got[i].tensor(), want[i].tensor(), tol, name);
    } else if (want[i].is_none()) {
      EXPECT_TRUE(got[i].is_none()) << name;
    } else {
      EXPECT_EQ(got[i].to_int(), want[i].to_int()) << name;
    }
  }
}

class AtenCompatTest : public ::testing::Test {
 protected:
  std::unique_ptr<Backend> aten = BackendRegistry::instance().create("aten");
  std::unique_ptr<Backend> ref = BackendRegistry::instance().create("ref");
};

TEST_F(AtenCompatTest, ComposedOpsAreSupported) {
  const auto& cat = OpRegistry::catalog();
  for (const char* name :
       {"aten.squeeze.dims", "aten._native_batch_norm_legit.default",
        "aten._native_batch_norm_legit.no_stats",
        "aten._native_batch_norm_legit_no_training.default",
        "aten._native_batch_norm_legit_functional.default", "aten.empty_permuted.default",
        "aten._scaled_dot_product_flash_attention_for_cpu.default",
        "aten._scaled_dot_product_flash_attention_for_cpu_backward.default",
        "aten._scaled_dot_product_cudnn_attention.default",
        "aten._scaled_dot_product_cudnn_attention_backward.default",
        "aten._scaled_dot_product_flash_attention.default",
        "aten._scaled_dot_product_flash_attention_backward.default",
        "aten._scaled_dot_product_efficient_attention.default",
        "aten._scaled_dot_product_efficient_attention_backward.default"}) {
    EXPECT_TRUE(aten->has_op(cat.get(name))) << name;
    EXPECT_FALSE(aten->supported_dtypes(cat.get(name)).empty()) << name;
  }
}

TEST_F(AtenCompatTest, SqueezeDimsIsAViewWithoutTheListedSizeOneDims) {
  const Tensor x = filled({1, 3, 1, 2, 1}, DType::Float32);
  const Values got =
      call(*aten, "aten.squeeze.dims", {Value(x), Value(std::vector<int64_t>{0, -1, 1, 2})});
  ASSERT_EQ(got.size(), 1u);
  const Tensor& g = got[0].tensor();
  EXPECT_EQ(g.shape(), (Shape{3, 2}));  // dim 1 (size 3) stays
  EXPECT_TRUE(g.shares_storage(x));
  const Values want =
      call(*ref, "aten.squeeze.dims", {Value(x), Value(std::vector<int64_t>{0, -1, 1, 2})});
  expect_close(g, want[0].tensor(), 0, "squeeze.dims");
  // A 0-d tensor takes dims 0 and -1 and stays 0-d; a repeated dim is ATen's error.
  const Tensor s = Tensor::scalar(2.5, DType::Float32);
  EXPECT_EQ(call(*aten, "aten.squeeze.dims", {Value(s), Value(std::vector<int64_t>{-1})})[0]
                .tensor()
                .dim(),
            0);
  EXPECT_THROW(call(*aten, "aten.squeeze.dims", {Value(x), Value(std::vector<int64_t>{0, 0})}),
               Error);
}

TEST_F(AtenCompatTest, BatchNormNoTrainingMatchesTheReference) {
  const Values args = {Value(filled({2, 3, 4}, DType::Float32)),
                       Value(filled({3}, DType::Float32, 0.9, 2.0)),
                       Value(filled({3}, DType::Float32, 0.4)),
                       Value(filled({3}, DType::Float32, 0.3)),
                       Value(Tensor::full({3}, 0.75, DType::Float32)),
                       Value(0.1),
                       Value(1e-5)};
  expect_all_close(call(*aten, "aten._native_batch_norm_legit_no_training.default", args),
                   call(*ref, "aten._native_batch_norm_legit_no_training.default", args), 1e-5,
                   "_native_batch_norm_legit_no_training");
}

TEST_F(AtenCompatTest, BatchNormFunctionalReturnsUpdatedStatsAndLeavesTheArguments) {
  for (bool training : {true, false}) {
    const Tensor mean = filled({3}, DType::Float32, 0.3);
    const Tensor var = Tensor::full({3}, 0.75, DType::Float32);
    const Values args = {Value(filled({4, 3, 2, 2}, DType::Float32)),
                         Value(filled({3}, DType::Float32, 0.9, 2.0)),
                         Value(),
                         Value(mean),
                         Value(var),
                         Value(training),
                         Value(0.2),
                         Value(1e-5)};
    const Values got = call(*aten, "aten._native_batch_norm_legit_functional.default", args);
    EXPECT_EQ(mean.get(1), filled({3}, DType::Float32, 0.3).get(1));
    EXPECT_EQ(var.get(2), 0.75);
    const std::string what = std::string("_native_batch_norm_legit_functional training=") +
                             (training ? "true" : "false");
    expect_all_close(got, call(*ref, "aten._native_batch_norm_legit_functional.default", args),
                     1e-5, what);
  }
}

TEST_F(AtenCompatTest, BatchNormLegitUpdatesTheRunningStatsInPlace) {
  const Tensor x = filled({5, 2, 3}, DType::Float64);
  const Tensor mean_a = filled({2}, DType::Float64, 0.3),
               var_a = Tensor::full({2}, 2.0, DType::Float64);
  const Tensor mean_r = mean_a.clone(), var_r = var_a.clone();
  auto args = [&](const Tensor& m, const Tensor& v) {
    return Values{Value(x), Value(),     Value(),    Value(m),
                  Value(v), Value(true), Value(0.1), Value(1e-5)};
  };
  expect_all_close(call(*aten, "aten._native_batch_norm_legit.default", args(mean_a, var_a)),
                   call(*ref, "aten._native_batch_norm_legit.default", args(mean_r, var_r)), 1e-12,
                   "_native_batch_norm_legit");
  expect_close(mean_a, mean_r, 1e-12, "running_mean");
  expect_close(var_a, var_r, 1e-12, "running_var");
  EXPECT_NE(mean_a.get(0), filled({2}, DType::Float64, 0.3).get(0));  // it was updated
  const Values no_stats = {Value(x), Value(), Value(), Value(true), Value(0.1), Value(1e-5)};
  expect_all_close(call(*aten, "aten._native_batch_norm_legit.no_stats", no_stats),
                   call(*ref, "aten._native_batch_norm_legit.no_stats", no_stats), 1e-12,
                   "_native_batch_norm_legit.no_stats");
}

TEST_F(AtenCompatTest, EmptyPermutedHasThePhysicalLayout) {
  const Values got =
      call(*aten, "aten.empty_permuted.default",
           {Value(std::vector<int64_t>{2, 3, 4, 5}), Value(std::vector<int64_t>{0, 2, 3, 1})},
           {{"dtype", Value(DType::Float16)}});
  const Tensor& t = got[0].tensor();
  EXPECT_EQ(t.shape(), (Shape{2, 3, 4, 5}));
  EXPECT_EQ(t.strides(), (Shape{60, 1, 15, 3}));  // channels last
  EXPECT_EQ(t.dtype(), DType::Float16);
  EXPECT_THROW(call(*aten, "aten.empty_permuted.default",
                    {Value(std::vector<int64_t>{2, 3}), Value(std::vector<int64_t>{0, 0})}),
               Error);
}

// Grouped-query attention (2 query heads per key head), causal, with a mask.
struct AttentionCase {
  Tensor q = filled({2, 4, 3, 8}, DType::Float32, 0.37);
  Tensor k = filled({2, 2, 5, 8}, DType::Float32, 0.53, 1.0);
  Tensor v = filled({2, 2, 5, 6}, DType::Float32, 0.29, 2.0);
  Tensor mask = filled({3, 5}, DType::Float32, 0.71, 0.5);
};

TEST_F(AtenCompatTest, FlashAttentionForCpuForwardAndBackward) {
  AttentionCase c;
  c.v = filled({2, 2, 5, 8}, DType::Float32, 0.29, 2.0);  // the CPU flash op needs E == Ev
  for (bool causal : {false, true}) {
    const std::string what = std::string("flash_attention_for_cpu causal=") + (causal ? "1" : "0");
    const Values fwd_args = {Value(c.q), Value(c.k), Value(c.v), Value(0.0), Value(causal)};
    const std::vector<std::pair<std::string, Value>> kw = {{"attn_mask", Value(c.mask)},
                                                           {"scale", Value(0.3)}};
    const Values got =
        call(*aten, "aten._scaled_dot_product_flash_attention_for_cpu.default", fwd_args, kw);
    const Values want =
        call(*ref, "aten._scaled_dot_product_flash_attention_for_cpu.default", fwd_args, kw);
    expect_all_close(got, want, 1e-5, what);
    const Tensor grad = filled(want[0].tensor().shape(), DType::Float32, 0.61, 3.0);
    const Values bwd_args = {Value(grad), Value(c.q), Value(c.k), Value(c.v),
                             want[0],     want[1],    Value(0.0), Value(causal)};
    expect_all_close(
        call(*aten, "aten._scaled_dot_product_flash_attention_for_cpu_backward.default", bwd_args,
             kw),
        call(*ref, "aten._scaled_dot_product_flash_attention_for_cpu_backward.default", bwd_args,
             kw),
        1e-5, what + " backward");
  }
}

TEST_F(AtenCompatTest, CudnnAttentionForwardAndBackward) {
  const AttentionCase c;
  const Values fwd_args = {Value(c.q),
                           Value(c.k.slice(1, 0, 1).expand({2, 4, 5, 8})),
                           Value(c.v.slice(1, 0, 1).expand({2, 4, 5, 6})),
                           Value(c.mask),
                           Value(true),
                           Value(0.0),
                           Value(true)};
  const Values got = call(*aten, "aten._scaled_dot_product_cudnn_attention.default", fwd_args);
  const Values want = call(*ref, "aten._scaled_dot_product_cudnn_attention.default", fwd_args);
  expect_all_close(got, want, 1e-5, "cudnn_attention");
  const Tensor grad = filled(want[0].tensor().shape(), DType::Float32, 0.61, 3.0);
  Values bwd_args = {Value(grad), fwd_args[0], fwd_args[1], fwd_args[2],   want[0],
                     want[1],     want[6],     want[7],     Value(c.mask), Value(),
                     Value(),     want[4],     want[5],     Value(0.0),    Value(true)};
  expect_all_close(
      call(*aten, "aten._scaled_dot_product_cudnn_attention_backward.default", bwd_args),
      call(*ref, "aten._scaled_dot_product_cudnn_attention_backward.default", bwd_args), 1e-5,
      "cudnn_attention backward");
  // Dropout draws from the device's RNG state: refused, not approximated.
  Values dropout = fwd_args;
  dropout[5] = Value(0.25);
  try {
    call(*aten, "aten._scaled_dot_product_cudnn_attention.default", dropout);
    ADD_FAILURE() << "dropout_p > 0 ran";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported) << e.what();
  }
}

// FlashAttention's composition: bottom-right causal (L 7 > S 3 leaves rows that see no key,
// logsumexp +inf), grouped-query heads, f16; the backward on its outputs. Values as the
// reference's within f16 rounding; the RNG outputs of the same shapes and dtypes.
TEST_F(AtenCompatTest, FlashAttentionForwardAndBackward) {
  const DType h = DType::Float16;
  const Tensor q = filled({1, 4, 7, 8}, h, 0.37), k = filled({1, 2, 3, 8}, h, 0.23, 1.0),
               v = filled({1, 2, 3, 8}, h, 0.29, 2.0);
  const Values fwd = {Value(q), Value(k), Value(v), Value(0.0), Value(true)};
  const Values got = call(*aten, "aten._scaled_dot_product_flash_attention.default", fwd);
  const Values want = call(*ref, "aten._scaled_dot_product_flash_attention.default", fwd);
  ASSERT_EQ(got.size(), 9u);
  for (size_t i : {0, 1}) expect_close(got[i].tensor(), want[i].tensor(), 2e-3, "flash");
  EXPECT_EQ(got[1].tensor().get(0), std::numeric_limits<double>::infinity());
  for (size_t i : {6, 7, 8}) {
    EXPECT_EQ(got[i].tensor().shape(), want[i].tensor().shape()) << i;
    EXPECT_EQ(got[i].tensor().dtype(), want[i].tensor().dtype()) << i;
  }
  EXPECT_TRUE(got[2].is_none() && got[3].is_none());
  EXPECT_EQ(got[4].to_int(), 7);
  EXPECT_EQ(got[5].to_int(), 3);
  const Tensor grad = filled({1, 4, 7, 8}, h, 0.61, 3.0);
  const Values bwd = {Value(grad), Value(q), Value(k), Value(v),   want[0],     want[1], Value(),
                      Value(),     want[4],  want[5],  Value(0.0), Value(true), want[6], want[7]};
  expect_all_close(call(*aten, "aten._scaled_dot_product_flash_attention_backward.default", bwd),
                   call(*ref, "aten._scaled_dot_product_flash_attention_backward.default", bwd),
                   4e-3, "flash backward");
}

// Memory-efficient attention's composition: an aligned bias, top-left causal, the padded
// logsumexp; the backward's grad_bias.
TEST_F(AtenCompatTest, EfficientAttentionForwardAndBackward) {
  const DType f = DType::Float32;
  const Tensor q = filled({2, 2, 5, 4}, f, 0.37), k = filled({2, 2, 6, 4}, f, 0.23, 1.0),
               v = filled({2, 2, 6, 8}, f, 0.29, 2.0);
  const Tensor bias = filled({2, 2, 5, 8}, f, 0.41, 0.5).slice(3, 0, 6);
  const Values fwd = {Value(q),    Value(k),   Value(v),   Value(bias),
                      Value(true), Value(0.0), Value(true)};
  const Values got = call(*aten, "aten._scaled_dot_product_efficient_attention.default", fwd);
  const Values want = call(*ref, "aten._scaled_dot_product_efficient_attention.default", fwd);
  ASSERT_EQ(got.size(), 4u);
  for (size_t i : {0, 1}) expect_close(got[i].tensor(), want[i].tensor(), 1e-5, "efficient");
  EXPECT_EQ(got[1].tensor().shape(), (Shape{2, 2, 32}));
  const Tensor grad = filled({2, 2, 5, 8}, f, 0.61, 3.0);
  const Values bwd = {Value(grad),
                      Value(q),
                      Value(k),
                      Value(v),
                      Value(bias),
                      want[0],
                      want[1],
                      want[2],
                      want[3],
                      Value(0.0),
                      Value(std::vector<bool>{true, true, true, true}),
                      Value(true)};
  const Values gb =
      call(*aten, "aten._scaled_dot_product_efficient_attention_backward.default", bwd);
  expect_all_close(gb,
                   call(*ref, "aten._scaled_dot_product_efficient_attention_backward.default", bwd),
                   1e-5, "efficient backward");
  ASSERT_TRUE(gb[3].is_tensor());
}

#endif

}  // namespace
}  // namespace crucible
