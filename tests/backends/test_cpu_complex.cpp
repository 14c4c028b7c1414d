// The cpu backend's complex add, sub, mul and div: hand-computed products and quotients,
// c10::complex's formulas on special values (the textbook product gives NaN where C99 would
// recover an infinity; division by zero), promotion with real tensors and 0-d complex tensors,
// alpha, broadcasting and strides, add_ (self aliasing other) against the reference, the meta
// function's errors (a complex result into a real tensor), and conversions to and from
// complex dtypes.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <string>

#include "test_cpu_nn_check.h"

namespace crucible::cpu_test {
namespace {

const DType c64 = DType::Complex64, c128 = DType::Complex128;

Tensor cfilled(const Shape& shape, DType dt, int seed = 1) {
  const Tensor re = filled(shape, DType::Float64, seed),
               im = filled(shape, DType::Float64, seed + 7);
  Tensor t = Tensor::empty(shape, dt);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_complex(i, {re.get(i), im.get(i)});
  return t;
}

Tensor cvec(std::initializer_list<std::complex<double>> v, DType dt) {
  Tensor t = Tensor::empty({static_cast<int64_t>(v.size())}, dt);
  int64_t i = 0;
  for (const auto& x : v) t.set_complex(i++, x);
  return t;
}

Tensor run_cpu(const std::string& name, const Values& args) {
  auto cpu = make_cpu_backend();
  return cpu->run(OpRegistry::catalog().get(name), args).at(0).tensor();
}

TEST(CpuComplex, HandComputedValues) {
  const Tensor x = cvec({{1, 2}, {-1, 0.5}}, c64), y = cvec({{3, 4}, {2, -2}}, c64);
  const Tensor prod = run_cpu("aten.mul.Tensor", {x, y});
  EXPECT_EQ(prod.dtype(), c64);
  EXPECT_EQ(prod.get_complex(0), std::complex<double>(-5, 10));
  EXPECT_EQ(prod.get_complex(1), std::complex<double>(-1, 3));  // (-2 + 1) + (2 + 1)i
  const Tensor quot = run_cpu("aten.div.Tensor", {x, y});
  EXPECT_NEAR(quot.get_complex(0).real(), 0.44, 1e-7);
  EXPECT_NEAR(quot.get_complex(0).imag(), 0.08, 1e-7);
  const Tensor sum = run_cpu("aten.add.Tensor", {x, y, Value(0.5)});
  EXPECT_EQ(sum.get_complex(0), std::complex<double>(2.5, 4));
  const Tensor diff = run_cpu("aten.sub.Tensor", {x, y, Value(int64_t{2})});
  EXPECT_EQ(diff.get_complex(0), std::complex<double>(-5, -6));
}

TEST(CpuComplex, SpecialValuesFollowC10Formulas) {
  const double inf = INFINITY;
  const Tensor x = cvec({{inf, 0}, {1, 1}, {0, 0}}, c128), y = cvec({{1, 0}, {0, 0}, {0, 0}}, c128);
  const Tensor prod = run_cpu("aten.mul.Tensor", {x, y});
  EXPECT_EQ(prod.get_complex(0).real(), inf);
  EXPECT_TRUE(std::isnan(prod.get_complex(0).imag()));  // inf * 0 + 0 * 1
  const Tensor quot = run_cpu("aten.div.Tensor", {x, y});
  EXPECT_EQ(quot.get_complex(1), std::complex<double>(inf, inf));  // (1/0, 1/0)
  EXPECT_TRUE(std::isnan(quot.get_complex(2).real()));
  for (const char* op : {"aten.add.Tensor", "aten.mul.Tensor", "aten.div.Tensor"}) {
    Values args{Tensor(x), Tensor(y)};
    if (std::string(op) == "aten.add.Tensor") args.emplace_back(int64_t{1});
    expect_matches_ref(op, args);
  }
}

TEST(CpuComplex, PromotionBroadcastAndStridesMatchTheReference) {
  const Tensor f64 = filled({4, 5}, DType::Float64), f32 = filled({4, 5}, DType::Float32);
  const Tensor i64 = filled({5}, DType::Int64);
  Tensor zero_d = Tensor::empty({}, c128);
  zero_d.set_complex(0, {0.1, -1.0 / 3});
  const Tensor a = cfilled({4, 5}, c64);
  const Tensor bc = cfilled({4, 1, 3}, c128), bc2 = cfilled({5, 3}, c128, 3);
  const Tensor tr = cfilled({4, 6}, c64, 5).transpose(0, 1), plain = cfilled({6, 4}, c64, 6);
  for (const char* op :
       {"aten.add.Tensor", "aten.sub.Tensor", "aten.mul.Tensor", "aten.div.Tensor"}) {
    const bool alpha =
        std::string(op).starts_with("aten.add") || std::string(op).starts_with("aten.sub");
    auto call = [&](const Tensor& x, const Tensor& y) {
      Values args{Tensor(x), Tensor(y)};
      if (alpha) args.emplace_back(0.5);
      const Values out = expect_matches_ref(op, args);
      return out.at(0).tensor();
    };
    EXPECT_EQ(call(a, f64).dtype(), c128) << op;      // c64 with f64 -> c128
    EXPECT_EQ(call(f32, zero_d).dtype(), c64) << op;  // a 0-d c128 does not widen f32
    EXPECT_EQ(call(a, i64).dtype(), c64) << op;
    EXPECT_EQ(call(bc, bc2).shape(), (Shape{4, 5, 3})) << op;
    call(tr, plain);
  }
  // Scalar overloads: a complex tensor with a real number.
  expect_matches_ref("aten.mul.Scalar", {cfilled({3, 4}, c64), Value(-1.5)});
  expect_matches_ref("aten.add.Scalar", {cfilled({3, 4}, c64), Value(2.0), Value(int64_t{3})});
}

TEST(CpuComplex, InPlace) {
  // Into c64 self: computed in c128, rounded once into self; other broadcast.
  expect_matches_ref("aten.add_.Tensor",
                     {cfilled({3, 4}, c64), cfilled({3, 4}, c128, 2), Value(int64_t{2})});
  expect_matches_ref("aten.add_.Tensor", {cfilled({3, 4}, c128), cfilled({4}, c64, 3), Value(0.5)});
  // self is other: each element read before it is written.
  const Tensor s = cfilled({3, 4}, c64);
  const Values out = expect_matches_ref("aten.add_.Tensor", {s, s, Value(int64_t{1})});
  EXPECT_EQ(out.at(0).tensor().get_complex(0), 2.0 * s.get_complex(0));
  // A self transposed against other: other (a view of self's storage) is read first.
  const Tensor sq = cfilled({4, 4}, c64);
  expect_matches_ref("aten.add_.Tensor", {sq, sq.transpose(0, 1), Value(int64_t{1})});
}

TEST(CpuComplex, OverloadsWithoutComplexResultsStayUnsupported) {
  auto cpu = make_cpu_backend();
  const Values div_args{cfilled({3, 4}, c64), Value(2.0)};
  const Values sub_args{cfilled({3, 4}, c64), Value(2.0), Value(int64_t{1})};
  for (const char* op : {"aten.div.Scalar", "aten.sub.Scalar"}) {
    try {
      cpu->run(OpRegistry::catalog().get(op),
               std::string(op) == "aten.div.Scalar" ? div_args : sub_args);
      FAIL() << op;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Unsupported) << op << ": " << e.what();
    }
  }
}

TEST(CpuComplex, ComplexResultIntoARealTensorRaises) {
  auto cpu = make_cpu_backend();
  try {
    cpu->run(OpRegistry::catalog().get("aten.add_.Tensor"),
             {filled({3, 4}, DType::Float32), cfilled({3, 4}, c64), Value(int64_t{1})});
    FAIL() << "a complex result cannot be written into an f32 self";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OpError);
    EXPECT_NE(std::string(e.what()).find("can't be cast"), std::string::npos) << e.what();
  }
}

