// ATen semantics of the arithmetic family (values checked against torch): sub/rsub, in-place
// mul_/sub_/div_, out= variants, rounding-mode division, fmod/remainder, pow, atan2,
// maximum/minimum, lerp, addcmul/addcdiv.
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

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

const OpRegistry& ops() {
  static const OpRegistry* r = [] {
    auto* reg = new OpRegistry();
    register_arithmetic_ops(*reg);
    return reg;
  }();
  return *r;
}

Tensor call(const std::string& op, const Values& args) {
  return ops().get(op).run_ref(args).at(0).tensor();
}

const Value kNone{};

TEST(ArithOps, SubAndRsub) {
  Tensor r =
      call("aten.sub.Scalar", {vec({1, 2}, DType::Int64), Value(int64_t{10}), Value(int64_t{2})});
  EXPECT_EQ(values(r), (std::vector<double>{-19, -18}));
  r = call("aten.sub.Scalar", {vec({3}, DType::UInt8), Value(int64_t{5}), Value(int64_t{1})});
  EXPECT_EQ(r.dtype(), DType::UInt8);
  EXPECT_EQ(r.get_int(0), 254);
  r = call("aten.rsub.Tensor",
           {vec({1, 2}, DType::Int64), vec({10, 20}, DType::Int64), Value(int64_t{2})});
  EXPECT_EQ(values(r), (std::vector<double>{8, 16}));
  r = call("aten.rsub.Scalar", {vec({1, 2}, DType::Int64), Value(10.5), Value(int64_t{1})});
  EXPECT_EQ(r.dtype(), DType::Float32);
  EXPECT_EQ(values(r), (std::vector<double>{9.5, 8.5}));
  // A bool Scalar `other` raises, as a bool self does (ATen's sub_check on the wrapped Scalar).
  EXPECT_NE(
      op_error_of([] {
        call("aten.sub.Scalar", {vec({1, 2}, DType::Float32), Value(true), Value(int64_t{1})});
      }).find("with a bool tensor"),
      std::string::npos);
  EXPECT_NE(
      op_error_of([] {
        call("aten.rsub.Scalar", {vec({1, 0}, DType::Bool), Value(int64_t{1}), Value(int64_t{1})});
      }).find("with a bool tensor"),
      std::string::npos);
  EXPECT_EQ(op_error_of([] {
              call("aten.sub.Scalar", {vec({1}, DType::Int64), Value(int64_t{1}), Value(0.5)});
            }),
            "For integral input tensors, argument alpha must not be a floating point number.");
}

TEST(ArithOps, InPlaceCastRules) {
  Tensor self = vec({1, 2}, DType::Int32);
  EXPECT_EQ(op_error_of([&] {
              call("aten.mul_.Scalar", {self, Value(1.5)});
            }),
            "result type Float can't be cast to the desired output type Int");
  EXPECT_EQ(op_error_of([&] {
              call("aten.div_.Tensor", {self, vec({2, 2}, DType::Int32)});
            }),
            "result type Float can't be cast to the desired output type Int");
  EXPECT_EQ(op_error_of([] {
              call("aten.mul_.Tensor", {vec({3}, DType::Float32), vec({2, 3}, DType::Float32)});
            }),
            "output with shape [1] doesn't match the broadcast shape [2]");
  Tensor b = vec({1, 0}, DType::Bool);
  EXPECT_NE(op_error_of([&] { call("aten.mul_.Scalar", {b, Value(int64_t{2})}); }), "");
  // The result is written into self and returned; f16 self with an f32 operand rounds to f16.
  Tensor h = vec({3}, DType::Float16);
  Tensor out = call("aten.sub_.Tensor", {h, vec({2}, DType::Float32), Value(0.5)});
  EXPECT_TRUE(out.shares_storage(h));
  EXPECT_EQ(h.get(0), 2.0);
  Tensor f = vec({1, 2}, DType::Float32);
  call("aten.mul_.Tensor", {f, f});  // other aliases self
  EXPECT_EQ(values(f), (std::vector<double>{1, 4}));
}

