// The cpu backend's attention kernels against the reference: several query blocks (L past the
// 64-row block), causal with L != S, masks, grouped-query heads, the strided layouts real
// models pass, every dtype, forward and backward; and the small export kernels (detach,
// empty_permuted, _native_batch_norm_legit_functional).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "test_cpu_nn_check.h"

namespace crucible::cpu_test {
namespace {

const char* const kFlash = "aten._scaled_dot_product_flash_attention_for_cpu.default";
const char* const kFlashBw = "aten._scaled_dot_product_flash_attention_for_cpu_backward.default";
const char* const kCudnn = "aten._scaled_dot_product_cudnn_attention.default";
const char* const kCudnnBw = "aten._scaled_dot_product_cudnn_attention_backward.default";
const char* const kFlashCuda = "aten._scaled_dot_product_flash_attention.default";
const char* const kFlashCudaBw = "aten._scaled_dot_product_flash_attention_backward.default";
const char* const kEff = "aten._scaled_dot_product_efficient_attention.default";
const char* const kEffBw = "aten._scaled_dot_product_efficient_attention_backward.default";

// [B, H, L, E] sliced out of a [B, L, 3 * H * E] projection.
Tensor qkv_slice(int64_t b, int64_t h, int64_t l, int64_t e, DType t, int seed) {
  const Tensor base = filled({b, l, 3 * h * e}, t, seed);
  return base.as_strided({b, h, l, e}, {l * 3 * h * e, e, 3 * h * e, 1}, 0);
}

// The forward's outputs, then the backward on them; both against the reference.
void check_flash(const Tensor& q, const Tensor& k, const Tensor& v, bool causal, const Value& mask,
                 const Value& scale) {
  const Values f = expect_matches_ref(kFlash, {q, k, v, 0.0, causal, mask, scale}, 3);
  const Tensor g = filled(f[0].tensor().shape(), q.dtype(), 9);
  expect_matches_ref(kFlashBw, {g, q, k, v, f[0], f[1], 0.0, causal, mask, scale}, 3);
}

TEST(CpuAttention, FlashCpuMatchesReference) {
  const DType f32 = DType::Float32;
  check_flash(filled({2, 3, 70, 16}, f32, 1), filled({2, 3, 70, 16}, f32, 2),
              filled({2, 3, 70, 16}, f32, 3), false, Value(), Value());
  check_flash(filled({1, 2, 130, 8}, f32, 1), filled({1, 2, 130, 8}, f32, 2),
              filled({1, 2, 130, 8}, f32, 3), true, Value(), 0.3);
  // L < S and L > S, causal (top-left), across blocks.
  check_flash(filled({1, 2, 40, 8}, f32, 1), filled({1, 2, 90, 8}, f32, 2),
              filled({1, 2, 90, 8}, f32, 3), true, Value(), Value());
  check_flash(filled({1, 2, 90, 8}, f32, 1), filled({1, 2, 40, 8}, f32, 2),
              filled({1, 2, 40, 8}, f32, 3), true, Value(), Value());
  // Masks: 2-d f32, 4-d broadcast with causal.
  check_flash(filled({2, 2, 65, 8}, f32, 1), filled({2, 2, 33, 8}, f32, 2),
              filled({2, 2, 33, 8}, f32, 3), false, filled({65, 33}, f32, 4), Value());
  check_flash(filled({2, 2, 20, 8}, f32, 1), filled({2, 2, 20, 8}, f32, 2),
              filled({2, 2, 20, 8}, f32, 3), true, filled({2, 1, 20, 20}, f32, 4), 0.5);
  // The traced layout, every dtype.
  for (DType t : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64}) {
    check_flash(qkv_slice(1, 4, 96, 16, t, 1), qkv_slice(1, 4, 96, 16, t, 2),
                qkv_slice(1, 4, 96, 16, t, 3), true, Value(), 0.25);
  }
}

TEST(CpuAttention, FlashCpuLayoutsAndEmpty) {
  const DType f32 = DType::Float32;
  const Values f =
      expect_matches_ref(kFlash, {filled({1, 3, 5, 4}, f32, 1), filled({1, 3, 5, 4}, f32, 2),
                                  filled({1, 3, 5, 4}, f32, 3), 0.0, false, Value(), Value()});
  EXPECT_EQ(f[0].tensor().strides(), (Shape{60, 4, 12, 1}));
  EXPECT_EQ(f[1].tensor().strides(), (Shape{15, 1, 3}));
  const Values e =
      expect_matches_ref(kFlash, {filled({1, 3, 0, 4}, f32, 1), filled({1, 3, 5, 4}, f32, 2),
                                  filled({1, 3, 5, 4}, f32, 3), 0.0, true, Value(), Value()});
  EXPECT_EQ(e[0].tensor().numel(), 0);
}

TEST(CpuAttention, FlashCpuRaisesAtensErrors) {
  const Tensor x = filled({1, 2, 3, 4}, DType::Float32, 1);
  auto cpu = make_cpu_backend();
  try {
    cpu->run(OpRegistry::catalog().get(kFlash), {x, x, x, 0.5, false, Value(), Value()});
    ADD_FAILURE() << "dropout_p 0.5 computed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Currently do not support dropout > 0"),
              std::string::npos);
  }
}

