// ATen semantics of the comparison family (values checked against torch): comparisons in the
// promoted dtype, NaN, in-place forms, logical and bitwise ops.
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

const OpRegistry& ops() {
  static const OpRegistry* r = [] {
    auto* reg = new OpRegistry();
    register_comparison_ops(*reg);
    return reg;
  }();
  return *r;
}

Tensor call(const std::string& op, const Values& args) {
  return ops().get(op).run_ref(args).at(0).tensor();
}

TEST(CmpOps, ComparedInPromotedDtype) {
  const Tensor u = vec({0, 200, 255}, DType::UInt8);
  Tensor r = call("aten.eq.Scalar", {u, Value(int64_t{-1})});  // -1 wraps to 255
  EXPECT_EQ(r.dtype(), DType::Bool);
  EXPECT_EQ(values(r), (std::vector<double>{0, 0, 1}));
  EXPECT_EQ(values(call("aten.lt.Scalar", {u, Value(int64_t{256})})),
            (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(values(call("aten.lt.Tensor", {u, scalar(-1, DType::Int64)})),
            (std::vector<double>{1, 1, 0}));
  EXPECT_EQ(values(call("aten.lt.Tensor", {vec({-1}, DType::Int8), vec({200}, DType::UInt8)})),
            (std::vector<double>{1}));
  // The number is rounded to the tensor's floating dtype.
  EXPECT_EQ(call("aten.eq.Scalar", {vec({0.1}, DType::Float16), Value(0.1)}).get(0), 1);
  EXPECT_EQ(
      call("aten.eq.Tensor", {vec({0.1}, DType::Float32), scalar(0.1, DType::Float64)}).get(0), 1);
  Tensor big = Tensor::empty({1}, DType::Int64);
  big.set_int(0, (int64_t{1} << 24) + 1);
  EXPECT_EQ(call("aten.eq.Tensor", {big, vec({16777216}, DType::Float32)}).get(0), 1);
  EXPECT_EQ(values(call("aten.gt.Scalar", {vec({0, 1}, DType::Int64), Value(0.5)})),
            (std::vector<double>{0, 1}));
  EXPECT_EQ(values(call("aten.eq.Scalar", {vec({1, 0}, DType::Bool), Value(int64_t{2})})),
            (std::vector<double>{0, 0}));
}

TEST(CmpOps, NaNComparesFalseExceptNe) {
  const Tensor a = vec({kNaN, 1}, DType::Float32);
  EXPECT_EQ(values(call("aten.ne.Tensor", {a, a})), (std::vector<double>{1, 0}));
  EXPECT_EQ(values(call("aten.eq.Tensor", {a, a})), (std::vector<double>{0, 1}));
  EXPECT_EQ(values(call("aten.le.Scalar", {a, Value(kNaN)})), (std::vector<double>{0, 0}));
  EXPECT_EQ(values(call("aten.ge.Scalar", {vec({-0.0}, DType::Float32), Value(0.0)})),
            (std::vector<double>{1}));
}

TEST(CmpOps, InPlaceKeepsSelfDtype) {
  Tensor f = vec({1, 2}, DType::Float32);
  Tensor r = call("aten.eq_.Tensor", {f, vec({1, 3}, DType::Float32)});
  EXPECT_TRUE(r.shares_storage(f));
  EXPECT_EQ(values(f), (std::vector<double>{1, 0}));
  Tensor i = vec({1, 2}, DType::Int64);
  call("aten.lt_.Scalar", {i, Value(1.5)});
  EXPECT_EQ(values(i), (std::vector<double>{1, 0}));
  EXPECT_NE(op_error_of([] {
              call("aten.gt_.Tensor", {vec({1}, DType::Float32), vec({1, 2}, DType::Float32)});
            }),
            "");
}

TEST(CmpOps, LogicalAndBitwise) {
  const Tensor a = vec({0, 2, kNaN}, DType::Float32);
  EXPECT_EQ(values(call("aten.logical_and.default", {a, vec({1, 3, 1}, DType::Int64)})),
            (std::vector<double>{0, 1, 1}));
  EXPECT_EQ(values(call("aten.logical_xor.default", {a, vec({1, 3, 0}, DType::Int64)})),
            (std::vector<double>{1, 0, 1}));
  EXPECT_EQ(call("aten.logical_or.default", {a, a}).dtype(), DType::Bool);
  Tensor r = call("aten.bitwise_and.Tensor", {vec({-1}, DType::Int8), vec({200}, DType::UInt8)});
  EXPECT_EQ(r.dtype(), DType::Int16);
  EXPECT_EQ(r.get(0), 200);
  r = call("aten.bitwise_xor.Scalar", {vec({5}, DType::UInt8), Value(int64_t{-1})});
  EXPECT_EQ(r.dtype(), DType::UInt8);
  EXPECT_EQ(r.get(0), 250);
  r = call("aten.bitwise_xor.Scalar", {vec({1, 0}, DType::Bool), Value(int64_t{3})});
  EXPECT_EQ(r.dtype(), DType::Int64);
  EXPECT_EQ(values(r), (std::vector<double>{2, 3}));
  r = call("aten.bitwise_or.Tensor", {vec({1, 0}, DType::Bool), vec({0, 0}, DType::Bool)});
  EXPECT_EQ(r.dtype(), DType::Bool);
  EXPECT_EQ(op_error_of([] {
              call("aten.bitwise_and.Tensor", {vec({1}, DType::Float32), vec({1}, DType::Float32)});
            }),
            "\"bitwise_and_cpu\" not implemented for 'Float'");
  EXPECT_EQ(op_error_of([] {
              call("aten.bitwise_and.Scalar", {vec({1}, DType::Int64), Value(1.0)});
            }),
            "\"bitwise_and_cpu\" not implemented for 'Float'");
}

TEST(CmpOps, EverySampleRunsAndRaisesExactlyOnErrorCases) {
  EXPECT_EQ(ops().all().size(), 33u);
  check_family_samples(ops());
}

}  // namespace
}  // namespace crucible