TEST(ArithOps, OutVariantsComputeInCommonDtype) {
  Tensor o = Tensor::empty({1}, DType::Float64);
  Tensor r = call("aten.add.out",
                  {vec({0.1}, DType::Float32), vec({0.2}, DType::Float32), Value(int64_t{1}), o});
  EXPECT_TRUE(r.shares_storage(o));
  EXPECT_EQ(o.get(0), static_cast<double>(0.1f + 0.2f));  // the f32 sum, widened
  o = Tensor::empty({1}, DType::Float64);
  call("aten.div.out", {vec({1}, DType::Int64), vec({3}, DType::Int64), o});
  EXPECT_EQ(o.get(0), static_cast<double>(1.0f / 3.0f));
  Tensor i8 = Tensor::empty({1}, DType::Int8);
  call("aten.mul.out", {vec({100}, DType::Int64), vec({2}, DType::Int64), i8});
  EXPECT_EQ(i8.get_int(0), -56);
  EXPECT_EQ(op_error_of([] {
              call("aten.sub.out", {vec({1}, DType::Float32), vec({1}, DType::Float32),
                                    Value(int64_t{1}), Tensor::empty({1}, DType::Int64)});
            }),
            "result type Float can't be cast to the desired output type Long");
  EXPECT_EQ(op_error_of([] {
              call("aten.add.out", {vec({1}, DType::Int64), vec({2}, DType::Int64),
                                    Value(int64_t{1}), Tensor::empty({1}, DType::Bool)});
            }),
            "result type Long can't be cast to the desired output type Bool");
}

TEST(ArithOps, RoundingModes) {
  const Tensor f = vec({7, -7, 0, -0.0, 1, -1, kInf, kNaN, 5}, DType::Float32);
  const Tensor g = vec({2, 2, -3, 3, 0, 0, 2, 1, kInf}, DType::Float32);
  Tensor r = call("aten.div.Tensor_mode", {f, g, Value("floor")});
  const std::vector<double> fl = values(r);
  EXPECT_EQ(fl[0], 3);
  EXPECT_EQ(fl[1], -4);
  EXPECT_TRUE(fl[2] == 0 && std::signbit(fl[2]));  // 0 // -3 is -0.0
  EXPECT_TRUE(std::signbit(fl[3]));
  EXPECT_EQ(fl[4], kInf);
  EXPECT_EQ(fl[5], -kInf);
  EXPECT_TRUE(std::isnan(fl[6]));  // inf // 2 is NaN (fmod(inf, 2) is NaN)
  EXPECT_TRUE(std::isnan(fl[7]));
  EXPECT_EQ(fl[8], 0);
  r = call("aten.div.Tensor_mode", {f, g, Value("trunc")});
  EXPECT_EQ(r.get(1), -3);
  EXPECT_EQ(r.get(6), kInf);
  // Floor of a negative by +inf is -1 (Python's -5.0 // inf).
  r = call("aten.div.Tensor_mode",
           {vec({-5}, DType::Float64), vec({kInf}, DType::Float64), Value("floor")});
  EXPECT_EQ(r.get(0), -1);
  // Integers: floor vs trunc, and division by zero raises.
  const Tensor i = vec({7, -7}, DType::Int32);
  EXPECT_EQ(values(call("aten.div.Tensor_mode", {i, vec({2, 2}, DType::Int32), Value("floor")})),
            (std::vector<double>{3, -4}));
  EXPECT_EQ(values(call("aten.div.Scalar_mode", {i, Value(int64_t{2}), Value("trunc")})),
            (std::vector<double>{3, -3}));
  EXPECT_EQ(call("aten.div.Scalar_mode", {i, Value(2.0), Value("floor")}).dtype(), DType::Float32);
  EXPECT_EQ(op_error_of([&] {
              call("aten.div.Scalar_mode", {i, Value(int64_t{0}), Value("floor")});
            }),
            "ZeroDivisionError");
  EXPECT_EQ(op_error_of([&] {
              call("aten.floor_divide.default", {i, vec({1, 0}, DType::Int32)});
            }),
            "ZeroDivisionError");
  EXPECT_EQ(op_error_of([&] {
              call("aten.div.Tensor_mode", {i, i, Value("round")});
            }),
            "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found 'round'");
  r = call("aten.div.Tensor_mode", {i, vec({2, 2}, DType::Int32), kNone});
  EXPECT_EQ(r.dtype(), DType::Float32);
  EXPECT_EQ(r.get(1), -3.5);
  const Tensor b = vec({1, 0}, DType::Bool);
  EXPECT_EQ(op_error_of([&] {
              call("aten.div.Tensor_mode", {b, b, Value("floor")});
            }),
            "\"div_floor_cpu\" not implemented for 'Bool'");
  // u8 // i8 promotes to i16.
  r = call("aten.floor_divide.default", {vec({5, 7}, DType::UInt8), vec({-2, 2}, DType::Int8)});
  EXPECT_EQ(r.dtype(), DType::Int16);
  EXPECT_EQ(values(r), (std::vector<double>{-3, 3}));
  // A bool tensor with an int Scalar divides in i64.
  EXPECT_EQ(call("aten.div.Scalar_mode", {b, Value(int64_t{2}), Value("floor")}).dtype(),
            DType::Int64);
}

