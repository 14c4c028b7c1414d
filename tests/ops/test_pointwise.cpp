// ATen semantics of the pointwise catalog entries' references: type promotion, broadcasting,
// alpha, errors, rounding, special values, integer wrap-around and in-place behaviour.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "crucible/core/error.h"
#include "crucible/ops/op.h"
#include "ops/families.h"

namespace crucible {
namespace {

const OpRegistry& pointwise_ops() {
  static const OpRegistry* r = [] {
    auto* reg = new OpRegistry();
    register_pointwise_unary_ops(*reg);
    register_pointwise_binary_ops(*reg);
    return reg;
  }();
  return *r;
}

Values call(const std::string& op, const Values& args) {
  return pointwise_ops().get(op).run_ref(args);
}

Tensor tensor(const std::vector<double>& vals, const Shape& shape, DType t) {
  Tensor x = Tensor::empty(shape, t);
  for (size_t i = 0; i < vals.size(); ++i) x.set(static_cast<int64_t>(i), vals[i]);
  return x;
}
Tensor vec(const std::vector<double>& vals, DType t) {
  return tensor(vals, {static_cast<int64_t>(vals.size())}, t);
}
Tensor scalar(double v, DType t) { return Tensor::scalar(v, t); }

// The op error message raised by `fn`, or "" when it does not raise.
template <typename Fn>
std::string op_error_of(Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OpError) << e.what();
    return e.what();
  }
  return "";
}

DType add_dtype(const Value& a, const Value& b) {
  return call("aten.add.Tensor", {a, b, Value(int64_t{1})})[0].tensor().dtype();
}

TEST(PointwisePromotion, ResultTypeTable) {
  const Tensor i32 = vec({1, 2}, DType::Int32), f16 = vec({1, 2}, DType::Float16);
  const Tensor u8 = vec({1, 2}, DType::UInt8), i8 = vec({1, 2}, DType::Int8);
  const Tensor i64 = vec({1, 2}, DType::Int64), f32 = vec({1, 2}, DType::Float32);
  const Tensor b8 = vec({1, 0}, DType::Bool), bf16 = vec({1, 2}, DType::BFloat16);
  EXPECT_EQ(add_dtype(i32, f16), DType::Float16);
  EXPECT_EQ(add_dtype(u8, i8), DType::Int16);
  EXPECT_EQ(add_dtype(i64, Value(2.5)), DType::Float32);  // a Python float: default dtype
  EXPECT_EQ(add_dtype(scalar(1, DType::Float64), f32), DType::Float32);  // 0-d: same category
  EXPECT_EQ(add_dtype(i64, scalar(1, DType::Float64)), DType::Float64);  // 0-d: higher category
  EXPECT_EQ(add_dtype(u8, scalar(1, DType::Int64)), DType::UInt8);
  EXPECT_EQ(add_dtype(b8, b8), DType::Bool);
  EXPECT_EQ(add_dtype(b8, Value(int64_t{1})), DType::Int64);
  EXPECT_EQ(add_dtype(f16, bf16), DType::Float32);
  EXPECT_EQ(add_dtype(f16, Value(int64_t{3})), DType::Float16);
  EXPECT_EQ(add_dtype(scalar(1, DType::Float32), scalar(1, DType::Float16)), DType::Float32);
  const Values m = call("aten.mul.Scalar", {i32, Value(0.5)});
  EXPECT_EQ(m[0].tensor().dtype(), DType::Float32);
  EXPECT_DOUBLE_EQ(m[0].tensor().get(1), 1.0);
}

TEST(PointwiseDiv, TrueDivisionOfIntegersGivesFloat) {
  const Values r = call("aten.div.Tensor",
                        {vec({7, 1, -1, 0, -7}, DType::Int64), vec({2, 0, 0, 0, 2}, DType::Int32)});
  const Tensor& t = r[0].tensor();
  EXPECT_EQ(t.dtype(), DType::Float32);
  EXPECT_EQ(t.get(0), 3.5);
  EXPECT_EQ(t.get(1), std::numeric_limits<double>::infinity());
  EXPECT_EQ(t.get(2), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(t.get(3)));
  EXPECT_EQ(t.get(4), -3.5);
  EXPECT_EQ(
      call("aten.div.Tensor", {vec({1}, DType::Bool), vec({1}, DType::Bool)})[0].tensor().dtype(),
      DType::Float32);
  // Floating division by -0.0 keeps the sign.
  EXPECT_EQ(call("aten.div.Tensor", {vec({1}, DType::Float32), vec({-0.0}, DType::Float32)})[0]
                .tensor()
                .get(0),
            -std::numeric_limits<double>::infinity());
}

