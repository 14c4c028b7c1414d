// The cpu backend's norms against the reference: layer norm, group norm, batch norm (training
// updates the running statistics in place; evaluation), their backwards, mixed f16/bf16 input
// with f32 parameters, rows with non-finite values, huge values met by the vectorized path
// (which must redo the call in the reference's order), and batch norms with short rows (many
// channel rows per tile). The loops themselves are tested in test_cpu_reduction.cpp.
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

// A row of ones holding +3e38 and, three places later, -3e38: in the reference's order the
// ones between them are absorbed (a row of 64 has the mean 59/64); summed lane by lane only
// those in the lanes of the huge values are (60/64). The fast path must see the huge values
// and redo the call in the reference's order.
Tensor cancelling(const Shape& shape, int64_t at) {
  Tensor x = Tensor::full(shape, 1.0, f32);
  x.set(at, 3e38);
  x.set(at + 3, -3e38);
  return x;
}

TEST(CpuNorm, HugeValuesAreNormalizedInTheReferenceOrder) {
  const Tensor x = cancelling({8, 64}, 2 * 64 + 1);
  const Values out = expect_matches_ref("aten.native_layer_norm.default",
                                        {x, Value(L{64}), Value(), Value(), Value(1e-5)});
  EXPECT_EQ(out[1].tensor().get(2), 59.0 / 64);  // two ones were absorbed by 3e38
  EXPECT_EQ(out[1].tensor().get(3), 1.0);
  expect_matches_ref(
      "aten.native_layer_norm_backward.default",
      {filled({8, 64}, f32, 4), x, Value(L{64}), out[1].tensor(), out[2].tensor(),
       filled({64}, f32, 2), filled({64}, f32, 3), Value(std::vector<bool>{true, true, true})});
  const Tensor g = cancelling({2, 4, 8, 8}, 3 * 64 + 5);
  const Values gout = expect_matches_ref("aten.native_group_norm.default",
                                         {g, Value(), Value(), Value(int64_t{2}), Value(int64_t{4}),
                                          Value(int64_t{64}), Value(int64_t{2}), Value(1e-5)});
  expect_matches_ref("aten.native_group_norm_backward.default",
                     {filled({2, 4, 8, 8}, f32, 4), g, gout[1].tensor(), gout[2].tensor(), Value(),
                      Value(int64_t{2}), Value(int64_t{4}), Value(int64_t{64}), Value(int64_t{2}),
                      Value(std::vector<bool>{true, true, true})});
  const Tensor bx = cancelling({6, 3, 40}, 3 * 120 + 40 + 7);
  const Values bout = expect_matches_ref(
      "aten.native_batch_norm.default",
      {bx, Value(), Value(), Value(), Value(), Value(true), Value(0.1), Value(1e-5)});
  expect_matches_ref(
      "aten.native_batch_norm_backward.default",
      {filled({6, 3, 40}, f32, 4), bx, Value(), Value(), Value(), bout[1].tensor(),
       bout[2].tensor(), Value(true), Value(1e-5), Value(std::vector<bool>{true, true, true})});
}

TEST(CpuNorm, BatchNormShortRowsManyChannels) {
  // Rows of 7 elements, 300 channels: tiles of many channels visited batch-major, on one,
  // two and three threads (tiles split unevenly).
  const Tensor x = filled({9, 300, 7}, f32);
  const Tensor rm = filled({300}, f32, 5), rv = Tensor::full({300}, 0.5, f32);
  for (int threads : {1, 2, 3}) {
    const Values out = expect_matches_ref("aten.native_batch_norm.default",
                                          {x, filled({300}, f32, 2), filled({300}, f32, 3), rm, rv,
                                           Value(true), Value(0.1), Value(1e-5)},
                                          threads);
    expect_matches_ref(
        "aten.native_batch_norm_backward.default",
        {filled({9, 300, 7}, f32, 4), x, filled({300}, f32, 2), rm, rv, out[1].tensor(),
         out[2].tensor(), Value(true), Value(1e-5), Value(std::vector<bool>{true, true, true})},
        threads);
  }
  // f64 and f16 inputs through the same loops (f64 lanes; f16 converted to f32 and back).
  expect_matches_ref("aten.native_batch_norm.default",
                     {filled({5, 17, 3}, DType::Float64), Value(), Value(), Value(), Value(),
                      Value(true), Value(0.1), Value(1e-5)});
  expect_matches_ref(
      "aten.native_layer_norm.default",
      {filled({5, 3, 37}, DType::Float16), Value(L{3, 37}), Value(), Value(), Value(1e-5)});
}

}  // namespace
}  // namespace crucible::cpu_test