TEST(CpuAttention, CudnnMatchesReference) {
  for (DType t : {DType::Float16, DType::BFloat16, DType::Float32}) {
    // GPT-2-like slices, causal; grouped-query heads (8 query heads over 2 key/value heads).
    for (const auto& [hq, hk] : std::vector<std::pair<int64_t, int64_t>>{{4, 4}, {8, 2}}) {
      const Tensor q = qkv_slice(1, hq, 80, 16, t, 1), k = qkv_slice(1, hk, 80, 16, t, 2),
                   v = qkv_slice(1, hk, 80, 16, t, 3);
      const Values f =
          expect_matches_ref(kCudnn, {q, k, v, Value(), true, 0.0, true, false, 0.25}, 3);
      EXPECT_EQ(f[1].tensor().shape(), (Shape{1, hq, 80, 1}));
      EXPECT_EQ(f[4].to_int(), 80);
      const Tensor g = filled(f[0].tensor().shape(), t, 9);
      expect_matches_ref(
          kCudnnBw,
          {g, q, k, v, f[0], f[1], Tensor::zeros({}, DType::Int64), Tensor::zeros({}, DType::Int64),
           Value(), Value(), Value(), int64_t{80}, int64_t{80}, 0.0, true, 0.25},
          3);
    }
  }
  // An additive bias, not causal.
  const DType h = DType::Float16;
  expect_matches_ref(kCudnn, {filled({2, 2, 33, 8}, h, 1), filled({2, 2, 17, 8}, h, 2),
                              filled({2, 2, 17, 8}, h, 3), filled({1, 1, 33, 17}, h, 4), true, 0.0,
                              false, false, Value()});
}

// FlashAttention: bottom-right causal across query blocks (L > S leaves rows that see no key,
// logsumexp +inf), grouped-query heads, the traced layout.
TEST(CpuAttention, FlashCudaVariantMatchesReference) {
  const std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t>> shapes = {
      {4, 4, 80, 80}, {8, 2, 70, 130}, {4, 2, 130, 40}};
  for (DType t : {DType::Float16, DType::BFloat16}) {
    for (const auto& [hq, hk, l, s] : shapes) {
      const Tensor q = qkv_slice(1, hq, l, 16, t, 1), k = qkv_slice(1, hk, s, 16, t, 2),
                   v = qkv_slice(1, hk, s, 16, t, 3);
      const Values f = expect_matches_ref(kFlashCuda, {q, k, v, 0.0, true, false, 0.25}, 3);
      EXPECT_EQ(std::isinf(f[1].tensor().get(0)), l > s);  // row 0 sees no key when L > S
      EXPECT_EQ(f[0].tensor().strides(), (Shape{l * hq * 16, 16, hq * 16, 1}));
      const Tensor g = filled(f[0].tensor().shape(), t, 9);
      expect_matches_ref(
          kFlashCudaBw,
          {g, q, k, v, f[0], f[1], Value(), Value(), l, s, 0.0, true, f[6], f[7], 0.25}, 3);
    }
  }
}

