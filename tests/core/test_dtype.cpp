// DType names and promotion, Device parsing and the error helpers.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "crucible/core/device.h"
#include "crucible/core/dtype.h"
#include "crucible/core/error.h"

namespace crucible {
namespace {

TEST(DType, CodesRoundTrip) {
  const char* codes[] = {"b8",  "u8",   "i8",  "i16", "i32",      "i64",    "f16", "bf16",
                         "f32", "f64", "f8e4m3fn", "f8e5m2", "c32", "c64", "c128"};
  ASSERT_EQ(all_dtypes().size(), static_cast<size_t>(kNumDTypes));
  for (int i = 0; i < kNumDTypes; ++i) {
    const DType t = all_dtypes()[i];
    EXPECT_EQ(static_cast<int>(t), i);
    EXPECT_EQ(dtype_code(t), codes[i]);
    EXPECT_EQ(parse_dtype(codes[i]), t);
    EXPECT_EQ(parse_dtype(dtype_torch_name(t)), t);
    EXPECT_EQ(parse_dtype(dtype_scalar_type_name(t)), t);
  }
  EXPECT_EQ(dtype_torch_name(DType::Float16), "torch.float16");
  EXPECT_EQ(dtype_torch_name(DType::Bool), "torch.bool");
}

TEST(DType, ParsesTorchAliasesAndScalarTypeNames) {
  EXPECT_EQ(parse_dtype("torch.half"), DType::Float16);
  EXPECT_EQ(parse_dtype("torch.bfloat16"), DType::BFloat16);
  EXPECT_EQ(parse_dtype("torch.float"), DType::Float32);
  EXPECT_EQ(parse_dtype("torch.double"), DType::Float64);
  EXPECT_EQ(parse_dtype("torch.long"), DType::Int64);
  EXPECT_EQ(parse_dtype("torch.int"), DType::Int32);
  EXPECT_EQ(parse_dtype("torch.short"), DType::Int16);
  EXPECT_EQ(parse_dtype("torch.uint8"), DType::UInt8);
  EXPECT_EQ(parse_dtype("torch.int8"), DType::Int8);
  EXPECT_EQ(parse_dtype("torch.float8_e4m3fn"), DType::Float8E4M3FN);
  EXPECT_EQ(parse_dtype("torch.float8_e5m2"), DType::Float8E5M2);
  EXPECT_EQ(parse_dtype("Half"), DType::Float16);
  EXPECT_EQ(parse_dtype("Float"), DType::Float32);
  EXPECT_EQ(parse_dtype("Double"), DType::Float64);
  EXPECT_EQ(parse_dtype("Long"), DType::Int64);
  EXPECT_EQ(parse_dtype("Int"), DType::Int32);
  EXPECT_EQ(parse_dtype("Short"), DType::Int16);
  EXPECT_EQ(parse_dtype("Char"), DType::Int8);
  EXPECT_EQ(parse_dtype("Byte"), DType::UInt8);
  EXPECT_EQ(parse_dtype("Bool"), DType::Bool);
  EXPECT_EQ(parse_dtype("BFloat16"), DType::BFloat16);
  EXPECT_EQ(parse_dtype("c64"), DType::Complex64);  // complex dtypes: tests/core/test_complex.cpp
  EXPECT_EQ(parse_dtype("float"), std::nullopt);  // Python's float is f64: ambiguous
  EXPECT_EQ(parse_dtype("torch.f32"), std::nullopt);
  EXPECT_EQ(parse_dtype(""), std::nullopt);
}

TEST(DType, Properties) {
  EXPECT_EQ(itemsize(DType::Bool), 1u);
  EXPECT_EQ(itemsize(DType::BFloat16), 2u);
  EXPECT_EQ(itemsize(DType::Int64), 8u);
  EXPECT_EQ(itemsize(DType::Float8E5M2), 1u);
  EXPECT_TRUE(is_floating(DType::Float8E4M3FN));
  EXPECT_FALSE(is_floating(DType::Int32));
  EXPECT_TRUE(is_integral(DType::Bool, true));
  EXPECT_FALSE(is_integral(DType::Bool, false));
  EXPECT_TRUE(is_integral(DType::UInt8, false));
  EXPECT_FALSE(is_signed_integral(DType::UInt8));
  EXPECT_TRUE(is_reduced_float(DType::BFloat16));
  EXPECT_FALSE(is_reduced_float(DType::Float32));
  EXPECT_EQ(dtype_category(DType::Bool), DTypeCategory::Bool);
  EXPECT_EQ(dtype_category(DType::Int8), DTypeCategory::Integral);
  EXPECT_EQ(dtype_category(DType::Float16), DTypeCategory::Floating);
}

TEST(DType, PromoteTypesMatchesC10) {
  using D = DType;
  struct Case {
    D a, b, r;
  };
  const Case cases[] = {
      {D::UInt8, D::Int8, D::Int16},        {D::UInt8, D::Int16, D::Int16},
      {D::UInt8, D::Int64, D::Int64},       {D::Int8, D::Int32, D::Int32},
      {D::Bool, D::Int8, D::Int8},          {D::Bool, D::Bool, D::Bool},
      {D::Bool, D::Float16, D::Float16},    {D::Float16, D::BFloat16, D::Float32},
      {D::Float16, D::Float32, D::Float32}, {D::BFloat16, D::Float64, D::Float64},
      {D::Int64, D::Float16, D::Float16},   {D::UInt8, D::BFloat16, D::BFloat16},
      {D::Int32, D::Float32, D::Float32},   {D::Float8E4M3FN, D::Float8E4M3FN, D::Float8E4M3FN},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(promote_types(c.a, c.b), c.r) << dtype_code(c.a) << "+" << dtype_code(c.b);
    EXPECT_EQ(promote_types(c.b, c.a), c.r) << dtype_code(c.b) << "+" << dtype_code(c.a);
  }
  for (DType t : all_dtypes()) {
    EXPECT_EQ(promote_types(t, t), t);
    for (DType fp8 : {D::Float8E4M3FN, D::Float8E5M2}) {
      if (t != fp8) {
        EXPECT_EQ(promote_types(t, fp8), std::nullopt);
        EXPECT_EQ(promote_types(fp8, t), std::nullopt);
      }
    }
  }
}

TEST(DType, FloatInfo) {
  EXPECT_EQ(float_info(DType::Float32).max, 3.4028234663852886e38);
  EXPECT_EQ(float_info(DType::Float32).max, std::numeric_limits<float>::max());
  EXPECT_EQ(float_info(DType::Float32).tiny, std::numeric_limits<float>::min());
  EXPECT_EQ(float_info(DType::Float32).true_min, std::numeric_limits<float>::denorm_min());
  EXPECT_EQ(float_info(DType::Float32).eps, std::numeric_limits<float>::epsilon());
  EXPECT_EQ(float_info(DType::Float16).max, 65504.0);
  EXPECT_EQ(float_info(DType::Float16).eps, 0.0009765625);
  EXPECT_EQ(float_info(DType::Float16).true_min, 5.960464477539063e-08);
  EXPECT_EQ(float_info(DType::BFloat16).max, 3.3895313892515355e38);
  EXPECT_EQ(float_info(DType::BFloat16).eps, 0.0078125);
  EXPECT_EQ(float_info(DType::Float64).mantissa_bits, 52);
  EXPECT_EQ(float_info(DType::Float8E4M3FN).max, 448.0);
  EXPECT_EQ(float_info(DType::Float8E5M2).max, 57344.0);
  EXPECT_THROW(float_info(DType::Int32), Error);
}

TEST(Device, ParsesTraceSpellings) {
  EXPECT_EQ(parse_device("cpu"), Device::cpu());
  EXPECT_EQ(parse_device("cuda"), Device::cuda(0));
  EXPECT_EQ(parse_device("cuda:1"), Device::cuda(1));
  EXPECT_EQ(parse_device("torch.device('cpu')"), Device::cpu());
  EXPECT_EQ(parse_device("torch.device('cuda:0')"), Device::cuda(0));
  EXPECT_EQ(parse_device("torch.device(\"cuda:3\")"), Device::cuda(3));
  EXPECT_EQ(parse_device("'cuda'"), Device::cuda(0));
  EXPECT_EQ(Device::cuda(2).str(), "cuda:2");
  EXPECT_EQ(Device::cpu().str(), "cpu");
  EXPECT_TRUE(Device::cpu().is_cpu());
}

TEST(Device, RejectsOtherTextNamingIt) {
  for (const char* bad : {"gpu", "cuda:", "cuda:x", "cuda:-1", "torch.device(cpu", "", "mps"}) {
    try {
      parse_device(bad);
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Input);
      EXPECT_NE(std::string(e.what()).find(std::string("'") + bad + "'"), std::string::npos)
          << e.what();
    }
  }
}

TEST(Error, HelpersThrowTheirKind) {
  auto kind_of = [](auto f) {
    try {
      f();
    } catch (const Error& e) {
      return e.kind();
    }
    return ErrorKind::Internal;
  };
  EXPECT_EQ(kind_of([] { op_error("x"); }), ErrorKind::OpError);
  EXPECT_EQ(kind_of([] { input_error("f:1:2", "x"); }), ErrorKind::Input);
  EXPECT_EQ(kind_of([] { usage_error("x"); }), ErrorKind::Usage);
  EXPECT_EQ(kind_of([] { unsupported("x"); }), ErrorKind::Unsupported);
  EXPECT_EQ(kind_of([] { CRUCIBLE_CHECK(1 == 2, "boom"); }), ErrorKind::OpError);
  try {
    input_error("trace.txt:3:7", "unexpected ')'");
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "trace.txt:3:7: unexpected ')'");
  }
  try {
    op_error("self must be non-empty");
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "self must be non-empty");
  }
  EXPECT_STREQ(error_kind_name(ErrorKind::OpError), "op_error");
  EXPECT_STREQ(error_kind_name(ErrorKind::Memory), "memory");
  EXPECT_STREQ(error_kind_name(ErrorKind::Usage), "usage");
}

}  // namespace
}  // namespace crucible
