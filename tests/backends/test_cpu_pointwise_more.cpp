// The cpu backend's pointwise math beyond the activations: glibc's vector math meets crucible's
// f32 tolerance on every ISA level this machine has; integer division and modulo round and raise
// as ATen does; one-byte dtypes compute in their own width with ATen's wrap-around; integral
// inputs of float ops give f32; clamp's bounds, round.decimals and pow.Scalar's base follow
// the reference.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/cpu_features.h"
#include "backends/cpu/pointwise_kernels.h"
#include "backends/pointwise_kernel_sets.h"
#include "crucible/core/error.h"
#include "crucible/ops/op.h"

namespace crucible::cpu {
namespace {

void expect_within_f32_tolerance(float y, double r, const std::string& what) {
  if (std::isnan(r)) {
    EXPECT_TRUE(std::isnan(y)) << what;
  } else if (std::isinf(r)) {
    EXPECT_EQ(y, r) << what;
  } else {
    EXPECT_LE(std::abs(y - r), 1e-5 + 1.3e-6 * std::abs(r))
        << what << " got " << y << " want " << r;
  }
}

// Every element of an odd-length run (vector body and padded tail) against libm in f64.
void expect_unary(PwOp op, double (*ref)(double), float lo, float hi) {
  std::vector<float> x;
  for (int i = 0; i <= 20001; ++i) x.push_back(lo + (hi - lo) * static_cast<float>(i) / 20001.0f);
  for (float s : {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-30f, -1e-30f}) x.push_back(s);
  for (const PwKernels* k : kernel_sets()) {
    std::vector<float> y(x.size());
    const float* in[1] = {x.data()};
    k->f32[static_cast<int>(op)](in, y.data(), static_cast<int64_t>(x.size()), PwParams{});
    // The reference rounded to f32 (beyond float's range: inf), as outputs are compared.
    for (size_t i = 0; i < x.size(); ++i)
      expect_within_f32_tolerance(y[i], static_cast<float>(ref(static_cast<double>(x[i]))),
                                  "x=" + std::to_string(x[i]));
  }
}

TEST(CpuPointwiseMore, TrigonometricMeetF32Tolerance) {
  expect_unary(
      PwOp::Sin, [](double v) { return std::sin(v); }, -100.0f, 100.0f);
  expect_unary(
      PwOp::Sin, [](double v) { return std::sin(v); }, -1e6f, 1e6f);
  expect_unary(
      PwOp::Cos, [](double v) { return std::cos(v); }, -100.0f, 100.0f);
  expect_unary(
      PwOp::Tan, [](double v) { return std::tan(v); }, -1.5f, 1.5f);
  expect_unary(
      PwOp::Asin, [](double v) { return std::asin(v); }, -1.1f, 1.1f);
  expect_unary(
      PwOp::Acos, [](double v) { return std::acos(v); }, -1.1f, 1.1f);
  expect_unary(
      PwOp::Atan, [](double v) { return std::atan(v); }, -1e4f, 1e4f);
}

TEST(CpuPointwiseMore, HyperbolicMeetF32Tolerance) {
  expect_unary(
      PwOp::Sinh, [](double v) { return std::sinh(v); }, -10.0f, 10.0f);
  expect_unary(
      PwOp::Cosh, [](double v) { return std::cosh(v); }, -10.0f, 10.0f);
  expect_unary(
      PwOp::Sinh, [](double v) { return std::sinh(v); }, -95.0f, 95.0f);
  expect_unary(
      PwOp::Asinh, [](double v) { return std::asinh(v); }, -1e3f, 1e3f);
  expect_unary(
      PwOp::Acosh, [](double v) { return std::acosh(v); }, 0.5f, 1e3f);
  expect_unary(
      PwOp::Atanh, [](double v) { return std::atanh(v); }, -1.1f, 1.1f);
}

TEST(CpuPointwiseMore, ExponentialAndLogarithmsMeetF32Tolerance) {
  expect_unary(
      PwOp::Expm1, [](double v) { return std::expm1(v); }, -20.0f, 20.0f);
  expect_unary(
      PwOp::Expm1, [](double v) { return std::expm1(v); }, -1e-3f, 1e-3f);
  expect_unary(
      PwOp::Log2, [](double v) { return std::log2(v); }, -1.0f, 1e6f);
  expect_unary(
      PwOp::Log10, [](double v) { return std::log10(v); }, -1.0f, 1e6f);
  expect_unary(
      PwOp::Log1p, [](double v) { return std::log1p(v); }, -1.5f, 1e3f);
  expect_unary(
      PwOp::Log1p, [](double v) { return std::log1p(v); }, -1e-4f, 1e-4f);
}

TEST(CpuPointwiseMore, Atan2AndPowMeetF32Tolerance) {
  std::vector<float> a, b;
  for (int i = 0; i < 151; ++i)
    for (int j = 0; j < 67; ++j) {
      a.push_back(static_cast<float>(i - 75) * 0.13f);
      b.push_back(static_cast<float>(j - 33) * 0.21f);
    }
  for (float s : {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1.0f}) {
    for (float u : {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 2.5f, -3.0f}) {
      a.push_back(s);
      b.push_back(u);
    }
  }
  for (const PwKernels* k : kernel_sets()) {
    std::vector<float> y(a.size());
    const float* in[2] = {a.data(), b.data()};
    const auto n = static_cast<int64_t>(a.size());
    k->f32[static_cast<int>(PwOp::Atan2)](in, y.data(), n, PwParams{});
    for (size_t i = 0; i < a.size(); ++i)
      expect_within_f32_tolerance(y[i], std::atan2(double{a[i]}, double{b[i]}),
                                  "atan2 " + std::to_string(a[i]) + "," + std::to_string(b[i]));
    k->f32[static_cast<int>(PwOp::Pow)](in, y.data(), n, PwParams{});
    for (size_t i = 0; i < a.size(); ++i) {
      const double r = static_cast<float>(std::pow(double{a[i]}, double{b[i]}));
      expect_within_f32_tolerance(y[i], r,
                                  "pow " + std::to_string(a[i]) + "," + std::to_string(b[i]));
    }
  }
}

// f32 fmod through an f64 quotient is exact: it matches libm's fmodf bit for bit (signed zeros
// included), on quotients near integers, huge quotients, zero and infinite divisors; remainder
// moves it to the divisor's sign and floor division follows ATen's formula, in f32.
TEST(CpuPointwiseMore, FmodRemainderAndFloorDivisionMatchLibmExactly) {
  std::vector<float> a, b;
  const float xs[] = {0.0f,     -0.0f,     1.0f,  -1.0f,       5.5f,        -5.5f,
                      0.3f,     1e-30f,    3e38f, -3e38f,      16777217.0f, 7.0f,
                      INFINITY, -INFINITY, NAN,   0.7f * 3.0f, 1e7f,        2.9999998f};
  const float ys[] = {0.0f, -0.0f,    0.1f,      -0.1f, 0.7f, 3.0f, -3.0f, 1e-30f, 1e-38f,
                      2.0f, INFINITY, -INFINITY, NAN,   0.3f, 1.5f, -1.5f, 1e-5f};
  for (float x : xs)
    for (float y : ys) {
      a.push_back(x);
      b.push_back(y);
    }
  for (int i = 0; i < 3000; ++i) {
    a.push_back(static_cast<float>((i * 7919) % 2001 - 1000) * 0.37f);
    b.push_back(static_cast<float>((i * 104729) % 199 - 99) * 0.13f);
  }
  for (const PwKernels* k : kernel_sets()) {
    std::vector<float> f(a.size()), r(a.size());
    const float* in[2] = {a.data(), b.data()};
    const auto n = static_cast<int64_t>(a.size());
    k->f32[static_cast<int>(PwOp::Fmod)](in, f.data(), n, PwParams{});
    k->f32[static_cast<int>(PwOp::Remainder)](in, r.data(), n, PwParams{});
    std::vector<float> q(a.size());
    k->f32[static_cast<int>(PwOp::DivFloor)](in, q.data(), n, PwParams{});
    for (size_t i = 0; i < a.size(); ++i) {
      const float want = std::fmod(a[i], b[i]);
      float want_r = want;
      if (want_r != 0.0f && (b[i] < 0.0f) != (want_r < 0.0f)) want_r += b[i];
      const std::string what = std::to_string(a[i]) + " % " + std::to_string(b[i]);
      // ATen's div_floor_floating in f32, from libm's fmodf.
      float want_q;
      if (b[i] == 0.0f) {
        want_q = a[i] / b[i];
      } else {
        float div = (a[i] - want) / b[i];
        if (want != 0.0f && (b[i] < 0.0f) != (want < 0.0f)) div -= 1.0f;
        if (div != 0.0f) {
          want_q = std::floor(div);
          if (div - want_q > 0.5f) want_q += 1.0f;
        } else {
          want_q = std::copysign(0.0f, a[i] / b[i]);
        }
      }
      if (std::isnan(want_q))
        EXPECT_TRUE(std::isnan(q[i])) << what;
      else
        EXPECT_EQ(std::bit_cast<uint32_t>(q[i]), std::bit_cast<uint32_t>(want_q)) << what;
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(f[i])) << what;
        EXPECT_TRUE(std::isnan(r[i])) << what;
      } else {
        EXPECT_EQ(std::bit_cast<uint32_t>(f[i]), std::bit_cast<uint32_t>(want)) << what;
        EXPECT_EQ(std::bit_cast<uint32_t>(r[i]), std::bit_cast<uint32_t>(want_r)) << what;
      }
    }
  }
}

