// The cpu backend's scans against the reference: f64 prefix sums (a row an f32 accumulator
// would get wrong), columns wider than one block of accumulators, dtype= conversions before the
// scan, integer wrapping, in-place scans of strided and bool tensors, and cumprod.
#include <gtest/gtest.h>

#include <vector>

#include "test_cpu_nn_check.h"

namespace crucible::cpu_test {
namespace {

const DType f32 = DType::Float32;

Values scan_args(const Tensor& x, int64_t dim, std::optional<DType> dt = std::nullopt) {
  return {x, Value(dim), dt ? Value(*dt) : Value()};
}

TEST(CpuScan, CumsumAccumulatesInF64) {
  // 2^24 followed by ones: an f32 running sum never moves; the f64 one gains 1 per element.
  Tensor x = Tensor::empty({1, 101}, f32);
  x.set(0, 16777216.0);
  for (int64_t i = 1; i < 101; ++i) x.set(i, 1.0);
  const Values out = expect_matches_ref("aten.cumsum.default", scan_args(x, 1));
  EXPECT_EQ(out[0].tensor().get(100), 16777316.0);
}

TEST(CpuScan, ColumnsRowsAndConversions) {
  expect_matches_ref("aten.cumsum.default", scan_args(filled({5, 3, 300}, f32), 1));
  expect_matches_ref("aten.cumsum.default", scan_args(filled({7, 9}, f32).transpose(0, 1), 0));
  expect_matches_ref("aten.cumsum.default", scan_args(filled({4, 50}, f32), 1, DType::Float16));
  // f32 -> i64 truncates each value before the sum.
  const Values trunc =
      expect_matches_ref("aten.cumsum.default", scan_args(filled({2, 6}, f32), 1, DType::Int64));
  EXPECT_EQ(trunc[0].tensor().dtype(), DType::Int64);
  // i32 values summed in i8 wrap.
  Tensor big = Tensor::empty({1, 5}, DType::Int32);
  for (int64_t i = 0; i < 5; ++i) big.set_int(i, 100);
  const Values wrapped = expect_matches_ref("aten.cumsum.default", scan_args(big, 1, DType::Int8));
  EXPECT_EQ(wrapped[0].tensor().get_int(2), 44);  // 300 - 256
  expect_matches_ref("aten.cumsum.default", scan_args(filled({4, 5}, DType::Int16), -1));
  expect_matches_ref("aten.cumprod.default", scan_args(filled({3, 8}, DType::Float64), 1));
  expect_matches_ref("aten.cumsum.default", scan_args(Tensor::scalar(2.5, f32), -1));
}

TEST(CpuScan, InPlaceOnStridedAndBoolTensors) {
  expect_matches_ref("aten.cumsum_.default", scan_args(filled({6, 5}, f32).transpose(0, 1), 1));
  Tensor b = Tensor::empty({2, 5}, DType::Bool);
  for (int64_t i = 0; i < b.numel(); ++i) b.set_int(i, i % 3 == 1);
  const Values out = expect_matches_ref("aten.cumsum_.default", scan_args(b, 1));
  EXPECT_EQ(out[0].tensor().get_int(0), 0);
  EXPECT_EQ(out[0].tensor().get_int(4), 1);
  auto cpu = make_cpu_backend();
  EXPECT_THROW(cpu->run(OpRegistry::catalog().get("aten.cumsum_.default"),
                        scan_args(filled({2, 3}, DType::Int32), 1, DType::Int64)),
               crucible::Error);
  EXPECT_THROW(
      cpu->run(OpRegistry::catalog().get("aten.cumsum.default"), scan_args(filled({2, 3}, f32), 2)),
      crucible::Error);
}

}  // namespace
}  // namespace crucible::cpu_test
