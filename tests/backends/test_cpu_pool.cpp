// The cpu backend's pooling against the reference: max with indices (padding, dilation,
// ceil_mode), average (count_include_pad, divisor_override), adaptive, and the backwards.
#include <gtest/gtest.h>

#include <vector>

#include "test_cpu_nn_check.h"

namespace crucible::cpu_test {
namespace {

const DType f32 = DType::Float32;
using L = std::vector<int64_t>;

TEST(CpuPool, MaxPoolWithIndices) {
  const Tensor x = filled({2, 3, 9, 8}, f32);
  const Values out = expect_matches_ref(
      "aten.max_pool2d_with_indices.default",
      {x, Value(L{3, 3}), Value(L{2, 2}), Value(L{1, 1}), Value(L{1, 1}), Value(false)});
  // Every index points at the max of its window inside its own plane.
  const Tensor& v = out[0].tensor();
  const Tensor& idx = out[1].tensor();
  for (int64_t i = 0; i < v.numel(); ++i)
    ASSERT_EQ(x.get((i / (v.size(2) * v.size(3))) * 72 + idx.get_int(i)), v.get(i));
  expect_matches_ref("aten.max_pool2d_with_indices.default",
                     {filled({1, 2, 10, 7}, f32), Value(L{3, 2}), Value(L{2, 3}), Value(L{1, 0}),
                      Value(L{2, 1}), Value(true)});
  expect_matches_ref("aten.max_pool2d_with_indices_backward.default",
                     {filled({2, 3, 5, 4}, f32, 2), x, Value(L{3, 3}), Value(L{2, 2}),
                      Value(L{1, 1}), Value(L{1, 1}), Value(false), out[1].tensor()});
}

TEST(CpuPool, AvgPoolAndBackward) {
  const Tensor x = filled({2, 3, 7, 6}, f32);
  for (bool cip : {true, false}) {
    expect_matches_ref(
        "aten.avg_pool2d.default",
        {x, Value(L{3, 3}), Value(L{2, 2}), Value(L{1, 1}), Value(true), Value(cip), Value()});
    expect_matches_ref("aten.avg_pool2d_backward.default",
                       {filled({2, 3, 4, 4}, f32, 2), x, Value(L{3, 3}), Value(L{2, 2}),
                        Value(L{1, 1}), Value(true), Value(cip), Value()});
  }
  expect_matches_ref("aten.avg_pool2d.default", {x, Value(L{2, 2}), Value(L{}), Value(L{0, 0}),
                                                 Value(false), Value(true), Value(int64_t{3})});
}

TEST(CpuPool, AdaptiveAverage) {
  const Tensor x = filled({2, 3, 7, 5}, DType::BFloat16);
  expect_matches_ref("aten._adaptive_avg_pool2d.default", {x, Value(L{3, 4})});
  expect_matches_ref("aten._adaptive_avg_pool2d_backward.default",
                     {filled({2, 3, 3, 4}, DType::BFloat16, 2), x});
  const Values out = expect_matches_ref("aten._adaptive_avg_pool2d.default",
                                        {filled({1, 2, 4, 4}, f32), Value(L{1, 1})});
  double mean = 0;
  const Tensor x1 = filled({1, 2, 4, 4}, f32);
  for (int64_t i = 0; i < 16; ++i) mean += x1.get(i) / 16;
  EXPECT_NEAR(out[0].tensor().get(0), mean, 1e-6);
}

}  // namespace
}  // namespace crucible::cpu_test
