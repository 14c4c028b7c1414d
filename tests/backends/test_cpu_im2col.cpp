// The cpu backend's sliding-block kernels against the reference: im2col with padding, stride
// and dilation (zeros where the window leaves the input), one-column blocks (the ConvBert 9x1
// kernel), channels-last input, col2im and im2col_backward from transposed columns, extreme
// values summed in f64, and the errors ATen raises.
#include <gtest/gtest.h>

#include <vector>

#include "test_cpu_nn_check.h"

namespace crucible::cpu_test {
namespace {

const DType f32 = DType::Float32;
using L = std::vector<int64_t>;

TEST(CpuIm2col, UnfoldGeometries) {
  const Tensor x = filled({2, 3, 7, 6}, f32);
  expect_matches_ref("aten.im2col.default",
                     {x, Value(L{3, 2}), Value(L{2, 1}), Value(L{1, 2}), Value(L{2, 3})});
  expect_matches_ref("aten.im2col.default", {filled({1, 4, 12, 1}, f32), Value(L{9, 1}),
                                             Value(L{1, 1}), Value(L{4, 0}), Value(L{1, 1})});
  expect_matches_ref("aten.im2col.default",
                     {filled({2, 5, 4, 3}, DType::BFloat16).permute({0, 3, 1, 2}), Value(L{2, 2}),
                      Value(L{1, 1}), Value(L{1, 1}), Value(L{2, 1})});
  expect_matches_ref("aten.im2col.default", {filled({3, 5, 4}, DType::Float64), Value(L{2, 2}),
                                             Value(L{1, 1}), Value(L{0, 1}), Value(L{1, 2})});
}

TEST(CpuIm2col, FoldSumsOverlaps) {
  // Columns of [1, 4, 12, 1] through a 9x1 kernel, stored transposed as the traces pass them.
  const Tensor cols = filled({1, 12, 36}, f32).transpose(1, 2);
  expect_matches_ref(
      "aten.im2col_backward.default",
      {cols, Value(L{12, 1}), Value(L{9, 1}), Value(L{1, 1}), Value(L{4, 0}), Value(L{1, 1})});
  expect_matches_ref("aten.col2im.default",
                     {filled({2, 18, 9}, f32), Value(L{5, 6}), Value(L{3, 3}), Value(L{1, 1}),
                      Value(L{1, 1}), Value(L{2, 2})});
  expect_matches_ref("aten.col2im.default",
                     {filled({12, 20}, DType::Float16), Value(L{5, 6}), Value(L{2, 3}),
                      Value(L{2, 1}), Value(L{1, 0}), Value(L{1, 1})});
  // 1 + 2^51 - 2^51 on one position: 1 in f64, 0 in f32. A 2x2 kernel with padding 1 over a
  // 1x1 output: kernel position (i, j) reaches it from block (1 - i, 1 - j).
  Tensor big = Tensor::zeros({1, 4, 4}, f32);
  big.set(0 * 4 + 3, 1.0);
  big.set(1 * 4 + 2, 2251799813685248.0);
  big.set(2 * 4 + 1, -2251799813685248.0);
  const Values out = expect_matches_ref(
      "aten.col2im.default",
      {big, Value(L{1, 1}), Value(L{2, 2}), Value(L{1, 1}), Value(L{1, 1}), Value(L{1, 1})});
  EXPECT_EQ(out[0].tensor().get(0), 1.0);
}

TEST(CpuIm2col, ErrorsRaise) {
  auto cpu = make_cpu_backend();
  const OpDef& op = OpRegistry::catalog().get("aten.im2col.default");
  EXPECT_THROW(cpu->run(op, {filled({1, 2, 4, 4}, DType::Int64), Value(L{2, 2}), Value(L{1, 1}),
                             Value(L{0, 0}), Value(L{1, 1})}),
               crucible::Error);
  EXPECT_THROW(cpu->run(op, {filled({1, 2, 2, 4}, f32), Value(L{3, 2}), Value(L{1, 1}),
                             Value(L{0, 0}), Value(L{1, 1})}),
               crucible::Error);
  EXPECT_THROW(cpu->run(OpRegistry::catalog().get("aten.col2im.default"),
                        {filled({2, 18, 11}, f32), Value(L{5, 6}), Value(L{2, 3}), Value(L{1, 1}),
                         Value(L{0, 0}), Value(L{1, 1})}),
               crucible::Error);
}

}  // namespace
}  // namespace crucible::cpu_test