TEST(ArithOps, FmodAndRemainderSigns) {
  const Tensor a = vec({5, -5, 5, -5}, DType::Int64), b = vec({3, 3, -3, -3}, DType::Int64);
  EXPECT_EQ(values(call("aten.remainder.Tensor", {a, b})), (std::vector<double>{2, 1, -1, -2}));
  EXPECT_EQ(values(call("aten.fmod.Tensor", {a, b})), (std::vector<double>{2, -2, 2, -2}));
  const Tensor fa = vec({5, -5, 5, -5, -0.0, 0.0}, DType::Float32);
  const Tensor fb = vec({3, 3, -3, -3, 3, -3}, DType::Float32);
  const std::vector<double> r = values(call("aten.remainder.Tensor", {fa, fb}));
  EXPECT_EQ(r[0], 2);
  EXPECT_EQ(r[1], 1);
  EXPECT_EQ(r[2], -1);
  EXPECT_EQ(r[3], -2);
  EXPECT_TRUE(std::signbit(r[4]));
  EXPECT_EQ(values(call("aten.remainder.Tensor",
                        {vec({5, -5}, DType::Float32), vec({kInf, kInf}, DType::Float32)})),
            (std::vector<double>{5, kInf}));
  EXPECT_TRUE(std::isnan(
      call("aten.fmod.Tensor", {vec({1}, DType::Float32), vec({0}, DType::Float32)}).get(0)));
  // The Scalar is cast to the tensor's dtype: u8 % -3 is u8 % 253.
  EXPECT_EQ(
      values(call("aten.remainder.Scalar", {vec({5, 251}, DType::UInt8), Value(int64_t{-3})})),
      (std::vector<double>{5, 251}));
  EXPECT_EQ(values(call("aten.remainder.Scalar", {vec({5, -7}, DType::Int8), Value(int64_t{-3})})),
            (std::vector<double>{-1, -1}));
  Tensor f = call("aten.fmod.Scalar", {vec({5, -5}, DType::Int64), Value(1.5)});
  EXPECT_EQ(f.dtype(), DType::Float32);
  EXPECT_EQ(values(f), (std::vector<double>{0.5, -0.5}));
  EXPECT_EQ(op_error_of([] {
              call("aten.fmod.Scalar", {vec({5}, DType::Int32), Value(int64_t{0})});
            }),
            "ZeroDivisionError");
  EXPECT_EQ(op_error_of([] {
              call("aten.remainder.Scalar", {vec({1}, DType::Bool), Value(true)});
            }),
            "\"remainder_cpu\" not implemented for 'Bool'");
}

