// ATen semantics of grid_sampler_2d and its backward: every interpolation and padding mode with
// align_corners both ways, grad_input and grad_grid. Expected values came from torch (f64).
#include <gtest/gtest.h>

#include <cmath>

#include "nn_test_util.h"
#include "ops/families.h"

namespace crucible {
namespace {

using nntest::expect_values;
using nntest::op_error_of;
using nntest::tensor;

const OpRegistry& ops() {
  static const OpRegistry& r = nntest::registry(register_grid_sampler_ops);
  return r;
}

Tensor gin() {
  std::vector<double> v;
  for (int i = 0; i < 12; ++i) v.push_back((i * 0.9 - 4) * (i * 0.9 - 4) / 7);
  return tensor(v, {1, 1, 3, 4});
}
Tensor grid() {
  return tensor({-1.1, 0.3, 0.2, -0.7, 0.95, 1.2, 0.0, 0.0, -0.45, 0.6, 1.5, -1.3}, {1, 2, 3, 2});
}

Values fwd(int64_t m, int64_t p, bool ac) {
  return ops().get("aten.grid_sampler_2d.default").run_ref({gin(), grid(), m, p, ac});
}

TEST(GridSampler, Forward) {
  expect_values(fwd(0, 0, false)[0], {0.20125714285714286, 0.7215928571428573, 0.5967428571428565,
                                      0.15785714285714292, 1.8264571428571432, 0.0});
  expect_values(fwd(1, 1, true)[0], {0.022857142857142847, 0.6914285714285715, 4.972857142857143,
                                     0.28000000000000014, 2.4014285714285712, 0.24142857142857135});
  expect_values(fwd(2, 2, false)[0], {0.34930544017856996, 0.7876236571428595, 5.751166857142856,
                                      0.11446428571428582, 1.7424399314285712, 0.3976207589285706});
  expect_values(fwd(0, 2, true)[0], {0.4984428571428573, 0.6487428571428573, 4.038207142857142,
                                     0.15785714285714292, 1.3556928571428573, 0.5249285714285715});
}

Values bwd(int64_t m, int64_t p) {
  std::vector<double> g;
  for (int i = 0; i < 6; ++i) g.push_back((i - 2) / 3.0);
  return ops()
      .get("aten.grid_sampler_2d_backward.default")
      .run_ref(
          {tensor(g, {1, 1, 2, 3}), gin(), grid(), m, p, false, std::vector<bool>{true, true}});
}

TEST(GridSampler, Backward) {
  const Values a = bwd(0, 0);
  expect_values(a[0],
                {0.0, -0.03166666666666669, -0.285, 0.0, -0.08333333333333326, 0.2066666666666666,
                 0.16666666666666666, 0.0, 0.15000000000000002, 0.3600000000000001, 0.0, 0.0});
  expect_values(a[1], {-0.8944761904761909, -0.4319999999999997, 0.4315714285714286,
                       -0.3797857142857143, 0.0, 0.0, 0.16285714285714295, 1.4142857142857141,
                       1.1279999999999997, 1.9954285714285716, 0.0, 0.0});
  const Values c = bwd(2, 2);
  expect_values(
      c[0], {0.07936650000000035, -0.1416869270833332, 0.2775156874999999, 0.5387839062499999,
             -0.5163471874999997, 0.31402994791666705, 0.1819969791666663, -0.049783906250000697,
             -0.10501931250000063, 0.48724031250000005, -0.06609600000000002, 0.0});
  expect_values(
      c[1], {0.2072841428571441, -1.7988716249999999, 0.49324242857142864, 0.18134742857142933, 0.0,
             0.0, 0.12214285714285728, 0.7328571428571425, 1.153948114285717, 1.9163334857142835,
             0.8187991071428589, -0.139941964285715});
  const Values r = bwd(0, 2);
  expect_values(r[0], {0.0, -0.03333333333333336, 0.20000000000000007, 0.5, -0.33999999999999997,
                       0.20666666666666653, 0.16666666666666666, 0.0, -0.06000000000000008,
                       0.36000000000000015, 0.0, 0.0});
  expect_values(r[1],
                {-0.0, -1.4400000000000002, 0.4542857142857143, 0.0, 0.0, 0.0, 0.16285714285714295,
                 1.4142857142857141, 1.128, 1.9954285714285716, 0.9000000000000004, 0.0});
  const Values b = bwd(0, 1);
  expect_values(b[0], {0.0, -0.03333333333333336, -0.29999999999999993, 1.0, -0.3399999999999999,
                       0.2066666666666666, 0.16666666666666666, 0.0, -0.06000000000000011,
                       0.3600000000000001, 0.0, 0.0});
}

TEST(GridSampler, Errors) {
  const OpDef& op = ops().get("aten.grid_sampler_2d.default");
  EXPECT_EQ(op_error_of([&] {
              op.run_ref({gin(), grid().to(DType::Float32), int64_t{0}, int64_t{0}, false});
            }),
            "grid_sampler(): expected input and grid to have same dtype, but input has Double and "
            "grid has Float");
  EXPECT_NE(op_error_of([&] {
              op.run_ref({gin(), tensor({0, 0, 0}, {1, 1, 1, 3}), int64_t{0}, int64_t{0}, false});
            }),
            "");
  EXPECT_EQ(op_error_of([&] {
              op.run_ref({gin().to(DType::BFloat16), grid().to(DType::BFloat16), int64_t{0},
                          int64_t{0}, false});
            }),
            "\"grid_sampler_2d_cpu\" not implemented for 'BFloat16'");
}

// f16 is computed as CUDA computes it (the f16 calls of real models come from CUDA; ATen's CPU
// kernel has none): the f32 result of the same (f16-exact) values, rounded to f16.
TEST(GridSampler, HalfAsCuda) {
  const OpDef& op = ops().get("aten.grid_sampler_2d.default");
  const Tensor h = op.run_ref({gin().to(DType::Float16), grid().to(DType::Float16), int64_t{0},
                               int64_t{0}, false})[0]
                       .tensor();
  const Tensor f =
      op.run_ref({gin().to(DType::Float16).to(DType::Float32),
                  grid().to(DType::Float16).to(DType::Float32), int64_t{0}, int64_t{0}, false})[0]
          .tensor();
  EXPECT_EQ(h.dtype(), DType::Float16);
  ASSERT_EQ(h.shape(), f.shape());
  for (int64_t i = 0; i < h.numel(); ++i)
    EXPECT_NEAR(h.get(i), f.get(i), 1e-3 * (1 + std::fabs(f.get(i)))) << i;
}

TEST(GridSampler, SamplesMaterialiseAndRaiseAsLabelled) { nntest::check_samples(ops()); }

}  // namespace
}  // namespace crucible