// _to_copy(self, dtype, layout, device, pin_memory, non_blocking, memory_format).
Values to_copy_args(const Tensor& x, DType dt) {
  return {x, Value(dt), Value(), Value(), Value(), Value(false), Value()};
}

TEST(CpuComplex, CopiesToAndFromComplexDtypes) {
  // f16 into c32 (the traces' call): each part exact, imaginary part zero.
  const Tensor h = filled({4, 6}, DType::Float16);
  const Values c32 = expect_matches_ref("aten._to_copy.default", to_copy_args(h, DType::Complex32));
  const Tensor c = c32.at(0).tensor();
  ASSERT_EQ(c.dtype(), DType::Complex32);
  for (int64_t i = 0; i < c.numel(); ++i)
    ASSERT_EQ(c.get_complex(i), std::complex<double>(h.get(i), 0)) << i;
  // Complex into real keeps the real part; into bool, either part non-zero.
  const Tensor z = cvec({{1.5, -2}, {0, 3}, {0, 0}}, c64);
  const Tensor re = run_cpu("aten._to_copy.default", to_copy_args(z, DType::Float32));
  EXPECT_EQ(re.get(0), 1.5);
  EXPECT_EQ(re.get(1), 0.0);
  const Tensor b = run_cpu("aten._to_copy.default", to_copy_args(z, DType::Bool));
  EXPECT_EQ(b.get_int(1), 1);
  EXPECT_EQ(b.get_int(2), 0);
  // c128 into c64 and c32 (rounded once per part), i64 into c128, a transposed c64 clone.
  expect_matches_ref("aten._to_copy.default", to_copy_args(cfilled({5, 7}, c128), c64));
  expect_matches_ref("aten._to_copy.default",
                     to_copy_args(cfilled({5, 7}, c128), DType::Complex32));
  expect_matches_ref("aten._to_copy.default", to_copy_args(filled({5, 7}, DType::Int64), c128));
  expect_matches_ref("aten.clone.default", {cfilled({6, 5}, c64).transpose(0, 1), Value()});
  // copy_ broadcasts a c64 row into a c128 self.
  expect_matches_ref("aten.copy_.default",
                     {Tensor::empty({3, 4}, c128), cfilled({4}, c64), Value(false)});
}

}  // namespace
}  // namespace crucible::cpu_test