TEST(ArithOps, Pow) {
  const Tensor i = vec({2, -3, 0, 1, -1}, DType::Int32);
  EXPECT_EQ(op_error_of([&] {
              call("aten.pow.Tensor_Scalar", {i, Value(int64_t{-2})});
            }),
            "Integers to negative integer powers are not allowed.");
  Tensor r = call("aten.pow.Tensor_Scalar", {i, Value(-2.0)});
  EXPECT_EQ(r.dtype(), DType::Float32);
  EXPECT_EQ(r.get(0), 0.25);
  EXPECT_EQ(r.get(2), kInf);
  r = call("aten.pow.Tensor_Tensor", {i, vec({-1, -1, -1, -1, -2}, DType::Int32)});
  EXPECT_EQ(values(r), (std::vector<double>{0, 0, 0, 1, 1}));
  r = call("aten.pow.Tensor_Tensor", {vec({3, 2}, DType::UInt8), vec({7, 9}, DType::UInt8)});
  EXPECT_EQ(values(r), (std::vector<double>{139, 0}));  // 2187 mod 256, 512 mod 256
  Tensor big = Tensor::empty({1}, DType::Int64);
  big.set_int(0, 3);
  EXPECT_EQ(call("aten.pow.Tensor_Scalar", {big, Value(int64_t{50})}).get_int(0),
            6048575297968530377LL);
  EXPECT_EQ(call("aten.pow.Tensor_Scalar", {vec({1, 0}, DType::Bool), Value(int64_t{2})}).dtype(),
            DType::Int64);
  EXPECT_EQ(op_error_of([] {
              call("aten.pow.Tensor_Scalar", {vec({1}, DType::Bool), Value(true)});
            }),
            "\"pow\" not implemented for 'Bool'");
  // pow.Scalar: the base is cast to the result dtype; a base of 1 gives ones.
  EXPECT_EQ(values(call("aten.pow.Scalar", {Value(int64_t{300}), vec({1, 2}, DType::UInt8)})),
            (std::vector<double>{44, 144}));
  r = call("aten.pow.Scalar", {Value(0.1), vec({1, 2}, DType::Float16)});
  EXPECT_EQ(r.dtype(), DType::Float16);
  EXPECT_EQ(r.get(0), 0.0999755859375);
  EXPECT_EQ(
      values(call("aten.pow.Scalar", {Value(int64_t{-1}), vec({-1, -2, -3, 3}, DType::Int64)})),
      (std::vector<double>{-1, 1, -1, -1}));
  r = call("aten.pow.Scalar", {Value(int64_t{1}), vec({kNaN, 2}, DType::Float32)});
  EXPECT_EQ(values(r), (std::vector<double>{1, 1}));
  EXPECT_EQ(values(call("aten.pow.Scalar", {Value(int64_t{2}), vec({1, 0}, DType::Bool)})),
            (std::vector<double>{2, 1}));
  r = call("aten.pow.Tensor_Tensor",
           {vec({-2, 0, -0.0}, DType::Float32), vec({0.5, -1, -1}, DType::Float32)});
  EXPECT_TRUE(std::isnan(r.get(0)));
  EXPECT_EQ(r.get(1), kInf);
  EXPECT_EQ(r.get(2), -kInf);
}

TEST(ArithOps, Atan2MaximumMinimum) {
  Tensor r = call("aten.atan2.default", {vec({1, -1}, DType::Int64), vec({0, 0}, DType::Int64)});
  EXPECT_EQ(r.dtype(), DType::Float32);
  EXPECT_FLOAT_EQ(static_cast<float>(r.get(0)), static_cast<float>(M_PI / 2));
  r = call("aten.atan2.default",
           {vec({0, -0.0, 0, -0.0}, DType::Float32), vec({0, 0, -0.0, -0.0}, DType::Float32)});
  EXPECT_FLOAT_EQ(static_cast<float>(r.get(2)), static_cast<float>(M_PI));
  EXPECT_FLOAT_EQ(static_cast<float>(r.get(3)), static_cast<float>(-M_PI));
  EXPECT_EQ(op_error_of([] {
              call("aten.atan2.out", {vec({1}, DType::Float32), vec({1}, DType::Float32),
                                      Tensor::empty({1}, DType::Int64)});
            }),
            "result type Float can't be cast to the desired output type Long");
  r = call("aten.maximum.default",
           {vec({kNaN, 1, 2}, DType::Float32), vec({1, kNaN, 1}, DType::Float32)});
  EXPECT_TRUE(std::isnan(r.get(0)));
  EXPECT_TRUE(std::isnan(r.get(1)));
  EXPECT_EQ(r.get(2), 2);
  r = call("aten.maximum.default", {vec({-1}, DType::Int8), vec({200}, DType::UInt8)});
  EXPECT_EQ(r.dtype(), DType::Int16);
  EXPECT_EQ(r.get(0), 200);
  r = call("aten.minimum.default", {vec({1, 2}, DType::Int64), vec({1.5, 0.5}, DType::Float32)});
  EXPECT_EQ(values(r), (std::vector<double>{1, 0.5}));
  r = call("aten.maximum.default", {vec({1, 0}, DType::Bool), vec({0, 0}, DType::Bool)});
  EXPECT_EQ(r.dtype(), DType::Bool);
}

