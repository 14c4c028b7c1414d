// The cpu backend's upsampling against the reference: nearest (u8 copies, scale factors that
// are not integers), bilinear up and down with and without align_corners, bicubic, the nearest
// and bilinear backward, channels-last inputs, and infinities (taken through the f64 path in
// the reference's order: a zero-weight tap on an infinity gives NaN).
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <vector>

#include "test_cpu_nn_check.h"

namespace crucible::cpu_test {
namespace {

const DType f32 = DType::Float32;
using L = std::vector<int64_t>;
using F = std::vector<double>;

TEST(CpuUpsample, NearestForwardAndBackward) {
  const Tensor x = filled({2, 3, 5, 7}, f32);
  expect_matches_ref("aten.upsample_nearest2d.vec", {x, Value(L{9, 16}), Value()});
  expect_matches_ref("aten.upsample_nearest2d.vec", {x, Value(), Value(F{1.7, 2.5})});
  expect_matches_ref("aten.upsample_nearest2d.default",
                     {filled({1, 2, 4, 6}, DType::UInt8), Value(L{8, 12}), Value(), Value()});
  expect_matches_ref(
      "aten.upsample_nearest2d_backward.vec",
      {filled({2, 3, 20, 28}, f32), Value(), Value(L{2, 3, 5, 7}), Value(F{4.0, 4.0})});
  expect_matches_ref(
      "aten.upsample_nearest2d_backward.default",
      {filled({2, 3, 9, 16}, f32), Value(L{9, 16}), Value(L{2, 3, 5, 7}), Value(), Value()});
}

TEST(CpuUpsample, BilinearAndBicubicBothWays) {
  const Tensor x = filled({2, 3, 6, 9}, f32);
  for (bool align : {false, true}) {
    for (const L& size : {L{13, 20}, L{4, 5}, L{6, 9}, L{1, 1}}) {
      expect_matches_ref("aten.upsample_bilinear2d.vec", {x, Value(size), Value(align), Value()});
      expect_matches_ref("aten.upsample_bicubic2d.vec", {x, Value(size), Value(align), Value()});
      Shape g{2, 3, size[0], size[1]};
      expect_matches_ref(
          "aten.upsample_bilinear2d_backward.vec",
          {filled(g, f32, 2), Value(size), Value(L{2, 3, 6, 9}), Value(align), Value()});
    }
  }
  expect_matches_ref("aten.upsample_bilinear2d.default",
                     {x, Value(L{12, 18}), Value(false), Value(2.0), Value(2.0)});
  // Channels-last input.
  const Tensor cl = filled({2, 5, 6, 3}, f32).permute({0, 3, 1, 2});
  expect_matches_ref("aten.upsample_bilinear2d.vec", {cl, Value(L{11, 7}), Value(false), Value()});
}

TEST(CpuUpsample, InfinitiesFollowTheReference) {
  Tensor x = filled({1, 1, 3, 3}, f32);
  x.set(4, std::numeric_limits<double>::infinity());
  // Same size along W: one tap there; along H two taps, one of weight 0 on the infinity.
  const Values out =
      expect_matches_ref("aten.upsample_bilinear2d.vec", {x, Value(L{5, 3}), Value(true), Value()});
  EXPECT_TRUE(std::isnan(out[0].tensor().get(1)) || std::isinf(out[0].tensor().get(1)));
  Tensor g = filled({1, 1, 6, 6}, f32);
  g.set(7, -std::numeric_limits<double>::infinity());
  expect_matches_ref("aten.upsample_bilinear2d_backward.vec",
                     {g, Value(L{6, 6}), Value(L{1, 1, 3, 3}), Value(false), Value()});
}

TEST(CpuUpsample, ErrorsRaise) {
  auto cpu = make_cpu_backend();
  const OpDef& op = OpRegistry::catalog().get("aten.upsample_bilinear2d.vec");
  EXPECT_THROW(
      cpu->run(op, {filled({1, 2, 4, 4}, f32), Value(L{8, 8}), Value(false), Value(F{2.0, 2.0})}),
      crucible::Error);
  EXPECT_THROW(
      cpu->run(op, {filled({1, 2, 4, 4}, DType::Int32), Value(L{8, 8}), Value(false), Value()}),
      crucible::Error);
  EXPECT_THROW(cpu->run(OpRegistry::catalog().get("aten.upsample_nearest2d_backward.vec"),
                        {filled({1, 2, 8, 9}, f32), Value(L{8, 8}), Value(L{1, 2, 4, 4}), Value()}),
               crucible::Error);
}

}  // namespace
}  // namespace crucible::cpu_test