TEST(PointwiseBroadcast, BothWays) {
  const Tensor a = tensor({1, 2, 3, 4, 5, 6, 7, 8}, {4, 1, 2}, DType::Float32);
  const Tensor b = tensor({10, 20, 30}, {3, 1}, DType::Float32);
  const Tensor r = call("aten.add.Tensor", {a, b, Value(int64_t{1})})[0].tensor();
  EXPECT_EQ(r.shape(), (Shape{4, 3, 2}));
  EXPECT_EQ(r.get(0), 11);   // a[0,0,0] + b[0,0]
  EXPECT_EQ(r.get(5), 32);   // a[0,0,1] + b[2,0]
  EXPECT_EQ(r.get(23), 38);  // a[3,0,1] + b[2,0]
  EXPECT_NE(
      op_error_of([] {
        call("aten.mul.Tensor", {vec({1, 2, 3}, DType::Float32), vec({1, 2}, DType::Float32)});
      }),
      "");
}

TEST(PointwiseBinary, NonContiguousInputs) {
  const Tensor base = tensor({1, 2, 3, 4, 5, 6}, {2, 3}, DType::Int32);
  const Tensor t = base.transpose(0, 1);  // [[1, 4], [2, 5], [3, 6]]
  const Tensor r =
      call("aten.sub.Tensor", {t, vec({1, 0}, DType::Int32), Value(int64_t{1})})[0].tensor();
  EXPECT_EQ(r.shape(), (Shape{3, 2}));
  const std::vector<int64_t> want = {0, 4, 1, 5, 2, 6};
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(r.get_int(i), want[i]);
}

TEST(PointwiseAlpha, ScalesOtherAndIsChecked) {
  const Tensor a = vec({1, 2}, DType::Float32), b = vec({10, 20}, DType::Float32);
  Tensor r = call("aten.add.Tensor", {a, b, Value(0.5)})[0].tensor();
  EXPECT_EQ(r.get(1), 12);
  r = call("aten.sub.Tensor", {a, b, Value(int64_t{2})})[0].tensor();
  EXPECT_EQ(r.get(0), -19);
  r = call("aten.add.Scalar", {vec({4}, DType::Int64), Value(int64_t{5}), Value(int64_t{-2})})[0]
          .tensor();
  EXPECT_EQ(r.get_int(0), -6);
  const Tensor i = vec({1, 2}, DType::Int32);
  EXPECT_EQ(op_error_of([&] {
              call("aten.add.Tensor", {i, i, Value(0.5)});
            }),
            "For integral input tensors, argument alpha must not be a floating point number.");
  EXPECT_EQ(op_error_of([&] {
              call("aten.add.Tensor", {a, b, Value(true)});
            }),
            "Boolean alpha only supported for Boolean results.");
  // Integral tensor with a float alpha whose result is floating is fine.
  EXPECT_EQ(op_error_of([&] { call("aten.add.Tensor", {i, a, Value(0.5)}); }), "");
  // A bool result converts alpha to bool: true + (-1) * true is true.
  const Tensor t = vec({1, 0}, DType::Bool);
  r = call("aten.add.Tensor", {t, t, Value(int64_t{-1})})[0].tensor();
  EXPECT_EQ(r.dtype(), DType::Bool);
  EXPECT_EQ(r.get_int(0), 1);
  EXPECT_EQ(r.get_int(1), 0);
  r = call("aten.add.Tensor", {t, vec({1, 1}, DType::Bool), Value(true)})[0].tensor();
  EXPECT_EQ(r.get_int(0), 1);  // true + true saturates to true
}

TEST(PointwiseBool, SubRaisesMulIsAnd) {
  const Tensor t = vec({1, 0}, DType::Bool);
  EXPECT_EQ(op_error_of([&] {
              call("aten.sub.Tensor", {t, t, Value(int64_t{1})});
            }),
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
            "or `logical_xor()` operator instead.");
  EXPECT_NE(op_error_of([&] {
              call("aten.sub.Tensor", {t, vec({1, 2}, DType::Float32), Value(int64_t{1})});
            }).find("with a bool tensor is not supported"),
            std::string::npos);
  const Tensor m = call("aten.mul.Tensor", {t, vec({1, 1}, DType::Bool)})[0].tensor();
  EXPECT_EQ(m.dtype(), DType::Bool);
  EXPECT_EQ(m.get_int(0), 1);
  EXPECT_EQ(m.get_int(1), 0);
  EXPECT_NE(op_error_of([&] { call("aten.neg.default", {t}); }).find("Negation"),
            std::string::npos);
  EXPECT_EQ(op_error_of([&] { call("aten.relu.default", {t}); }),
            "Boolean inputs not supported for relu");
}

