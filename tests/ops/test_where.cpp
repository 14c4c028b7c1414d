// ATen semantics of the selection family (values checked against torch): where, masked_fill
// (checked value conversion, mask rules), clamp (promotion, NaN, min > max).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "arith_test_util.h"
#include "ops/families.h"

namespace crucible {
namespace {

using namespace arith_test;  // NOLINT(google-build-using-namespace)

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
const Value kNone{};

const OpRegistry& ops() {
  static const OpRegistry* r = [] {
    auto* reg = new OpRegistry();
    register_where_ops(*reg);
    return reg;
  }();
  return *r;
}

Tensor call(const std::string& op, const Values& args) {
  return ops().get(op).run_ref(args).at(0).tensor();
}

TEST(WhereOps, Where) {
  const Tensor c = vec({1, 0}, DType::Bool);
  Tensor r =
      call("aten.where.self", {c, vec({1, 2}, DType::Int64), vec({0.5, 1.5}, DType::Float32)});
  EXPECT_EQ(r.dtype(), DType::Float32);
  EXPECT_EQ(values(r), (std::vector<double>{1, 1.5}));
  r = call("aten.where.self", {c, vec({1, 2}, DType::Float16), scalar(2, DType::Float64)});
  EXPECT_EQ(r.dtype(), DType::Float16);
  r = call("aten.where.self", {tensor({1, 0}, {2, 1}, DType::Bool), vec({1, 2}, DType::Int64),
                               scalar(0, DType::Int64)});
  EXPECT_EQ(r.shape(), (Shape{2, 2}));
  EXPECT_EQ(values(r), (std::vector<double>{1, 2, 0, 0}));
  r = call("aten.where.self",
           {vec({1, 0}, DType::UInt8), vec({1, 2}, DType::Int64), vec({3, 4}, DType::Int64)});
  EXPECT_EQ(values(r), (std::vector<double>{1, 4}));
  EXPECT_EQ(op_error_of([] {
              call("aten.where.self",
                   {vec({1}, DType::Int64), vec({1}, DType::Int64), vec({1}, DType::Int64)});
            }),
            "where expected condition to be a boolean tensor, but got a tensor with dtype Long");
}

TEST(WhereOps, MaskedFillValueConversion) {
  const Tensor m = vec({1, 0}, DType::Bool);
  EXPECT_EQ(values(call("aten.masked_fill.Scalar", {vec({1, 2}, DType::Int64), m, Value(2.7)})),
            (std::vector<double>{2, 2}));
  EXPECT_EQ(values(call("aten.masked_fill.Scalar", {vec({1, 2}, DType::Int64), m, Value(-2.7)})),
            (std::vector<double>{-2, 2}));
  EXPECT_EQ(
      values(call("aten.masked_fill.Scalar", {vec({1, 2}, DType::UInt8), m, Value(int64_t{-1})})),
      (std::vector<double>{255, 2}));
  EXPECT_EQ(
      values(call("aten.masked_fill.Scalar", {vec({0, 0}, DType::Bool), m, Value(int64_t{2})})),
      (std::vector<double>{1, 0}));
  EXPECT_EQ(call("aten.masked_fill.Scalar", {vec({1, 2}, DType::Float16), m, Value(kInf)}).get(0),
            kInf);
  EXPECT_EQ(op_error_of([&] {
              call("aten.masked_fill.Scalar", {vec({1, 2}, DType::UInt8), m, Value(int64_t{300})});
            }),
            "value cannot be converted to type uint8_t without overflow");
  EXPECT_EQ(op_error_of([&] {
              call("aten.masked_fill.Scalar", {vec({1, 2}, DType::UInt8), m, Value(int64_t{-256})});
            }),
            "value cannot be converted to type uint8_t without overflow");
  EXPECT_EQ(op_error_of([&] {
              call("aten.masked_fill.Scalar", {vec({1, 2}, DType::Float16), m, Value(65519.0)});
            }),
            "value cannot be converted to type at::Half without overflow");
  EXPECT_EQ(op_error_of([&] {
              call("aten.masked_fill.Scalar", {vec({1, 2}, DType::Int32), m, Value(kNaN)});
            }),
            "value cannot be converted to type int without overflow");
  EXPECT_EQ(op_error_of([&] {
              call("aten.masked_fill.Scalar", {vec({1, 2}, DType::Int8), m, Value(int64_t{128})});
            }),
            "value cannot be converted to type int8_t without overflow");
  // Tensor values: 0-d only, converted the same way.
  EXPECT_EQ(values(call("aten.masked_fill.Tensor",
                        {vec({1, 2}, DType::Int64), m, scalar(7.5, DType::Float32)})),
            (std::vector<double>{7, 2}));
  EXPECT_EQ(
      op_error_of([&] {
        call("aten.masked_fill.Tensor", {vec({1, 2}, DType::Float32), m, vec({7}, DType::Float32)});
      }),
      "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 "
      "dimension(s).");
  EXPECT_EQ(
      op_error_of([&] {
        call("aten.masked_fill.Tensor", {vec({1, 2}, DType::UInt8), m, scalar(300, DType::Int64)});
      }),
      "value cannot be converted to type uint8_t without overflow");
}

TEST(WhereOps, MaskedFillShapesAndMasks) {
  const Tensor x = vec({1, 2, 3}, DType::Float32);
  Tensor r =
      call("aten.masked_fill.Scalar", {x, tensor({1, 0}, {2, 1}, DType::Bool), Value(int64_t{0})});
  EXPECT_EQ(r.shape(), (Shape{2, 3}));
  EXPECT_EQ(values(r), (std::vector<double>{0, 0, 0, 1, 2, 3}));
  EXPECT_EQ(op_error_of([&] {
              call("aten.masked_fill_.Scalar",
                   {x, tensor({1, 0}, {2, 1}, DType::Bool), Value(int64_t{0})});
            }),
            "output with shape [3] doesn't match the broadcast shape [2, 3]");
  EXPECT_EQ(op_error_of([&] {
              call("aten.masked_fill.Scalar", {x, vec({1, 0, 1}, DType::UInt8), Value(int64_t{7})});
            }),
            "masked_fill_ only supports boolean masks, but got mask with dtype unsigned char");
  Tensor y = vec({1, 2}, DType::Int64);
  r = call("aten.masked_fill_.Scalar", {y, vec({1, 0}, DType::Bool), Value(2.7)});
  EXPECT_TRUE(r.shares_storage(y));
  EXPECT_EQ(values(y), (std::vector<double>{2, 2}));
}

TEST(WhereOps, Clamp) {
  const Tensor f = vec({1, kNaN, -3, 5}, DType::Float32);
  std::vector<double> r =
      values(call("aten.clamp.default", {f, Value(int64_t{-1}), Value(int64_t{2})}));
  EXPECT_EQ(r[0], 1);
  EXPECT_TRUE(std::isnan(r[1]));
  EXPECT_EQ(r[2], -1);
  EXPECT_EQ(r[3], 2);
  r = values(call("aten.clamp.default", {f, Value(int64_t{3}), Value(int64_t{2})}));  // min > max
  EXPECT_EQ(r[0], 2);
  EXPECT_EQ(r[3], 2);
  r = values(
      call("aten.clamp.default", {vec({1, -3}, DType::Float32), Value(kNaN), Value(int64_t{2})}));
  EXPECT_TRUE(std::isnan(r[0]) && std::isnan(r[1]));
  Tensor t = call("aten.clamp.default", {vec({1, -3, 5}, DType::Int64), Value(0.5), Value(2.5)});
  EXPECT_EQ(t.dtype(), DType::Float32);
  EXPECT_EQ(values(t), (std::vector<double>{1, 0.5, 2.5}));
  t = call("aten.clamp.default", {vec({1, 0}, DType::Bool), Value(int64_t{0}), Value(int64_t{1})});
  EXPECT_EQ(t.dtype(), DType::Int64);
  EXPECT_EQ(op_error_of([] {
              call("aten.clamp.default", {vec({1}, DType::Float32), kNone, kNone});
            }),
            "torch.clamp: At least one of 'min' or 'max' must not be None");
  EXPECT_EQ(op_error_of([] {
              call("aten.clamp.default",
                   {vec({1}, DType::UInt8), Value(int64_t{-1}), Value(int64_t{300})});
            }),
            "value cannot be converted to type uint8_t without overflow");
  EXPECT_EQ(values(call("aten.clamp_min.default", {vec({1, 2}, DType::UInt8), Value(int64_t{-1})})),
            (std::vector<double>{255, 255}));
  EXPECT_EQ(values(call("aten.clamp_max.default", {vec({1, 0}, DType::Bool), Value(int64_t{0})})),
            (std::vector<double>{0, 0}));
  EXPECT_EQ(op_error_of([] {
              call("aten.clamp_.default", {vec({1, -3}, DType::Int64), Value(0.5), Value(2.5)});
            }),
            "result type Float can't be cast to the desired output type Long");
  Tensor self = vec({1, -3}, DType::Int64);
  call("aten.clamp_.default", {self, Value(int64_t{0}), Value(int64_t{1})});
  EXPECT_EQ(values(self), (std::vector<double>{1, 0}));
}

TEST(WhereOps, ClampTensorBounds) {
  std::vector<double> r =
      values(call("aten.clamp.Tensor",
                  {vec({1, kNaN, -3, 5}, DType::Float32), vec({0, 0, 0, 0}, DType::Float32),
                   vec({2, 2, kNaN, -1}, DType::Float32)}));
  EXPECT_EQ(r[0], 1);
  EXPECT_TRUE(std::isnan(r[1]));
  EXPECT_TRUE(std::isnan(r[2]));
  EXPECT_EQ(r[3], -1);
  Tensor t =
      call("aten.clamp.Tensor", {vec({1}, DType::Float32), vec({0, 2}, DType::Float32), kNone});
  EXPECT_EQ(values(t), (std::vector<double>{1, 2}));  // broadcast beyond self
  t = call("aten.clamp.Tensor", {vec({1, 2}, DType::Int8), scalar(300, DType::Int64), kNone});
  EXPECT_EQ(t.dtype(), DType::Int8);
  EXPECT_EQ(values(t), (std::vector<double>{44, 44}));  // 300 cast to i8
  t = call("aten.clamp.Tensor", {vec({1, 0}, DType::Bool), vec({1, 1}, DType::Bool), kNone});
  EXPECT_EQ(values(t), (std::vector<double>{1, 1}));
  EXPECT_EQ(op_error_of([] {
              const Tensor b = vec({1, 0}, DType::Bool);
              call("aten.clamp.Tensor", {b, b, b});
            }),
            "\"clamp_cpu\" not implemented for 'Bool'");
}

TEST(WhereOps, EverySampleRunsAndRaisesExactlyOnErrorCases) {
  EXPECT_EQ(ops().all().size(), 10u);
  check_family_samples(ops());
}

}  // namespace
}  // namespace crucible
