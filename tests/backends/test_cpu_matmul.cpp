// The cpu backend's matmul family: BLAS layouts (transposed, packed), batch splitting over
// threads, beta/alpha, the f64 path for non-finite inputs, integers, and the GEMM primitive.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "backends/cpu/gemm.h"
#include "test_cpu_nn_check.h"

namespace crucible::cpu_test {
namespace {

const DType f32 = DType::Float32;

TEST(CpuMatmul, MmLayoutsMatchReference) {
  const Tensor a = filled({37, 29}, f32, 1), b = filled({29, 41}, f32, 2);
  expect_matches_ref("aten.mm.default", {a, b});
  // Transposed operands (BLAS trans flags) and a column-sliced one (packed).
  expect_matches_ref("aten.mm.default", {filled({29, 37}, f32, 3).transpose(0, 1),
                                         filled({41, 29}, f32, 4).transpose(0, 1)});
  expect_matches_ref("aten.mm.default", {a, filled({29, 82}, f32, 5).slice(1, 0, 82, 2)});
  expect_matches_ref("aten.mm.default",
                     {filled({7, 16}, DType::BFloat16), filled({16, 9}, DType::BFloat16, 2)});
  expect_matches_ref("aten.mm.default",
                     {filled({7, 16}, DType::Float64), filled({16, 9}, DType::Float64, 2)});
}

TEST(CpuMatmul, MmIsTheProduct) {
  Tensor a = Tensor::empty({2, 3}, f32), b = Tensor::empty({3, 2}, f32);
  const double av[] = {1, 2, 3, 4, 5, 6}, bv[] = {7, 8, 9, 10, 11, 12};
  for (int i = 0; i < 6; ++i) {
    a.set(i, av[i]);
    b.set(i, bv[i]);
  }
  const Values out = expect_matches_ref("aten.mm.default", {a, b});
  const Tensor& o = out[0].tensor();
  EXPECT_EQ(o.get(0), 58);
  EXPECT_EQ(o.get(1), 64);
  EXPECT_EQ(o.get(2), 139);
  EXPECT_EQ(o.get(3), 154);
}

TEST(CpuMatmul, AddmmBetaAlphaAndBias) {
  expect_matches_ref("aten.addmm.default",
                     {filled({33}, f32), filled({9, 16}, f32, 2),
                      filled({33, 16}, f32, 3).transpose(0, 1), Value(0.5), Value(-2.0)});
  // beta = 0: NaN in self does not propagate.
  Tensor self = Tensor::full({9, 5}, std::numeric_limits<double>::quiet_NaN(), f32);
  const Values out = expect_matches_ref(
      "aten.addmm.default",
      {self, filled({9, 4}, f32), filled({4, 5}, f32, 2), Value(int64_t{0}), Value(int64_t{1})});
  for (int64_t i = 0; i < out[0].tensor().numel(); ++i)
    ASSERT_FALSE(std::isnan(out[0].tensor().get(i)));
}

TEST(CpuMatmul, BatchedSplitsOverThreads) {
  // 6 batch items >= 2 threads: one BLAS call per item, items spread over the pool.
  expect_matches_ref("aten.bmm.default", {filled({6, 17, 8}, f32), filled({6, 8, 19}, f32, 2)}, 2);
  expect_matches_ref("aten.bmm.default", {filled({6, 17, 8}, f32), filled({6, 8, 19}, f32, 2)}, 1);
  // Broadcast batch (stride 0) and a transposed item layout.
  expect_matches_ref("aten.bmm.default", {filled({1, 5, 8}, f32).expand({4, 5, 8}),
                                          filled({4, 6, 8}, f32, 3).transpose(1, 2)});
  expect_matches_ref("aten.baddbmm.default", {filled({1, 5, 7}, f32), filled({3, 5, 16}, f32, 2),
                                              filled({3, 16, 7}, f32, 3), Value(0.25), Value(3.0)});
}

TEST(CpuMatmul, NonFiniteInputsFollowTheReference) {
  Tensor a = filled({5, 8}, f32);
  a.set(3, std::numeric_limits<double>::infinity());
  a.set(11, 3.0e38);
  a.set(12, -3.0e38);
  a.set(20, std::numeric_limits<double>::quiet_NaN());
  expect_matches_ref("aten.mm.default", {a, filled({8, 6}, f32, 2)});
}

TEST(CpuMatmul, IntegersWrapLikeAten) {
  Tensor a = Tensor::full({2, 3}, 100, DType::Int8), b = Tensor::full({3, 2}, 3, DType::Int8);
  const Values out = expect_matches_ref("aten.mm.default", {a, b});
  EXPECT_EQ(out[0].tensor().get_int(0), static_cast<int8_t>(900));  // wraps to 8 bits
}

TEST(CpuMatmul, GemmPacksGeneralStrides) {
  // A is [3, 4] read with row stride 1 and column stride 5 from a wider buffer (neither
  // row- nor column-major with a legal leading dimension for both), B row-major.
  std::vector<float> abuf(40), b(4 * 2), c(3 * 2, -1.0f);
  for (size_t i = 0; i < abuf.size(); ++i) abuf[i] = static_cast<float>(i);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i) - 3.0f;
  cpu::gemm_f32(3, 2, 4, 1.0f, {abuf.data(), 2, 5}, {b.data(), 2, 1}, 0.0f, c.data(), 2);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j) {
      float want = 0;
      for (int q = 0; q < 4; ++q) want += abuf[i * 2 + q * 5] * b[q * 2 + j];
      EXPECT_FLOAT_EQ(c[i * 2 + j], want);
    }
}

}  // namespace
}  // namespace crucible::cpu_test