TEST(PointwiseIntegers, WrapAround) {
  Tensor r = call("aten.add.Tensor",
                  {vec({2147483647}, DType::Int32), vec({1}, DType::Int32), Value(int64_t{1})})[0]
                 .tensor();
  EXPECT_EQ(r.get_int(0), -2147483648LL);
  r = call("aten.add.Scalar", {vec({5}, DType::UInt8), Value(int64_t{300}), Value(int64_t{1})})[0]
          .tensor();
  EXPECT_EQ(r.dtype(), DType::UInt8);
  EXPECT_EQ(r.get_int(0), 49);  // (5 + 300) mod 256
  Tensor big = Tensor::empty({1}, DType::Int64);
  big.set_int(0, int64_t{1} << 62);
  r = call("aten.mul.Scalar", {big, Value(int64_t{4})})[0].tensor();
  EXPECT_EQ(r.get_int(0), 0);
  big.set_int(0, std::numeric_limits<int64_t>::min());
  r = call("aten.neg.default", {big})[0].tensor();
  EXPECT_EQ(r.get_int(0), std::numeric_limits<int64_t>::min());
  r = call("aten.neg.default", {vec({-128, 5}, DType::Int8)})[0].tensor();
  EXPECT_EQ(r.get_int(0), -128);
  EXPECT_EQ(r.get_int(1), -5);
  r = call("aten.sub.Tensor",
           {vec({3}, DType::UInt8), vec({5}, DType::UInt8), Value(int64_t{1})})[0]
          .tensor();
  EXPECT_EQ(r.get_int(0), 254);
}

TEST(PointwiseRounding, HalfRoundedOnce) {
  // 1 + (2^-11 + 2^-30) is just above the f16 tie between 1 and 1 + 2^-10: rounded once it is
  // 1 + 2^-10; rounded through f32 first it would be the tie and round to even (1.0).
  const Tensor r = call("aten.add.Tensor",
                        {vec({1.0}, DType::Float16),
                         Value(std::ldexp(1.0, -11) + std::ldexp(1.0, -30)), Value(int64_t{1})})[0]
                       .tensor();
  EXPECT_EQ(r.dtype(), DType::Float16);
  EXPECT_EQ(r.get(0), 1.0 + std::ldexp(1.0, -10));
  // Overflow of the output dtype gives inf.
  const Tensor o =
      call("aten.mul.Tensor", {vec({60000}, DType::Float16), vec({2}, DType::Float16)})[0].tensor();
  EXPECT_EQ(o.get(0), std::numeric_limits<double>::infinity());
}

TEST(PointwiseSpecial, NanAndSignedZero) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  Tensor r = call("aten.add.Tensor", {vec({nan, 1, inf}, DType::Float32),
                                      vec({1, nan, -inf}, DType::Float32), Value(int64_t{1})})[0]
                 .tensor();
  EXPECT_TRUE(std::isnan(r.get(0)));
  EXPECT_TRUE(std::isnan(r.get(1)));
  EXPECT_TRUE(std::isnan(r.get(2)));  // inf - inf
  r = call("aten.relu.default", {vec({-0.0, nan, -3, 2.5, -inf}, DType::Float32)})[0].tensor();
  EXPECT_EQ(r.get(0), 0.0);
  EXPECT_TRUE(std::signbit(r.get(0)));  // relu(-0.0) is -0.0, as clamp_min(x, 0) gives
  EXPECT_TRUE(std::isnan(r.get(1)));
  EXPECT_EQ(r.get(2), 0.0);
  EXPECT_EQ(r.get(3), 2.5);
  EXPECT_EQ(r.get(4), 0.0);
  r = call("aten.relu.default", {vec({-3, 4}, DType::Int16)})[0].tensor();
  EXPECT_EQ(r.dtype(), DType::Int16);
  EXPECT_EQ(r.get_int(0), 0);
  r = call("aten.sigmoid.default", {vec({-inf, inf, 0, nan}, DType::Float32)})[0].tensor();
  EXPECT_EQ(r.get(0), 0.0);
  EXPECT_EQ(r.get(1), 1.0);
  EXPECT_EQ(r.get(2), 0.5);
  EXPECT_TRUE(std::isnan(r.get(3)));
  r = call("aten.neg.default", {vec({0.0}, DType::Float32)})[0].tensor();
  EXPECT_TRUE(std::signbit(r.get(0)));
}

TEST(PointwiseUnary, FloatOpsPromoteIntegers) {
  Tensor r = call("aten.exp.default", {vec({0, 1}, DType::Int64)})[0].tensor();
  EXPECT_EQ(r.dtype(), DType::Float32);
  EXPECT_FLOAT_EQ(static_cast<float>(r.get(1)), static_cast<float>(std::exp(1.0)));
  r = call("aten.exp.default", {vec({1}, DType::Bool)})[0].tensor();
  EXPECT_EQ(r.dtype(), DType::Float32);
  r = call("aten.tanh.default", {vec({1, -2}, DType::Int32)})[0].tensor();
  EXPECT_EQ(r.dtype(), DType::Float32);
  EXPECT_FLOAT_EQ(static_cast<float>(r.get(1)), static_cast<float>(std::tanh(-2.0)));
  r = call("aten.exp.default", {vec({12}, DType::Float16)})[0].tensor();
  EXPECT_EQ(r.dtype(), DType::Float16);
  EXPECT_EQ(r.get(0), std::numeric_limits<double>::infinity());  // e^12 > 65504
  r = call("aten.tanh.default", {vec({0.5}, DType::Float64)})[0].tensor();
  EXPECT_EQ(r.get(0), std::tanh(0.5));
}

