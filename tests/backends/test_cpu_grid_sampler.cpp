// The cpu backend's grid_sampler_2d and its backward: hand-computed samples (the centre of a
// 2x2 image, a corner with align_corners, nearest's half-to-even rounding) and every
// interpolation x padding x align_corners combination against the reference, with grid points
// outside the image (so that clipping and reflection happen), channels-last input, the
// output_mask of the backward, and f16.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "test_cpu_nn_check.h"

namespace crucible::cpu_test {
namespace {

const DType f32 = DType::Float32;

Tensor reals(const std::vector<double>& v, const Shape& shape, DType dt = f32) {
  Tensor t = Tensor::empty(shape, dt);
  for (size_t i = 0; i < v.size(); ++i) t.set(static_cast<int64_t>(i), v[i]);
  return t;
}

// A grid whose points reach 1.6 outside [-1, 1].
Tensor wide_grid(const Shape& shape, DType dt = f32) {
  Tensor g = filled(shape, dt, 5);
  for (int64_t i = 0; i < g.numel(); ++i) g.set(i, g.get(i) * 1.3);
  return g;
}

TEST(CpuGridSampler, SamplesByHand) {
  const Tensor img = reals({1, 2, 3, 4}, {1, 1, 2, 2});
  // The centre (0, 0), bilinear: the mean of the four pixels.
  Values out = expect_matches_ref("aten.grid_sampler_2d.default", {img, reals({0, 0}, {1, 1, 1, 2}),
                                                                   int64_t{0}, int64_t{0}, false});
  EXPECT_EQ(out[0].tensor().get(0), 2.5);
  // (1, -1) with align_corners is the top-right pixel's centre.
  out = expect_matches_ref("aten.grid_sampler_2d.default",
                           {img, reals({1, -1}, {1, 1, 1, 2}), int64_t{0}, int64_t{0}, true});
  EXPECT_EQ(out[0].tensor().get(0), 2.0);
  // Nearest at x = 0.5 in pixels (grid 0 without align_corners on a width-2 image... is 0.5):
  // half to even picks column 0; y likewise row 0.
  out = expect_matches_ref("aten.grid_sampler_2d.default",
                           {img, reals({0, 0}, {1, 1, 1, 2}), int64_t{1}, int64_t{0}, false});
  EXPECT_EQ(out[0].tensor().get(0), 1.0);
  // Zeros padding outside the image, border padding clamps to the edge.
  out = expect_matches_ref("aten.grid_sampler_2d.default",
                           {img, reals({5, 5}, {1, 1, 1, 2}), int64_t{0}, int64_t{0}, false});
  EXPECT_EQ(out[0].tensor().get(0), 0.0);
  out = expect_matches_ref("aten.grid_sampler_2d.default",
                           {img, reals({5, 5}, {1, 1, 1, 2}), int64_t{0}, int64_t{1}, false});
  EXPECT_EQ(out[0].tensor().get(0), 4.0);
}

TEST(CpuGridSampler, EveryModeForwardAndBackward) {
  const Tensor input = filled({2, 3, 5, 6}, f32);
  const Tensor grid = wide_grid({2, 4, 7, 2});
  const Tensor go = filled({2, 3, 4, 7}, f32, 4);
  for (int64_t interp : {0, 1, 2})
    for (int64_t pad : {0, 1, 2})
      for (bool align : {false, true}) {
        expect_matches_ref("aten.grid_sampler_2d.default", {input, grid, interp, pad, align});
        expect_matches_ref("aten.grid_sampler_2d_backward.default",
                           {go, input, grid, interp, pad, align, std::vector<bool>{true, true}});
      }
}

TEST(CpuGridSampler, FarAndNonFiniteGridPoints) {
  // Points far outside the image, infinite and NaN: zeros padding reads nothing there, border
  // and reflection clip (a NaN coordinate stays NaN and reads nothing).
  const double inf = std::numeric_limits<double>::infinity();
  const Tensor grid =
      reals({1e30, 0, -1e30, 0.5, 0, 3e19, inf, -inf, NAN, 0, 0.25, -0.75}, {1, 2, 3, 2});
  const Tensor input = filled({1, 2, 4, 5}, f32);
  const Tensor go = filled({1, 2, 2, 3}, f32, 3);
  for (int64_t interp : {0, 1, 2})
    for (int64_t pad : {0, 1, 2})
      for (bool align : {false, true}) {
        const Values out =
            expect_matches_ref("aten.grid_sampler_2d.default", {input, grid, interp, pad, align});
        if (pad == 0) {
          EXPECT_EQ(out[0].tensor().get(0), 0.0) << interp;  // (1e30, 0)
        }
        expect_matches_ref("aten.grid_sampler_2d_backward.default",
                           {go, input, grid, interp, pad, align, std::vector<bool>{true, true}});
      }
}

TEST(CpuGridSampler, LayoutsMasksAndDtypes) {
  const Tensor cl = filled({2, 4, 5, 3}, f32).permute({0, 3, 1, 2});  // channels-last [2,3,4,5]
  const Tensor grid = wide_grid({2, 3, 4, 2});
  expect_matches_ref("aten.grid_sampler_2d.default", {cl, grid, int64_t{2}, int64_t{2}, true});
  const Tensor go = filled({2, 3, 3, 4}, f32, 2);
  const Values only_grid = expect_matches_ref(
      "aten.grid_sampler_2d_backward.default",
      {go, cl, grid, int64_t{0}, int64_t{1}, false, std::vector<bool>{false, true}});
  EXPECT_FALSE(only_grid[0].is_tensor());
  expect_matches_ref("aten.grid_sampler_2d_backward.default",
                     {go, cl, grid, int64_t{2}, int64_t{2}, false, std::vector<bool>{true, false}});
  for (DType dt : {DType::Float16, DType::Float64}) {
    expect_matches_ref(
        "aten.grid_sampler_2d.default",
        {filled({1, 2, 4, 4}, dt), wide_grid({1, 3, 3, 2}, dt), int64_t{2}, int64_t{1}, true});
    expect_matches_ref(
        "aten.grid_sampler_2d_backward.default",
        {filled({1, 2, 3, 3}, dt, 2), filled({1, 2, 4, 4}, dt), wide_grid({1, 3, 3, 2}, dt),
         int64_t{0}, int64_t{2}, false, std::vector<bool>{true, true}});
  }
  // 1x1 input with reflection: every point reads the single pixel.
  const Values one = expect_matches_ref(
      "aten.grid_sampler_2d.default",
      {reals({7}, {1, 1, 1, 1}), wide_grid({1, 2, 3, 2}), int64_t{0}, int64_t{2}, false});
  EXPECT_EQ(one[0].tensor().get(0), 7.0);
}

}  // namespace
}  // namespace crucible::cpu_test
