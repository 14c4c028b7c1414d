// The cpu backend's convolutions against the reference: groups, stride, padding, dilation,
// 1x1 (no im2col), depthwise, transposed, 1-d and 3-d, the backward's three outputs, integers.
#include <gtest/gtest.h>

#include <vector>

#include "test_cpu_nn_check.h"

namespace crucible::cpu_test {
namespace {

const DType f32 = DType::Float32;
using L = std::vector<int64_t>;

Values conv_args(const Tensor& x, const Tensor& w, const Tensor& b, L s, L p, L d, bool tr, L op,
                 int64_t g) {
  return {x,         w,         b.defined() ? Value(b) : Value(),
          Value(s),  Value(p),  Value(d),
          Value(tr), Value(op), Value(g)};
}

TEST(CpuConv, ForwardGeometriesMatchReference) {
  const char* op = "aten.convolution.default";
  // 3x3 with bias, batch of 3 (split over threads).
  expect_matches_ref(op, conv_args(filled({3, 4, 9, 8}, f32), filled({6, 4, 3, 3}, f32, 2),
                                   filled({6}, f32, 3), {1}, {1}, {1}, false, {0}, 1));
  // stride, dilation, asymmetric padding, groups = 2.
  expect_matches_ref(op, conv_args(filled({2, 4, 11, 9}, f32), filled({6, 2, 3, 2}, f32, 2),
                                   Tensor(), {2, 1}, {1, 0}, {1, 2}, false, {0, 0}, 2));
  // 1x1 (direct GEMM), depthwise, 1-d and 3-d.
  expect_matches_ref(op, conv_args(filled({2, 5, 4, 3}, f32), filled({7, 5, 1, 1}, f32, 2),
                                   filled({7}, f32), {1}, {0}, {1}, false, {0}, 1));
  expect_matches_ref(op, conv_args(filled({2, 6, 7, 7}, f32), filled({6, 1, 3, 3}, f32, 2),
                                   Tensor(), {2}, {1}, {1}, false, {0}, 6));
  expect_matches_ref(op, conv_args(filled({2, 3, 13}, f32), filled({4, 3, 3}, f32, 2), Tensor(),
                                   {2}, {2}, {2}, false, {0}, 1));
  expect_matches_ref(op, conv_args(filled({1, 2, 4, 5, 4}, f32), filled({3, 2, 2, 3, 2}, f32, 2),
                                   filled({3}, f32), {1, 2, 1}, {1, 0, 1}, {1}, false, {0}, 1));
  // Channels-last input (converted) and bf16.
  expect_matches_ref(
      op, conv_args(filled({2, 5, 6, 3}, f32).permute({0, 3, 1, 2}), filled({4, 3, 3, 3}, f32, 2),
                    Tensor(), {1}, {1}, {1}, false, {0}, 1));
  expect_matches_ref(
      op, conv_args(filled({2, 3, 6, 7}, DType::BFloat16), filled({4, 3, 3, 3}, DType::BFloat16, 2),
                    Tensor(), {1}, {0}, {1}, false, {0}, 1));
}

TEST(CpuConv, TransposedMatchesReference) {
  const char* op = "aten.convolution.default";
  expect_matches_ref(op, conv_args(filled({2, 4, 3, 4}, f32), filled({4, 3, 3, 3}, f32, 2),
                                   filled({3}, f32), {2}, {1}, {1}, true, {1}, 1));
  expect_matches_ref(op, conv_args(filled({2, 4, 3, 3}, f32), filled({4, 2, 2, 3}, f32, 2),
                                   Tensor(), {2, 1}, {0}, {1, 2}, true, {1, 1}, 2));
  // 1x1, stride 1 but output_padding (dilation 2): output larger than input, no direct path.
  expect_matches_ref(op, conv_args(filled({1, 3, 4, 4}, f32), filled({3, 2, 1, 1}, f32, 2),
                                   Tensor(), {1}, {0}, {2}, true, {1}, 1));
}

TEST(CpuConv, IntegerForwardIsExact) {
  Tensor x = Tensor::full({1, 2, 4, 4}, 100, DType::Int8),
         w = Tensor::full({1, 2, 3, 3}, 5, DType::Int8);
  const Values out = expect_matches_ref("aten.convolution.default",
                                        conv_args(x, w, Tensor(), {1}, {0}, {1}, false, {0}, 1));
  EXPECT_EQ(out[0].tensor().get_int(0), static_cast<int8_t>(100 * 5 * 18));
}

Values backward_args(const Tensor& go, const Tensor& x, const Tensor& w, L s, L p, L d, bool tr,
                     L op, int64_t g, std::vector<bool> mask) {
  return {go,        x,         w,        Value(L{w.size(0)}), Value(s), Value(p), Value(d),
          Value(tr), Value(op), Value(g), Value(mask)};
}

TEST(CpuConv, BackwardMatchesReference) {
  const char* op = "aten.convolution_backward.default";
  // [3, 4, 9, 8] * [6, 4, 3, 3], padding 1 -> [3, 6, 9, 8].
  expect_matches_ref(op, backward_args(filled({3, 6, 9, 8}, f32, 4), filled({3, 4, 9, 8}, f32),
                                       filled({6, 4, 3, 3}, f32, 2), {1}, {1}, {1}, false, {0}, 1,
                                       {true, true, true}));
  // groups 2, stride 2 -> [2, 6, 5, 4] from [2, 4, 11, 9] with [6, 2, 3, 3], padding 1.
  expect_matches_ref(op, backward_args(filled({2, 6, 6, 5}, f32, 4), filled({2, 4, 11, 9}, f32),
                                       filled({6, 2, 3, 3}, f32, 2), {2}, {1}, {1}, false, {0}, 2,
                                       {true, true, false}));
  // 1x1 and transposed (stride 2, padding 1, output_padding 1: [1, 4, 3, 4] -> [1, 3, 6, 8]).
  expect_matches_ref(op, backward_args(filled({2, 7, 4, 3}, f32, 4), filled({2, 5, 4, 3}, f32),
                                       filled({7, 5, 1, 1}, f32, 2), {1}, {0}, {1}, false, {0}, 1,
                                       {true, true, true}));
  expect_matches_ref(op, backward_args(filled({1, 3, 6, 8}, f32, 4), filled({1, 4, 3, 4}, f32),
                                       filled({4, 3, 3, 3}, f32, 2), {2}, {1}, {1}, true, {1}, 1,
                                       {true, true, true}));
}

TEST(CpuConv, BadArgumentsRaise) {
  auto cpu = make_cpu_backend();
  const OpDef& op = OpRegistry::catalog().get("aten.convolution.default");
  EXPECT_THROW(cpu->run(op, conv_args(filled({1, 3, 5, 5}, f32), filled({4, 2, 3, 3}, f32),
                                      Tensor(), {1}, {0}, {1}, false, {0}, 1)),
               crucible::Error);  // channels do not match
  EXPECT_THROW(cpu->run(op, conv_args(filled({1, 3, 2, 2}, f32), filled({4, 3, 3, 3}, f32),
                                      Tensor(), {1}, {0}, {1}, false, {0}, 1)),
               crucible::Error);  // kernel larger than the input
}

}  // namespace
}  // namespace crucible::cpu_test