TEST(ArithOps, Lerp) {
  Tensor r = call("aten.lerp.Scalar",
                  {vec({1, 2}, DType::Float32), vec({3, 4}, DType::Float32), Value(0.5)});
  EXPECT_EQ(values(r), (std::vector<double>{2, 3}));
  r = call("aten.lerp.Scalar",
           {vec({1, 2}, DType::Float32), vec({3, 4}, DType::Float32), Value(int64_t{2})});
  EXPECT_EQ(values(r), (std::vector<double>{5, 6}));
  r = call("aten.lerp.Tensor", {vec({1}, DType::Float32), tensor({3, 4}, {2, 1}, DType::Float32),
                                vec({0.25, 0.5}, DType::Float32)});
  EXPECT_EQ(r.shape(), (Shape{2, 2}));
  EXPECT_EQ(values(r), (std::vector<double>{1.5, 2, 1.75, 2.5}));
  r = call("aten.lerp.Tensor", {vec({kInf, 1}, DType::Float32), vec({1, kInf}, DType::Float32),
                                vec({0.25, 0.75}, DType::Float32)});
  EXPECT_TRUE(std::isnan(r.get(0)));
  EXPECT_TRUE(std::isnan(r.get(1)));
  EXPECT_EQ(
      op_error_of([] {
        call("aten.lerp.Scalar", {vec({1}, DType::Float32), vec({1}, DType::Float64), Value(0.5)});
      }),
      "expected dtype float for `end` but got dtype double");
  EXPECT_EQ(op_error_of([] {
              call("aten.lerp.Tensor", {vec({1}, DType::Float32), vec({1}, DType::Float32),
                                        scalar(0.5, DType::Float16)});
            }),
            "expected dtype float for `weight` but got dtype c10::Half");
  EXPECT_EQ(
      op_error_of([] {
        call("aten.lerp.Scalar", {vec({1}, DType::Int64), vec({1}, DType::Int64), Value(0.5)});
      }),
      "\"lerp_kernel_scalar\" not implemented for 'Long'");
}

TEST(ArithOps, AddcmulAddcdiv) {
  const Tensor a = vec({1, 2}, DType::Int64), b = vec({3, 4}, DType::Int64),
               c = vec({5, 6}, DType::Int64);
  EXPECT_EQ(values(call("aten.addcmul.default", {a, b, c, Value(int64_t{2})})),
            (std::vector<double>{31, 50}));
  EXPECT_EQ(values(call("aten.addcmul.default", {a, b, c, Value(0.5)})),
            (std::vector<double>{1, 2}));
  EXPECT_EQ(values(call("aten.addcmul.default", {vec({1}, DType::Int64), vec({3}, DType::Int64),
                                                 vec({5}, DType::Int64), Value(-2.7)})),
            (std::vector<double>{-29}));
  Tensor r = call("aten.addcmul.default", {a, vec({3, 4}, DType::Float32), c, Value(0.5)});
  EXPECT_EQ(r.dtype(), DType::Float32);
  EXPECT_EQ(values(r), (std::vector<double>{8.5, 14}));
  r = call("aten.addcmul.default", {vec({1}, DType::UInt8), vec({3}, DType::Int8),
                                    vec({5}, DType::Int8), Value(int64_t{1})});
  EXPECT_EQ(r.dtype(), DType::Int16);
  EXPECT_EQ(op_error_of([] {
              const Tensor t = vec({1}, DType::Bool);
              call("aten.addcmul.default", {t, t, t, Value(int64_t{1})});
            }),
            "\"addcmul_cpu_out\" not implemented for 'Bool'");
  EXPECT_NE(op_error_of([&] {
              call("aten.addcdiv.default", {vec({1}, DType::Float32), b, c, Value(int64_t{1})});
            }).find("Integer division with addcdiv is no longer supported"),
            std::string::npos);
  r = call("aten.addcdiv.default", {a, vec({3, 4}, DType::Float32), c, Value(int64_t{1})});
  EXPECT_EQ(r.dtype(), DType::Float32);
  EXPECT_FLOAT_EQ(static_cast<float>(r.get(0)), 1.6f);
  r = call("aten.addcdiv.default", {vec({1, 2}, DType::Float32), vec({3, 0}, DType::Float32),
                                    vec({0, 0}, DType::Float32), Value(int64_t{1})});
  EXPECT_EQ(r.get(0), kInf);
  EXPECT_TRUE(std::isnan(r.get(1)));
}

TEST(ArithOps, EverySampleRunsAndRaisesExactlyOnErrorCases) {
  EXPECT_GE(ops().all().size(), 30u);
  check_family_samples(ops());
}

}  // namespace
}  // namespace crucible