TEST(PointwiseGelu, ExactAndTanh) {
  const Tensor x = vec({1, -1, 0, 3}, DType::Float64);
  Tensor r = call("aten.gelu.default", {x, Value("none")})[0].tensor();
  EXPECT_NEAR(r.get(0), 0.8413447460685429, 1e-15);
  EXPECT_NEAR(r.get(1), -0.15865525393145707, 1e-15);
  EXPECT_EQ(r.get(2), 0.0);
  EXPECT_NEAR(r.get(3), 2.99595030590511, 1e-14);
  r = call("aten.gelu.default", {x, Value("tanh")})[0].tensor();
  EXPECT_NEAR(r.get(0), 0.8411919906082768, 1e-15);
  EXPECT_NEAR(r.get(1), -0.15880800939172324, 1e-15);
  EXPECT_EQ(op_error_of([] {
              call("aten.gelu.default", {vec({1}, DType::Int64), Value("none")});
            }),
            "\"GeluKernelImpl\" not implemented for 'Long'");
  EXPECT_EQ(op_error_of([&] {
              call("aten.gelu.default", {x, Value("erf")});
            }),
            "approximate argument must be either none or tanh.");
  r = call("aten.gelu.default", {vec({1}, DType::BFloat16), Value("none")})[0].tensor();
  EXPECT_EQ(r.dtype(), DType::BFloat16);
  EXPECT_EQ(r.get(0), 0.83984375);  // 0.84134... rounded once to bf16
}

TEST(PointwiseInplace, AddMutatesSelfAndReturnsIt) {
  const Tensor self = vec({1, 2, 3}, DType::Float32);
  const Values r = call("aten.add_.Tensor", {self, vec({10}, DType::Int64), Value(int64_t{2})});
  EXPECT_TRUE(r[0].tensor().shares_storage(self));
  EXPECT_EQ(r[0].tensor().data_ptr(), self.data_ptr());
  EXPECT_EQ(self.get(0), 21);
  EXPECT_EQ(self.get(2), 23);
  // Aliased other: x.add_(x).
  call("aten.add_.Tensor", {self, self, Value(int64_t{1})});
  EXPECT_EQ(self.get(1), 44);
  // f16 self with an f32 other: computed in f32, cast to f16.
  const Tensor h = vec({1}, DType::Float16);
  call("aten.add_.Tensor", {h, vec({1.0 / 3}, DType::Float32), Value(int64_t{1})});
  EXPECT_EQ(h.dtype(), DType::Float16);
  EXPECT_EQ(h.get(0), 1.3330078125);
}

TEST(PointwiseInplace, AddErrors) {
  EXPECT_EQ(op_error_of([] {
              call("aten.add_.Tensor",
                   {vec({1, 2}, DType::Int64), vec({1, 2}, DType::Float32), Value(int64_t{1})});
            }),
            "result type Float can't be cast to the desired output type Long");
  EXPECT_EQ(op_error_of([] {
              call("aten.add_.Tensor",
                   {vec({1, 2}, DType::Float32), tensor({1, 2, 3, 4}, {2, 2}, DType::Float32),
                    Value(int64_t{1})});
            }),
            "output with shape [2] doesn't match the broadcast shape [2, 2]");
  const Tensor expanded = vec({1, 2}, DType::Float32).expand({3, 2});
  EXPECT_NE(op_error_of([&] {
              call("aten.add_.Tensor", {expanded, vec({1, 2}, DType::Float32), Value(int64_t{1})});
            }).find("more than one element of the written-to tensor"),
            std::string::npos);
  EXPECT_NE(op_error_of([&] { call("aten.relu_.default", {expanded}); }), "");
}

TEST(PointwiseInplace, ReluMutatesSelf) {
  const Tensor base = tensor({-1, 2, -3, 4, -5, 6}, {2, 3}, DType::Float32);
  const Tensor self = base.transpose(0, 1);
  const Values r = call("aten.relu_.default", {self});
  EXPECT_EQ(r[0].tensor().data_ptr(), self.data_ptr());
  const std::vector<double> want = {0, 2, 0, 4, 0, 6};
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(base.get(i), want[i]);
}

}  // namespace
}  // namespace crucible