// Memory-efficient attention: the padded logsumexp, an aligned bias and its gradient, f32.
TEST(CpuAttention, EfficientMatchesReference) {
  for (DType t : {DType::Float16, DType::Float32}) {
    const Tensor q = qkv_slice(2, 2, 70, 8, t, 1), k = qkv_slice(2, 2, 45, 8, t, 2),
                 v = qkv_slice(2, 2, 45, 8, t, 3);
    const Tensor bias = filled({2, 2, 70, 48}, t, 4).slice(3, 0, 45);
    for (bool causal : {false, true}) {
      const Values f = expect_matches_ref(kEff, {q, k, v, bias, true, 0.0, causal, 0.3}, 3);
      EXPECT_EQ(f[1].tensor().shape(), (Shape{2, 2, 96}));
      EXPECT_TRUE(std::isinf(f[1].tensor().get(95)));
      const Tensor g = filled(f[0].tensor().shape(), t, 9);
      const Values b =
          expect_matches_ref(kEffBw,
                             {g, q, k, v, bias, f[0], f[1], f[2], f[3], 0.0,
                              Value(std::vector<bool>{true, true, true, true}), causal, 0.3},
                             3);
      EXPECT_EQ(b[3].tensor().strides(), (Shape{2 * 70 * 48, 70 * 48, 48, 1}));
    }
    const Values n = expect_matches_ref(kEff, {q, k, v, Value(), false, 0.0, true, Value()}, 3);
    EXPECT_EQ(n[1].tensor().numel(), 0);
  }
}

TEST(CpuAttention, DetachSharesStorage) {
  const Tensor x = filled({3, 4}, DType::Int32, 1).transpose(0, 1);
  auto cpu = make_cpu_backend();
  const Tensor d = cpu->run(OpRegistry::catalog().get("aten.detach.default"), {x})[0].tensor();
  EXPECT_TRUE(d.shares_storage(x));
  EXPECT_EQ(d.strides(), x.strides());
}

TEST(CpuAttention, EmptyPermutedHasThePermutedStrides) {
  auto cpu = make_cpu_backend();
  const Tensor t =
      cpu->run(OpRegistry::catalog().get("aten.empty_permuted.default"),
               {Value(std::vector<int64_t>{2, 3, 4, 5}), Value(std::vector<int64_t>{0, 2, 3, 1}),
                Value(DType::Float16), Value(), Value(), Value()})[0]
          .tensor();
  EXPECT_EQ(t.shape(), (Shape{2, 3, 4, 5}));
  EXPECT_EQ(t.strides(), (Shape{60, 1, 15, 3}));
  EXPECT_EQ(t.dtype(), DType::Float16);
}

TEST(CpuAttention, BatchNormFunctionalMatchesReferenceAndLeavesInputs) {
  const char* const name = "aten._native_batch_norm_legit_functional.default";
  for (bool training : {true, false}) {
    const Tensor x = filled({4, 3, 5, 2}, DType::Float32, 1);
    const Tensor rm = filled({3}, DType::Float32, 2);
    Tensor rv = filled({3}, DType::Float32, 3);
    for (int64_t i = 0; i < 3; ++i) rv.set(i, std::fabs(rv.get(i)) + 0.5);
    const Tensor rm0 = rm.clone(), rv0 = rv.clone();
    const Values out =
        expect_matches_ref(name, {x, filled({3}, DType::Float32, 4), filled({3}, DType::Float32, 5),
                                  rm, rv, training, 0.1, 1e-5});
    ASSERT_EQ(out.size(), 5u);
    for (int64_t i = 0; i < 3; ++i) {
      EXPECT_EQ(rm.get(i), rm0.get(i));
      EXPECT_EQ(rv.get(i), rv0.get(i));
    }
  }
}

}  // namespace
}  // namespace crucible::cpu_test
