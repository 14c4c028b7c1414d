// ATen semantics of the attention ops: softmax(q k^T * scale + mask) v with logsumexp on
// hand-computed cases (causal top-left, the CPU flash layouts), the backward against finite
// differences of the forward, grouped-query heads (cuDNN) equal to repeated key/value heads,
// and ATen's errors. Also detach, empty_permuted and _native_batch_norm_legit_functional.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "nn_test_util.h"

namespace crucible {
namespace {

using nntest::expect_values;
using nntest::op_error_of;
using nntest::tensor;

const OpDef& op(const std::string& name) { return OpRegistry::catalog().get(name); }

const char* const kFlash = "aten._scaled_dot_product_flash_attention_for_cpu.default";
const char* const kFlashBw = "aten._scaled_dot_product_flash_attention_for_cpu_backward.default";
const char* const kCudnn = "aten._scaled_dot_product_cudnn_attention.default";

// Deterministic values in [-1.5, 1.5).
Tensor filled(const Shape& shape, DType dt, int seed) {
  Tensor t = Tensor::empty(shape, dt);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.set(i, std::fmod(static_cast<double>((i + 3) * (seed * 29 + 7) % 211) / 70.0, 3.0) - 1.5);
  return t;
}

Values flash_args(const Tensor& q, const Tensor& k, const Tensor& v, bool causal, double scale) {
  return {q, k, v, 0.0, causal, Value(), scale};
}

TEST(Attention, FlashCpuHandComputed) {
  // One head, q = [1, 0], k = [1, 2], v = [10, 20], E = 1, scale 1.
  const Tensor q = tensor({1, 0}, {1, 1, 2, 1}), k = tensor({1, 2}, {1, 1, 2, 1}),
               v = tensor({10, 20}, {1, 1, 2, 1});
  const double e = std::exp(1.0);
  const Values r = op(kFlash).run_ref(flash_args(q, k, v, false, 1.0));
  expect_values(r[0], {10 / (1 + e) + 20 * e / (1 + e), 15});
  expect_values(r[1], {std::log(e + e * e), std::log(2.0)});
  // Causal (top-left): query 0 sees key 0 only.
  const Values c = op(kFlash).run_ref(flash_args(q, k, v, true, 1.0));
  expect_values(c[0], {10, 15});
  expect_values(c[1], {1, std::log(2.0)});
  // Causal with more keys than queries keeps the top-left alignment: query 0 sees key 0.
  const Tensor q1 = tensor({1}, {1, 1, 1, 1});
  const Values c1 = op(kFlash).run_ref(flash_args(q1, k, v, true, 1.0));
  expect_values(c1[0], {10});
}

TEST(Attention, FlashCpuDefaultScaleMaskAndLayouts) {
  // E = 4: scale 1/2; a mask of -inf on key 1 leaves key 0 only.
  const Tensor q = filled({1, 2, 3, 4}, DType::Float64, 1),
               k = filled({1, 2, 2, 4}, DType::Float64, 2),
               v = filled({1, 2, 2, 4}, DType::Float64, 3);
  Tensor mask = Tensor::zeros({3, 2}, DType::Float32);
  for (int64_t i = 0; i < 3; ++i) mask.set(i * 2 + 1, -INFINITY);
  const Values r = op(kFlash).run_ref({q, k, v, 0.0, false, mask, Value()});
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t e = 0; e < 4; ++e)
        EXPECT_DOUBLE_EQ(r[0].tensor().get((h * 3 + i) * 4 + e), v.get(h * 8 + e));
  // out laid out [B, L, H, E]; logsumexp [B, H, L] with strides (L*H, 1, H), f64 for f64.
  EXPECT_EQ(r[0].tensor().strides(), (Shape{24, 4, 8, 1}));
  EXPECT_EQ(r[1].tensor().strides(), (Shape{6, 1, 2}));
  EXPECT_EQ(r[1].tensor().dtype(), DType::Float64);
  // lse = q.k0 / 2 (one key left).
  double dot = 0;
  for (int64_t e = 0; e < 4; ++e) dot += q.get(e) * k.get(e);
  EXPECT_NEAR(r[1].tensor().get(0), dot / 2, 1e-12);
  // f16 input: f32 logsumexp.
  const Values h = op(kFlash).run_ref(
      flash_args(q.to(DType::Float16), k.to(DType::Float16), v.to(DType::Float16), true, 0.3));
  EXPECT_EQ(h[0].tensor().dtype(), DType::Float16);
  EXPECT_EQ(h[1].tensor().dtype(), DType::Float32);
}

// The backward's gradients are the derivatives of sum(grad_out * out) (finite differences).
TEST(Attention, FlashCpuBackwardMatchesFiniteDifferences) {
  for (bool causal : {false, true}) {
    const Tensor q = filled({1, 2, 3, 4}, DType::Float64, 1),
                 k = filled({1, 2, 5, 4}, DType::Float64, 2),
                 v = filled({1, 2, 5, 4}, DType::Float64, 3),
                 g = filled({1, 2, 3, 4}, DType::Float64, 4);
    const Tensor mask = filled({3, 5}, DType::Float64, 5);
    auto loss = [&](const Tensor& qq, const Tensor& kk, const Tensor& vv) {
      const Tensor o = op(kFlash).run_ref({qq, kk, vv, 0.0, causal, mask, 0.7})[0].tensor();
      double s = 0;
      for (int64_t i = 0; i < o.numel(); ++i) s += o.get(i) * g.get(i);
      return s;
    };
    const Values f = op(kFlash).run_ref({q, k, v, 0.0, causal, mask, 0.7});
    const Values grads =
        op(kFlashBw).run_ref({g, q, k, v, f[0].tensor(), f[1].tensor(), 0.0, causal, mask, 0.7});
    const Tensor* ins[3] = {&q, &k, &v};
    for (int w = 0; w < 3; ++w) {
      for (int64_t i = 0; i < ins[w]->numel(); ++i) {
        const double h = 1e-6;
        Tensor plus = ins[w]->clone(), minus = ins[w]->clone();
        plus.set(i, plus.get(i) + h);
        minus.set(i, minus.get(i) - h);
        auto at = [&](const Tensor& t) {
          return loss(w == 0 ? t : q, w == 1 ? t : k, w == 2 ? t : v);
        };
        const double num = (at(plus) - at(minus)) / (2 * h);
        EXPECT_NEAR(grads[w].tensor().get(i), num, 1e-7) << "input " << w << " element " << i;
      }
    }
  }
}

TEST(Attention, CudnnGroupedQueryHeadsEqualRepeatedHeads) {
  const DType f16 = DType::Float16;
  const Tensor q = filled({1, 4, 3, 8}, f16, 1), k = filled({1, 2, 3, 8}, f16, 2),
               v = filled({1, 2, 3, 8}, f16, 3);
  // k and v with each head repeated twice: heads 0, 0, 1, 1.
  Tensor kr = Tensor::empty({1, 4, 3, 8}, f16), vr = Tensor::empty({1, 4, 3, 8}, f16);
  for (int64_t h = 0; h < 4; ++h)
    for (int64_t i = 0; i < 24; ++i) {
      kr.set(h * 24 + i, k.get((h / 2) * 24 + i));
      vr.set(h * 24 + i, v.get((h / 2) * 24 + i));
    }
  const Values g = op(kCudnn).run_ref({q, k, v, Value(), true, 0.0, true, false, 0.125});
  const Values r = op(kFlash).run_ref(flash_args(q, kr, vr, true, 0.125));
  for (int64_t i = 0; i < r[0].tensor().numel(); ++i)
    EXPECT_EQ(g[0].tensor().get(i), r[0].tensor().get(i)) << i;
  // logsumexp [B, H, L, 1] f32; undefined cum_seq / debug mask; max_q, max_k; 0-d i64 seeds.
  EXPECT_EQ(g[1].tensor().shape(), (Shape{1, 4, 3, 1}));
  for (int64_t i = 0; i < 12; ++i) EXPECT_EQ(g[1].tensor().get(i), r[1].tensor().get(i));
  EXPECT_TRUE(g[2].is_none() && g[3].is_none() && g[8].is_none());
  EXPECT_EQ(g[4].to_int(), 3);
  EXPECT_EQ(g[5].to_int(), 3);
  EXPECT_EQ(g[6].tensor().shape(), Shape{});
  EXPECT_EQ(g[6].tensor().dtype(), DType::Int64);
}

TEST(Attention, CudnnOutputFollowsTheQueryLayout) {
  const DType bf = DType::BFloat16;
  // q sliced out of a [1, 5, 3 * 2 * 4] projection: dims ordered B, L, H, E in memory.
  const Tensor base = filled({1, 5, 24}, bf, 1);
  const Tensor q = base.as_strided({1, 2, 5, 4}, {120, 4, 24, 1}, 0);
  const Values r = op(kCudnn).run_ref({q, q, q, Value(), false, 0.0, false, false, Value()});
  EXPECT_EQ(r[0].tensor().strides(), (Shape{40, 4, 8, 1}));
  EXPECT_TRUE(r[1].is_none());  // compute_log_sumexp false
}

TEST(Attention, Errors) {
  const Tensor x = filled({1, 2, 3, 4}, DType::Float32, 1);
  EXPECT_NE(op_error_of([&] {
              op(kFlash).run_ref({x, x, x, 0.1, false, Value(), Value()});
            }).find("Currently do not support dropout > 0"),
            std::string::npos);
  const Tensor x3 = filled({2, 3, 4}, DType::Float32, 1);
  EXPECT_NE(op_error_of([&] {
              op(kFlash).run_ref({x3, x3, x3, 0.0, false, Value(), Value()});
            }).find("Accept only 4 dims inputs shape of {B, H, T, K}"),
            std::string::npos);
  const Tensor i = filled({1, 2, 3, 4}, DType::Int64, 1);
  EXPECT_NE(op_error_of([&] {
              op(kFlash).run_ref({i, i, i, 0.0, false, Value(), Value()});
            }).find("Expected data type in FP32, FP64, BF16, FP16, but got Long instead."),
            std::string::npos);
  const Tensor bmask = Tensor::zeros({3, 3}, DType::Bool);
  EXPECT_NE(op_error_of([&] {
              op(kFlash).run_ref({x, x, x, 0.0, false, bmask, Value()});
            }).find("Attention mask is the same data type as query"),
            std::string::npos);
  // cuDNN: floating inputs only; key/value heads must divide the query heads.
  EXPECT_FALSE(op_error_of([&] {
                 op(kCudnn).run_ref({i, i, i, Value(), true, 0.0, false, false, Value()});
               }).empty());
  const Tensor q3 = filled({1, 3, 3, 4}, DType::Float16, 1),
               k2 = filled({1, 2, 3, 4}, DType::Float16, 2);
  EXPECT_NE(
      op_error_of([&] {
        op(kCudnn).run_ref({q3, k2, k2, Value(), true, 0.0, false, false, Value()});
      })
          .find("cuDNN Frontend error: For group-query attention, number of heads for key and "
                "query must be a factor of number of heads for query"),
      std::string::npos);
}

TEST(Attention, DetachIsAViewOfSelf) {
  const Tensor x = filled({3, 4}, DType::Float32, 1).transpose(0, 1);
  const Tensor d = op("aten.detach.default").run_ref({x})[0].tensor();
  EXPECT_TRUE(d.shares_storage(x));
  EXPECT_EQ(d.strides(), x.strides());
  EXPECT_EQ(d.offset(), x.offset());
}

TEST(Attention, EmptyPermutedStrides) {
  const OpDef& e = op("aten.empty_permuted.default");
  auto call = [&](const Shape& size, const Shape& layout) {
    return e.run_ref({Value(size), Value(layout), Value(), Value(), Value(), Value()})[0].tensor();
  };
  EXPECT_EQ(call({2, 3, 4, 5}, {0, 2, 3, 1}).strides(), (Shape{60, 1, 15, 3}));
  EXPECT_EQ(call({2, 3, 4}, {2, 1, 0}).strides(), (Shape{1, 2, 6}));
  EXPECT_EQ(call({1, 12, 128, 64}, {0, 2, 1, 3}).strides(), (Shape{98304, 64, 768, 1}));
  EXPECT_EQ(call({2, 3}, {1, 0}).dtype(), DType::Float32);
  EXPECT_NE(op_error_of([&] {
              call({2, 3}, {1, 1});
            }).find("Duplicate dim not allowed"),
            std::string::npos);
  EXPECT_NE(op_error_of([&] {
              call({2, 3, 4}, {0, 1});
            }).find("len(size) = 3 is not equal to len(physical_layout) = 2"),
            std::string::npos);
  EXPECT_NE(
      op_error_of([&] {
        call({2, 3}, {0, 2});
      }).find("Dimension out of range (expected to be between 0 and 1, but got 2 at index 1)"),
      std::string::npos);
}

TEST(Attention, BatchNormFunctionalReturnsUpdatedStatsWithoutMutating) {
  const OpDef& bn = op("aten._native_batch_norm_legit_functional.default");
  // x [2, 1]: values 1, 3: mean 2, biased var 1, unbiased var 2.
  const Tensor x = tensor({1, 3}, {2, 1}), rm = tensor({0}, {1}), rv = tensor({1}, {1});
  const Values r = bn.run_ref({x, Value(), Value(), rm, rv, true, 0.1, 0.0});
  ASSERT_EQ(r.size(), 5u);
  expect_values(r[0], {-1, 1});
  expect_values(r[1], {2});
  expect_values(r[2], {1});
  expect_values(r[3], {0.2});
  expect_values(r[4], {1.1});
  expect_values(Value(rm), {0});  // inputs unchanged
  expect_values(Value(rv), {1});
  // Evaluation: the running statistics come back unchanged, as copies.
  const Values e = bn.run_ref({x, Value(), Value(), rm, rv, false, 0.1, 0.0});
  expect_values(e[3], {0});
  expect_values(e[4], {1});
  EXPECT_FALSE(e[3].tensor().shares_storage(rm));
}

}  // namespace
}  // namespace crucible
