// Complex dtypes in the core: names, promotion (checked against torch.promote_types), element
// access and conversions, result_type with complex, the case grammar and materialisation.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>

#include "crucible/cases/case.h"
#include "crucible/cases/literal.h"
#include "crucible/core/dtype.h"
#include "crucible/core/tensor.h"
#include "crucible/ops/materialize.h"
#include "crucible/ops/op.h"
#include "ops/util.h"

namespace crucible {
namespace {

using D = DType;
using cd = std::complex<double>;

TEST(ComplexDType, NamesAndSizes) {
  EXPECT_EQ(dtype_code(D::Complex32), "c32");
  EXPECT_EQ(dtype_code(D::Complex64), "c64");
  EXPECT_EQ(dtype_code(D::Complex128), "c128");
  EXPECT_EQ(dtype_torch_name(D::Complex64), "torch.complex64");
  EXPECT_EQ(dtype_scalar_type_name(D::Complex32), "ComplexHalf");
  EXPECT_EQ(dtype_scalar_type_name(D::Complex128), "ComplexDouble");
  EXPECT_EQ(parse_dtype("torch.chalf"), D::Complex32);
  EXPECT_EQ(parse_dtype("torch.cfloat"), D::Complex64);
  EXPECT_EQ(parse_dtype("torch.cdouble"), D::Complex128);
  EXPECT_EQ(parse_dtype("torch.complex32"), D::Complex32);
  EXPECT_EQ(parse_dtype("ComplexFloat"), D::Complex64);
  EXPECT_EQ(itemsize(D::Complex32), 4u);
  EXPECT_EQ(itemsize(D::Complex64), 8u);
  EXPECT_EQ(itemsize(D::Complex128), 16u);
  // Appended: the earlier enumerators keep their values.
  EXPECT_EQ(static_cast<int>(D::Float8E5M2), 11);
  EXPECT_EQ(static_cast<int>(D::Complex128), kNumDTypes - 1);
  EXPECT_EQ(all_dtypes().back(), D::Complex128);
}

TEST(ComplexDType, Categories) {
  EXPECT_TRUE(is_complex(D::Complex64));
  EXPECT_FALSE(is_complex(D::Float64));
  EXPECT_FALSE(is_floating(D::Complex64));  // as ATen's isFloatingType
  EXPECT_FALSE(is_integral(D::Complex64, true));
  EXPECT_EQ(dtype_category(D::Complex32), DTypeCategory::Complex);
  EXPECT_GT(DTypeCategory::Complex, DTypeCategory::Floating);
  EXPECT_EQ(to_real(D::Complex32), D::Float16);
  EXPECT_EQ(to_real(D::Complex64), D::Float32);
  EXPECT_EQ(to_real(D::Complex128), D::Float64);
  EXPECT_EQ(to_real(D::Int8), D::Int8);
  EXPECT_EQ(to_complex(D::Float16), D::Complex32);
  EXPECT_EQ(to_complex(D::BFloat16), D::Complex64);
  EXPECT_EQ(to_complex(D::Float32), D::Complex64);
  EXPECT_EQ(to_complex(D::Float64), D::Complex128);
  EXPECT_EQ(to_complex(D::Complex32), D::Complex32);
  EXPECT_EQ(to_complex(D::Int64), std::nullopt);
  EXPECT_EQ(float_info(D::Complex64).eps, float_info(D::Float32).eps);
}

// torch.promote_types(d, c) for d in b8 u8 i8 i16 i32 i64 f16 bf16 f32 f64 c32 c64 c128.
TEST(ComplexDType, PromoteTypesMatchesTorch) {
  const D reals[] = {D::Bool,      D::UInt8,     D::Int8,      D::Int16,   D::Int32,
                     D::Int64,     D::Float16,   D::BFloat16,  D::Float32, D::Float64,
                     D::Complex32, D::Complex64, D::Complex128};
  const D with_c32[] = {D::Complex32, D::Complex32, D::Complex32, D::Complex32, D::Complex32,
                        D::Complex32, D::Complex32, D::Complex64, D::Complex64, D::Complex128,
                        D::Complex32, D::Complex64, D::Complex128};
  const D with_c64[] = {D::Complex64, D::Complex64, D::Complex64, D::Complex64, D::Complex64,
                        D::Complex64, D::Complex64, D::Complex64, D::Complex64, D::Complex128,
                        D::Complex64, D::Complex64, D::Complex128};
  for (size_t i = 0; i < std::size(reals); ++i) {
    EXPECT_EQ(promote_types(reals[i], D::Complex32), with_c32[i]) << dtype_code(reals[i]);
    EXPECT_EQ(promote_types(D::Complex32, reals[i]), with_c32[i]) << dtype_code(reals[i]);
    EXPECT_EQ(promote_types(reals[i], D::Complex64), with_c64[i]) << dtype_code(reals[i]);
    EXPECT_EQ(promote_types(reals[i], D::Complex128), D::Complex128) << dtype_code(reals[i]);
  }
  EXPECT_EQ(promote_types(D::Float8E4M3FN, D::Complex64), std::nullopt);
}

Tensor filled(const Shape& shape, DType t, cd v) {
  Tensor x = Tensor::empty(shape, t);
  for (int64_t i = 0; i < x.numel(); ++i) x.set_complex(i, v);
  return x;
}

// result_type with complex (checked with torch): complex is the highest category; a complex
// 0-d tensor makes a floating tensor complex of the same precision.
TEST(ComplexDType, ResultType) {
  using opsutil::result_type;
  const Tensor f64 = Tensor::empty({3}, D::Float64), f16 = Tensor::empty({3}, D::Float16);
  const Tensor bf16 = Tensor::empty({3}, D::BFloat16), i64 = Tensor::empty({3}, D::Int64);
  const Tensor c64_0d = Tensor::empty({}, D::Complex64), c128_0d = Tensor::empty({}, D::Complex128);
  const Tensor c32 = Tensor::empty({3}, D::Complex32), f64_0d = Tensor::empty({}, D::Float64);
  EXPECT_EQ(result_type(f64, c64_0d), D::Complex128);
  EXPECT_EQ(result_type(f16, c64_0d), D::Complex32);
  EXPECT_EQ(result_type(f16, c128_0d), D::Complex32);
  EXPECT_EQ(result_type(bf16, c64_0d), D::Complex64);
  EXPECT_EQ(result_type(i64, c128_0d), D::Complex128);
  EXPECT_EQ(result_type(f64_0d, c32), D::Complex32);
  EXPECT_EQ(result_type(c32, Scalar(2.5)), D::Complex32);
  EXPECT_EQ(result_type(Tensor::empty({2}, D::Complex64), Tensor::empty({2}, D::Float64)),
            D::Complex128);
  EXPECT_FALSE(can_cast(D::Complex64, D::Float64));
  EXPECT_TRUE(can_cast(D::Float64, D::Complex64));
  EXPECT_EQ(opsutil::to_float_dtype(D::Complex64), D::Complex64);
}

TEST(ComplexTensor, ElementAccess) {
  for (DType t : {D::Complex32, D::Complex64, D::Complex128}) {
    Tensor x = Tensor::empty({2, 2}, t);
    x.set_complex(1, {1.5, -2.25});
    EXPECT_EQ(x.get_complex(1), cd(1.5, -2.25)) << dtype_code(t);
    EXPECT_EQ(x.get(1), 1.5) << "get reads the real part";
    x.set(2, 3.0);
    EXPECT_EQ(x.get_complex(2), cd(3.0, 0.0));
    x.set_int(3, 7);
    EXPECT_EQ(x.get_complex(3), cd(7.0, 0.0));
    EXPECT_EQ(x.get_int(1), 1);
  }
  // Each part rounds once to the component type.
  Tensor h = Tensor::empty({1}, D::Complex32);
  h.set_complex(0, {0.1, 70000.0});
  EXPECT_EQ(h.get_complex(0).real(), static_cast<double>(half_to_float(half_from_double(0.1))));
  EXPECT_TRUE(std::isinf(h.get_complex(0).imag()));
  // A real tensor reads as (value, 0).
  Tensor r = Tensor::full({1}, -2.0, D::Float32);
  EXPECT_EQ(r.get_complex(0), cd(-2.0, 0.0));
  // fill and full write (value, 0) into the 16-byte elements of c128.
  Tensor f = Tensor::full({3}, 2.5, D::Complex128);
  EXPECT_EQ(f.get_complex(2), cd(2.5, 0.0));
  EXPECT_EQ(f.str(), "T([3], c128)");
  EXPECT_EQ(f.transpose(0, 0).str(), "T([3], c128)");
}

TEST(ComplexTensor, Conversions) {
  const Tensor c = filled({2}, D::Complex128, {1.7, -2.5});
  // complex -> complex keeps both parts; c128 -> c64 rounds each part.
  EXPECT_EQ(c.to(D::Complex64).get_complex(0), cd(static_cast<float>(1.7), -2.5));
  // complex -> real drops the imaginary part (ATen); -> integral truncates the real part.
  EXPECT_EQ(c.to(D::Float64).get(0), 1.7);
  EXPECT_EQ(c.to(D::Int32).get_int(0), 1);
  // complex -> bool: either part non-zero (PyTorch 2.x).
  EXPECT_EQ(filled({1}, D::Complex64, {0.0, 2.0}).to(D::Bool).get_int(0), 1);
  EXPECT_EQ(filled({1}, D::Complex64, {0.0, 0.0}).to(D::Bool).get_int(0), 0);
  // real -> complex: (value, 0); large int64 rounds once.
  Tensor i = Tensor::empty({1}, D::Int64);
  i.set_int(0, (int64_t{1} << 53) + 1);
  EXPECT_EQ(i.to(D::Complex128).get_complex(0), cd(9007199254740992.0, 0.0));
  // Strided copy between complex dtypes, broadcasting a 0-d source.
  Tensor dst = Tensor::empty({2, 3}, D::Complex32).transpose(0, 1);
  dst.copy_from(filled({}, D::Complex128, {0.5, -1.0}));
  EXPECT_EQ(dst.get_complex(5), cd(0.5, -1.0));
  // clone copies the bytes (NaN parts survive).
  const Tensor n = filled({1}, D::Complex64, {std::nan(""), 1.0});
  EXPECT_TRUE(std::isnan(n.clone().get_complex(0).real()));
}

const OpDef& any_op() {
  static const OpDef op = OpDef::from_schema("aten::neg(Tensor self) -> Tensor", "test");
  return op;
}

Tensor materialized(const std::string& lit) {
  const cases::CallSpec call = cases::parse_call("((" + lit + ",), {})");
  return materialize(any_op(), call, 3).at(0).tensor();
}

TEST(ComplexCases, ParseAndMaterialize) {
  for (const char* text : {"T([1, 512, 768], c32)", "T([2], torch.complex64)", "T([3], c128)",
                           "T([2, 2], c64, stride=(1, 2))"}) {
    const cases::Literal lit = cases::parse_literal(text);
    EXPECT_EQ(lit.kind, cases::LitKind::Tensor);
    EXPECT_TRUE(is_complex(lit.tensor.dtype)) << text;
    EXPECT_EQ(cases::print_literal(lit), text);
  }
  // Default: both parts standard normal (signed, not constant).
  const Tensor x = materialized("T([64], c64)");
  ASSERT_EQ(x.dtype(), D::Complex64);
  int neg_re = 0, neg_im = 0;
  double sum_im2 = 0;
  for (int64_t i = 0; i < 64; ++i) {
    const cd z = x.get_complex(i);
    neg_re += z.real() < 0;
    neg_im += z.imag() < 0;
    sum_im2 += z.imag() * z.imag();
  }
  EXPECT_GT(neg_re, 10);
  EXPECT_GT(neg_im, 10);
  EXPECT_GT(sum_im2 / 64, 0.3);
  // Deterministic.
  const Tensor y = materialized("T([64], c64)");
  for (int64_t i = 0; i < 64; ++i) EXPECT_EQ(x.get_complex(i), y.get_complex(i));
  // fill='special': special values in the real part only, the imaginary part only and both.
  const Tensor s = materialized("T([96], c128, fill='special')");
  int re_only = 0, im_only = 0, both = 0;
  for (int64_t i = 0; i < 96; ++i) {
    const cd z = s.get_complex(i);
    const bool re = !std::isfinite(z.real()), im = !std::isfinite(z.imag());
    re_only += re && !im;
    im_only += im && !re;
    both += re && im;
  }
  EXPECT_GT(re_only, 0);
  EXPECT_GT(im_only, 0);
  EXPECT_GT(both, 0);
}

}  // namespace
}  // namespace crucible
