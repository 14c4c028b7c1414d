// opsutil (src/ops/util.h): ATen's result_type, can_cast, broadcasting maps and dim helpers.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "crucible/core/error.h"
#include "ops/util.h"

namespace crucible {
namespace {

using opsutil::result_type;

Tensor t(const Shape& shape, DType d) { return Tensor::zeros(shape, d); }

TEST(ResultType, DimensionedZeroDimAndScalars) {
  using D = DType;
  // Same priority: ordinary promotion.
  EXPECT_EQ(result_type(t({2}, D::Int32), t({2}, D::Int64)), D::Int64);
  EXPECT_EQ(result_type(t({2}, D::UInt8), t({2}, D::Int8)), D::Int16);
  EXPECT_EQ(result_type(t({2}, D::Float16), t({2}, D::BFloat16)), D::Float32);
  // A 0-d tensor of the same category does not widen a dimensioned one...
  EXPECT_EQ(result_type(t({2}, D::Int32), t({}, D::Int64)), D::Int32);
  EXPECT_EQ(result_type(t({2}, D::Float16), t({}, D::Float64)), D::Float16);
  // ...but a higher category does, with its own dtype.
  EXPECT_EQ(result_type(t({2}, D::Int32), t({}, D::Float64)), D::Float64);
  EXPECT_EQ(result_type(t({2}, D::Bool), t({}, D::Int8)), D::Int8);
  EXPECT_EQ(result_type(t({}, D::Int8), t({}, D::Int64)), D::Int64);
  // Python scalars: float -> the default dtype f32, int -> i64 only over bool.
  EXPECT_EQ(result_type(t({2}, D::Int32), Scalar(1.5)), D::Float32);
  EXPECT_EQ(result_type(t({2}, D::Int32), Scalar(1)), D::Int32);
  EXPECT_EQ(result_type(t({2}, D::UInt8), Scalar(1000)), D::UInt8);
  EXPECT_EQ(result_type(t({2}, D::Bool), Scalar(1)), D::Int64);
  EXPECT_EQ(result_type(t({2}, D::Bool), Scalar(true)), D::Bool);
  EXPECT_EQ(result_type(t({2}, D::Float16), Scalar(1.5)), D::Float16);
  EXPECT_EQ(result_type(t({}, D::Int64), Scalar(2.0)), D::Float32);
  EXPECT_EQ(result_type(t({}, D::Float64), Scalar(2.0)), D::Float64);
  EXPECT_EQ(result_type(t({2}, D::Bool), Scalar(2.0)), D::Float32);
}

TEST(ResultType, ValueLists) {
  using D = DType;
  const Value ops[] = {Value(t({2}, D::Int16)), Value(int64_t{3}), Value(), Value(t({}, D::Int64))};
  EXPECT_EQ(result_type(ops), D::Int16);
  const Value ops2[] = {Value(true), Value(2.5)};
  EXPECT_EQ(result_type(ops2), D::Float32);
  const Value list[] = {Value::tensor_list({t({2}, D::Float16), t({2}, D::Float32)})};
  EXPECT_EQ(result_type(list), D::Float32);
}

TEST(ResultType, Float8OnlyWithItself) {
  EXPECT_EQ(result_type(t({2}, DType::Float8E4M3FN), t({2}, DType::Float8E4M3FN)),
            DType::Float8E4M3FN);
  try {
    result_type(t({2}, DType::Float8E4M3FN), t({2}, DType::Float32));
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OpError);
    EXPECT_STREQ(e.what(),
                 "Promotion for Float8 Types is not supported, attempted to promote "
                 "Float8_e4m3fn and Float");
  }
}

TEST(CanCast, AtenRules) {
  EXPECT_TRUE(can_cast(DType::Int64, DType::Float16));
  EXPECT_TRUE(can_cast(DType::Float64, DType::Float16));
  EXPECT_FALSE(can_cast(DType::Float32, DType::Int64));
  EXPECT_FALSE(can_cast(DType::Int32, DType::Bool));
  EXPECT_TRUE(can_cast(DType::Bool, DType::Bool));
  EXPECT_TRUE(can_cast(DType::Bool, DType::UInt8));
  EXPECT_TRUE(can_cast(DType::Int64, DType::Int8));
  EXPECT_EQ(opsutil::to_float_dtype(DType::Int64), DType::Float32);
  EXPECT_EQ(opsutil::to_float_dtype(DType::Bool), DType::Float32);
  EXPECT_EQ(opsutil::to_float_dtype(DType::BFloat16), DType::BFloat16);
}

TEST(ForEachOffset, BroadcastStridesAndOffsets) {
  Tensor a = Tensor::zeros({2, 3}, DType::Float32);
  Tensor b = Tensor::zeros({4}, DType::Float32).slice(0, 1, 4);  // [3], offset 1
  std::vector<std::pair<int64_t, int64_t>> seen;
  const Tensor ops[] = {a, b};
  opsutil::for_each_offset({2, 3}, ops,
                           [&](std::span<const int64_t> o) { seen.emplace_back(o[0], o[1]); });
  EXPECT_EQ(seen, (std::vector<std::pair<int64_t, int64_t>>{
                      {0, 1}, {1, 2}, {2, 3}, {3, 1}, {4, 2}, {5, 3}}));
  int calls = 0;
  const Tensor s[] = {Tensor::scalar(1, DType::Int8)};
  opsutil::for_each_offset({}, s, [&](std::span<const int64_t>) { ++calls; });
  EXPECT_EQ(calls, 1);
  opsutil::for_each_offset({0, 3}, s, [&](std::span<const int64_t>) { ++calls; });
  EXPECT_EQ(calls, 1);
  const Tensor bad[] = {Tensor::zeros({4}, DType::Float32)};
  EXPECT_THROW(opsutil::for_each_offset({2, 3}, bad, [](std::span<const int64_t>) {}), Error);
}

TEST(Map, BinaryComputesInDoubleRoundsOnce) {
  Tensor a = Tensor::full({2, 1}, 1.0, DType::Float16);
  Tensor b = Tensor::empty({3}, DType::Float16);
  b.set(0, 0.0);
  b.set(1, std::ldexp(1.0, -11));  // exactly half an ulp of 1: a tie, to even
  b.set(2, std::ldexp(1.0, -11) + std::ldexp(1.0, -21));  // just above the tie
  Tensor out = Tensor::empty({2, 3}, DType::Float16);
  opsutil::map_binary(a, b, out, [](double x, double y) { return x + y; });
  EXPECT_EQ(out.get(0), 1.0);
  EXPECT_EQ(out.get(1), 1.0);
  EXPECT_EQ(out.get(2), 1.0 + std::ldexp(1.0, -10));
  EXPECT_EQ(out.get(5), out.get(2));
  EXPECT_THROW(opsutil::map_binary(a, b, Tensor::empty({3}, DType::Float16),
                                   [](double x, double) { return x; }),
               Error);
}

TEST(Map, UnaryIntoNonContiguousAndIntegerOutput) {
  Tensor in = Tensor::empty({2, 2}, DType::Float64);
  for (int i = 0; i < 4; ++i) in.set(i, i + 0.75);
  Tensor out = Tensor::zeros({2, 2}, DType::Int32).transpose(0, 1);
  opsutil::map_unary(in, out, [](double x) { return -x; });
  EXPECT_EQ(out.get(0), 0);   // -0.75 truncated
  EXPECT_EQ(out.get(3), -3);  // -3.75 truncated
}

TEST(Map, IntegerVersionsAreExactAndWrap) {
  Tensor a = Tensor::empty({1}, DType::Int64);
  a.set_int(0, std::numeric_limits<int64_t>::max() - 2);
  Tensor out = Tensor::empty({1}, DType::Int64);
  opsutil::map_unary_int(a, out, [](int64_t x) { return x + 1; });
  EXPECT_EQ(out.get_int(0), std::numeric_limits<int64_t>::max() - 1);
  Tensor x = Tensor::full({3}, 100, DType::Int8);
  Tensor y = Tensor::full({1}, 100, DType::Int8);
  Tensor o8 = Tensor::empty({3}, DType::Int8);
  opsutil::map_binary_int(x, y, o8, [](int64_t p, int64_t q) { return p + q; });
  EXPECT_EQ(o8.get_int(0), -56);  // 200 wrapped to int8
  Tensor ob = Tensor::empty({3}, DType::Bool);
  opsutil::map_binary_int(x, y, ob, [](int64_t p, int64_t q) { return p - q; });
  EXPECT_EQ(ob.get_int(1), 0);
}

TEST(Dims, NormaliseAndReducedShape) {
  const int64_t d1[] = {-1, 0};
  EXPECT_EQ(opsutil::normalise_dims(d1, 3), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(opsutil::normalise_dims({}, 3), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(opsutil::normalise_dims({}, 0), (std::vector<int64_t>{}));
  const int64_t dup[] = {1, -1};
  EXPECT_THROW(opsutil::normalise_dims(dup, 2), Error);
  const int64_t bad[] = {3};
  EXPECT_THROW(opsutil::normalise_dims(bad, 3), Error);
  const int64_t d2[] = {1};
  EXPECT_EQ(opsutil::reduced_shape({2, 3, 4}, d2, false), (Shape{2, 4}));
  EXPECT_EQ(opsutil::reduced_shape({2, 3, 4}, d2, true), (Shape{2, 1, 4}));
  EXPECT_EQ(opsutil::reduced_shape({2, 3}, {}, false), (Shape{}));
  EXPECT_EQ(opsutil::reduced_shape({2, 3}, {}, true), (Shape{1, 1}));
  const int64_t d0[] = {0};
  EXPECT_EQ(opsutil::reduced_shape({}, d0, true), (Shape{}));
  EXPECT_EQ(opsutil::reduced_shape({0, 5}, d0, false), (Shape{5}));
}

}  // namespace
}  // namespace crucible