Tensor ints(DType t, const std::vector<int64_t>& v) {
  Tensor x = Tensor::empty({static_cast<int64_t>(v.size())}, t);
  for (size_t i = 0; i < v.size(); ++i) x.set_int(static_cast<int64_t>(i), v[i]);
  return x;
}
Tensor floats(DType t, const std::vector<double>& v) {
  Tensor x = Tensor::empty({static_cast<int64_t>(v.size())}, t);
  for (size_t i = 0; i < v.size(); ++i) x.set(static_cast<int64_t>(i), v[i]);
  return x;
}
std::vector<int64_t> int_values(const Tensor& t) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.get_int(i));
  return v;
}

Tensor run(const char* name, const Values& args) {
  static auto cpu = make_cpu_backend();
  return cpu->run(OpRegistry::catalog().get(name), args).at(0).tensor();
}

std::string error_of(const char* name, const Values& args) {
  try {
    run(name, args);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(CpuPointwiseMore, IntegerDivisionRoundsLikePython) {
  for (DType t : {DType::Int8, DType::Int16, DType::Int64}) {
    const Tensor a = ints(t, {-7, 7, -7, 7, 6, 0, -1});
    const Tensor b = ints(t, {2, -2, -2, 2, 3, -5, 4});
    EXPECT_EQ(int_values(run("aten.floor_divide.default", {Value(a), Value(b)})),
              (std::vector<int64_t>{-4, -4, 3, 3, 2, 0, -1}))
        << dtype_code(t);
    EXPECT_EQ(int_values(run("aten.remainder.Tensor", {Value(a), Value(b)})),
              (std::vector<int64_t>{1, -1, -1, 1, 0, 0, 3}));
    EXPECT_EQ(int_values(run("aten.fmod.Tensor", {Value(a), Value(b)})),
              (std::vector<int64_t>{-1, 1, -1, 1, 0, 0, -1}));
  }
  // The most negative value over -1 wraps (no trap); its remainder is 0.
  const Tensor m8 = ints(DType::Int8, {-128, -128});
  const Tensor d8 = ints(DType::Int8, {-1, 3});
  EXPECT_EQ(int_values(run("aten.floor_divide.default", {Value(m8), Value(d8)})),
            (std::vector<int64_t>{-128, -43}));
  EXPECT_EQ(int_values(run("aten.remainder.Tensor", {Value(m8), Value(d8)})),
            (std::vector<int64_t>{0, 1}));
  const Tensor m64 = ints(DType::Int64, {INT64_MIN});
  EXPECT_EQ(
      int_values(run("aten.floor_divide.default", {Value(m64), Value(ints(DType::Int64, {-1}))})),
      (std::vector<int64_t>{INT64_MIN}));
  // u8 modulo a Python number: the number is cast to u8 first (-3 is 253).
  EXPECT_EQ(int_values(run("aten.remainder.Scalar",
                           {Value(ints(DType::UInt8, {200, 254})), Value(int64_t{-3})})),
            (std::vector<int64_t>{200, 1}));
}

TEST(CpuPointwiseMore, IntegerDivisionByZeroRaises) {
  const Tensor a = ints(DType::Int32, {1, 2, 3});
  const Tensor b = ints(DType::Int32, {1, 0, 3});
  EXPECT_NE(error_of("aten.floor_divide.default", {Value(a), Value(b)}).find("ZeroDivisionError"),
            std::string::npos);
  EXPECT_NE(error_of("aten.fmod.Scalar", {Value(a), Value(int64_t{0})}).find("ZeroDivisionError"),
            std::string::npos);
  // 256 is 0 in u8.
  EXPECT_NE(error_of("aten.remainder.Scalar", {Value(ints(DType::UInt8, {5})), Value(int64_t{256})})
                .find("ZeroDivisionError"),
            std::string::npos);
  EXPECT_NE(error_of("aten.div.Tensor_mode", {Value(a), Value(b), Value(std::string("trunc"))})
                .find("ZeroDivisionError"),
            std::string::npos);
  // Floating division by zero is IEEE's.
  const Tensor f = run("aten.fmod.Tensor", {Value(floats(DType::Float32, {1.5, -2})),
                                            Value(floats(DType::Float32, {0, 0}))});
  EXPECT_TRUE(std::isnan(f.get(0)) && std::isnan(f.get(1)));
  const Tensor q = run("aten.floor_divide.default", {Value(floats(DType::Float32, {1.5, -2})),
                                                     Value(floats(DType::Float32, {0, 0}))});
  EXPECT_EQ(q.get(0), INFINITY);
  EXPECT_EQ(q.get(1), -INFINITY);
}

TEST(CpuPointwiseMore, OneByteDtypesWrapAndCompareInTheirOwnSign) {
  const Tensor u = ints(DType::UInt8, {200, 255, 3});
  EXPECT_EQ(int_values(run("aten.add.Tensor", {Value(u), Value(ints(DType::UInt8, {100, 1, 4}))})),
            (std::vector<int64_t>{44, 0, 7}));
  EXPECT_EQ(
      int_values(run("aten.mul.Tensor", {Value(u), Value(ints(DType::UInt8, {2, 255, 100}))})),
      (std::vector<int64_t>{144, 1, 44}));
  const Tensor s = ints(DType::Int8, {-128, 127, -1});
  EXPECT_EQ(int_values(run("aten.neg.default", {Value(s)})), (std::vector<int64_t>{-128, -127, 1}));
  EXPECT_EQ(int_values(run("aten.abs.default", {Value(s)})), (std::vector<int64_t>{-128, 127, 1}));
  EXPECT_EQ(int_values(run("aten.lt.Tensor", {Value(s), Value(ints(DType::Int8, {0, 0, 0}))})),
            (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(
      int_values(run("aten.maximum.default", {Value(s), Value(ints(DType::Int8, {0, 0, 0}))})),
      (std::vector<int64_t>{0, 127, 0}));
  EXPECT_EQ(int_values(run("aten.pow.Tensor_Scalar", {Value(s), Value(int64_t{3})})),
            (std::vector<int64_t>{0, 127, -1}));  // -128^3 = -2^21 wraps to 0
  EXPECT_EQ(int_values(run("aten.sign.default", {Value(s)})), (std::vector<int64_t>{-1, 1, -1}));
  EXPECT_EQ(int_values(run("aten.bitwise_not.default", {Value(s)})),
            (std::vector<int64_t>{127, -128, 0}));
}

// Bool results are stored as 0 or 1 even where the u8 loop computes 2 (true + true).
TEST(CpuPointwiseMore, BoolArithmeticStoresZeroOrOne) {
  const Tensor a = ints(DType::Bool, {1, 1, 0, 0});
  const Tensor b = ints(DType::Bool, {1, 0, 1, 0});
  auto bytes = [](const Tensor& t) {
    std::vector<int> v;
    for (int64_t i = 0; i < t.numel(); ++i)
      v.push_back(static_cast<const uint8_t*>(t.data_ptr())[i]);
    return v;
  };
  const Tensor sum = run("aten.add.Tensor", {Value(a), Value(b)});
  ASSERT_EQ(sum.dtype(), DType::Bool);
  EXPECT_EQ(bytes(sum), (std::vector<int>{1, 1, 1, 0}));
  Tensor inplace = a.clone();
  run("aten.add_.Tensor", {Value(inplace), Value(b)});
  EXPECT_EQ(bytes(inplace), (std::vector<int>{1, 1, 1, 0}));
  EXPECT_EQ(bytes(run("aten.mul.Tensor", {Value(a), Value(b)})), (std::vector<int>{1, 0, 0, 0}));
  EXPECT_EQ(bytes(run("aten.minimum.default", {Value(a), Value(b)})),
            (std::vector<int>{1, 0, 0, 0}));
  EXPECT_EQ(bytes(run("aten.bitwise_not.default", {Value(a)})), (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(bytes(run("aten.logical_xor.default", {Value(a), Value(b)})),
            (std::vector<int>{0, 1, 1, 0}));
}

TEST(CpuPointwiseMore, FloatOpsOfIntegersGiveF32) {
  const Tensor x = ints(DType::Int32, {0, 1, 2147483647});
  const Tensor e = run("aten.exp.default", {Value(x)});
  ASSERT_EQ(e.dtype(), DType::Float32);
  EXPECT_FLOAT_EQ(static_cast<float>(e.get(1)), std::exp(1.0f));
  const Tensor sn = run("aten.sin.default", {Value(x)});
  ASSERT_EQ(sn.dtype(), DType::Float32);
  // The input is cast to f32 first: sin(2^31), not sin(2^31 - 1).
  EXPECT_NEAR(sn.get(2), std::sin(2147483648.0), 1e-6);
  const Tensor d = run("aten.div.Tensor", {Value(ints(DType::Int64, {7, -7})), Value(int64_t{2})});
  ASSERT_EQ(d.dtype(), DType::Float32);
  EXPECT_EQ(d.get(0), 3.5);
  EXPECT_EQ(d.get(1), -3.5);
  const Tensor b = run("aten.sqrt.default", {Value(ints(DType::Bool, {1, 0}))});
  ASSERT_EQ(b.dtype(), DType::Float32);
  EXPECT_EQ(b.get(0), 1.0);
  EXPECT_EQ(b.get(1), 0.0);
  // In place, an integral self cannot hold the f32 result.
  EXPECT_NE(error_of("aten.exp_.default", {Value(x.clone())}).find("can't be cast"),
            std::string::npos);
}

TEST(CpuPointwiseMore, ClampBoundsAsTheReference) {
  const Tensor x = ints(DType::Int16, {-300, -5, 0, 5, 300});
  EXPECT_EQ(
      int_values(run("aten.clamp.default", {Value(x), Value(int64_t{-10}), Value(int64_t{10})})),
      (std::vector<int64_t>{-10, -5, 0, 5, 10}));
  EXPECT_EQ(int_values(run("aten.clamp_min.default", {Value(x), Value(int64_t{0})})),
            (std::vector<int64_t>{0, 0, 0, 5, 300}));
  EXPECT_EQ(int_values(run("aten.clamp_max.default", {Value(x), Value(int64_t{0})})),
            (std::vector<int64_t>{-300, -5, 0, 0, 0}));
  // lo > hi gives hi.
  const Tensor lo = ints(DType::Int16, {0, 0, 0, 0, 0});
  const Tensor hi = ints(DType::Int16, {-1, 1, -1, 1, 100});
  EXPECT_EQ(int_values(run("aten.clamp.Tensor", {Value(x), Value(lo), Value(hi)})),
            (std::vector<int64_t>{-1, 0, -1, 1, 100}));
  EXPECT_EQ(int_values(run("aten.clamp.Tensor", {Value(x), Value(), Value(hi)})),
            (std::vector<int64_t>{-300, -5, -1, 1, 100}));
  // An i64 tensor clamped to 0.5 is f32.
  const Tensor h =
      run("aten.clamp.default", {Value(ints(DType::Int64, {-1, 3})), Value(0.5), Value()});
  ASSERT_EQ(h.dtype(), DType::Float32);
  EXPECT_EQ(h.get(0), 0.5);
  EXPECT_EQ(h.get(1), 3.0);
  // NaN in a floating bound propagates.
  const Tensor f = floats(DType::Float32, {1, 2});
  const Tensor n =
      run("aten.clamp.Tensor", {Value(f), Value(floats(DType::Float32, {NAN, 0})), Value()});
  EXPECT_TRUE(std::isnan(n.get(0)));
  EXPECT_EQ(n.get(1), 2.0);
  EXPECT_NE(error_of("aten.clamp.Tensor", {Value(f), Value(), Value()}).find("At least one"),
            std::string::npos);
  // hardtanh on u8 with a negative limit raises; integral limits are truncated.
  EXPECT_NE(
      error_of("aten.hardtanh.default", {Value(ints(DType::UInt8, {1})), Value(-1.0), Value(1.0)})
          .find("unsigned type with negative limits"),
      std::string::npos);
  EXPECT_EQ(int_values(run("aten.hardtanh.default",
                           {Value(ints(DType::Int32, {-9, 0, 9})), Value(-2.7), Value(3.9)})),
            (std::vector<int64_t>{-2, 0, 3}));
}

TEST(CpuPointwiseMore, RoundDecimalsRoundsInTheOpmathType) {
  // 0.35f * 10 is 3.5f in f32: half to even gives 4.
  const Tensor x = floats(DType::Float32, {0.35, 0.25, -1.25, 15, 25, 1e30});
  const Tensor r1 = run("aten.round.decimals", {Value(x), Value(int64_t{1})});
  EXPECT_FLOAT_EQ(static_cast<float>(r1.get(0)), 0.4f);
  EXPECT_FLOAT_EQ(static_cast<float>(r1.get(1)), 0.2f);
  EXPECT_FLOAT_EQ(static_cast<float>(r1.get(2)), -1.2f);
  const Tensor rm = run("aten.round.decimals", {Value(x), Value(int64_t{-1})});
  EXPECT_EQ(rm.get(3), 20.0);
  EXPECT_EQ(rm.get(4), 20.0);
  // 10^40 overflows float: x * inf / inf is NaN, as in ATen's float kernel.
  const Tensor r40 = run("aten.round.decimals", {Value(x), Value(int64_t{40})});
  EXPECT_TRUE(std::isnan(r40.get(0)));
  EXPECT_NE(error_of("aten.round.decimals", {Value(ints(DType::Int32, {1})), Value(int64_t{1})})
                .find("not implemented for 'Int'"),
            std::string::npos);
}

TEST(CpuPointwiseMore, SignAndLogicalNotOfSpecialValues) {
  const Tensor x = floats(DType::Float32, {NAN, -0.0, 0.0, -INFINITY, 3});
  const Tensor sg = run("aten.sgn.default", {Value(x)});
  EXPECT_EQ(sg.get(0), 0.0);
  EXPECT_EQ(sg.get(1), 0.0);
  EXPECT_EQ(sg.get(3), -1.0);
  EXPECT_EQ(sg.get(4), 1.0);
  const Tensor ln = run("aten.logical_not.default", {Value(x)});
  ASSERT_EQ(ln.dtype(), DType::Bool);
  EXPECT_EQ(int_values(ln), (std::vector<int64_t>{0, 1, 1, 0, 0}));
  EXPECT_NE(error_of("aten.bitwise_not.default", {Value(x)}).find("not implemented"),
            std::string::npos);
}

// pow.Scalar casts the base to the result dtype first: 0.1 ** f16 raises f16(0.1); 300 ** u8
// raises 44.
TEST(CpuPointwiseMore, PowScalarCastsItsBase) {
  const OpDef& op = OpRegistry::catalog().get("aten.pow.Scalar");
  const Tensor e = floats(DType::Float16, {1, 2, 3, 0.5});
  const Values args = {Value(0.1), Value(e)};
  const Tensor got = run("aten.pow.Scalar", args);
  const Tensor want = op.run_ref(args).at(0).tensor();
  ASSERT_EQ(got.dtype(), DType::Float16);
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(got.get(i), want.get(i)) << i;
  EXPECT_EQ(
      int_values(run("aten.pow.Scalar", {Value(int64_t{300}), Value(ints(DType::UInt8, {1, 2}))})),
      (std::vector<int64_t>{44, 144}));  // 44 * 44 = 1936 = 144 (mod 256)
  // Negative integer exponents in a tensor give 0, or +-1 for bases +-1.
  EXPECT_EQ(
      int_values(run("aten.pow.Tensor_Tensor", {Value(ints(DType::Int32, {2, 1, -1, -1})),
                                                Value(ints(DType::Int32, {-1, -5, -5, -4}))})),
      (std::vector<int64_t>{0, 1, -1, 1}));
}

// Comparisons cast both operands to the promoted dtype: an f16 tensor against a 0-d f32 tensor
// (or a Python number) compares in f16, where 0.1 rounds to the tensor's value.
TEST(CpuPointwiseMore, ComparisonsCastTheScalarToTheTensorsDtype) {
  const Tensor x = floats(DType::Float16, {0.1, 0.2});
  Tensor s = Tensor::empty({}, DType::Float32);
  s.set(0, 0.1);
  EXPECT_EQ(int_values(run("aten.eq.Tensor", {Value(x), Value(s)})), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(int_values(run("aten.lt.Tensor", {Value(x), Value(s)})), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(int_values(run("aten.eq.Scalar", {Value(x), Value(0.1)})),
            (std::vector<int64_t>{1, 0}));
}

}  // namespace
}  // namespace crucible::cpu
