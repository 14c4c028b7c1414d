// The cpu backend's norms against the reference: layer norm, group norm, batch norm (training
// updates the running statistics in place; evaluation), their backwards, mixed f16/bf16 input
// with f32 parameters, and rows with non-finite values.
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "test_cpu_nn_check.h"

namespace crucible::cpu_test {
namespace {

const DType f32 = DType::Float32;
using L = std::vector<int64_t>;

TEST(CpuNorm, LayerNormForwardAndBackward) {
  const Tensor x = filled({6, 5, 33}, f32);
  const Tensor w = filled({33}, f32, 2), b = filled({33}, f32, 3);
  const Values out =
      expect_matches_ref("aten.native_layer_norm.default", {x, Value(L{33}), w, b, Value(1e-5)});
  EXPECT_EQ(out[1].tensor().shape(), (Shape{6, 5, 1}));
  expect_matches_ref("aten.native_layer_norm.default",
                     {filled({4, 40}, DType::BFloat16), Value(L{40}), filled({40}, f32),
                      filled({40}, f32, 2), Value(1e-5)});
  expect_matches_ref("aten.native_layer_norm_backward.default",
                     {filled({6, 5, 33}, f32, 4), x, Value(L{33}), out[1].tensor(), out[2].tensor(),
                      w, b, Value(std::vector<bool>{true, true, true})});
  Tensor special = filled({3, 16}, f32);
  special.set(5, std::numeric_limits<double>::infinity());
  special.set(20, 3e38);
  expect_matches_ref("aten.native_layer_norm.default",
                     {special, Value(L{16}), Value(), Value(), Value(1e-5)});
}

TEST(CpuNorm, GroupNormForwardAndBackward) {
  const Tensor x = filled({3, 6, 4, 5}, f32);
  const Tensor w = filled({6}, f32, 2), b = filled({6}, f32, 3);
  const Values out = expect_matches_ref("aten.native_group_norm.default",
                                        {x, w, b, Value(int64_t{3}), Value(int64_t{6}),
                                         Value(int64_t{20}), Value(int64_t{3}), Value(1e-5)});
  expect_matches_ref("aten.native_group_norm_backward.default",
                     {filled({3, 6, 4, 5}, f32, 4), x, out[1].tensor(), out[2].tensor(), w,
                      Value(int64_t{3}), Value(int64_t{6}), Value(int64_t{20}), Value(int64_t{3}),
                      Value(std::vector<bool>{true, true, true})});
}

TEST(CpuNorm, BatchNormTrainingUpdatesRunningStats) {
  const Tensor x = filled({4, 3, 5, 2}, f32);
  Tensor rm = filled({3}, f32, 5), rv = Tensor::full({3}, 1.5, f32);
  const Values out = expect_matches_ref(
      "aten.native_batch_norm.default",
      {x, filled({3}, f32, 2), filled({3}, f32, 3), rm, rv, Value(true), Value(0.1), Value(1e-5)});
  // The running stats moved (the checks above compared them with the reference's).
  auto cpu = make_cpu_backend();
  Values args = deep_copy(
      {x, filled({3}, f32, 2), filled({3}, f32, 3), rm, rv, Value(true), Value(0.1), Value(1e-5)});
  cpu->run(OpRegistry::catalog().get("aten.native_batch_norm.default"), args);
  EXPECT_NE(args[4].tensor().get(0), 1.5);
  expect_matches_ref("aten.native_batch_norm.default",
                     {x, Value(), Value(), rm, rv, Value(false), Value(0.1), Value(1e-5)});
  expect_matches_ref(
      "aten.native_batch_norm_backward.default",
      {filled({4, 3, 5, 2}, f32, 4), x, filled({3}, f32, 2), rm, rv, out[1].tensor(),
       out[2].tensor(), Value(true), Value(1e-5), Value(std::vector<bool>{true, true, true})});
  expect_matches_ref(
      "aten.native_batch_norm_backward.default",
      {filled({4, 3, 5, 2}, f32, 4), x, filled({3}, f32, 2), rm, rv, Value(), Value(), Value(false),
       Value(1e-5), Value(std::vector<bool>{true, false, true})});
}

}  // namespace
}  // namespace crucible::cpu_test
