// The case grammar printer: Python's float repr, canonical spacing, one-element tuples.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "crucible/cases/literal.h"

namespace crucible::cases {
namespace {

TEST(PythonFloatRepr, MatchesPython) {
  // Values and the text CPython's repr() gives for them.
  const std::pair<double, const char*> table[] = {
      {0.0, "0.0"},
      {-0.0, "-0.0"},
      {1.0, "1.0"},
      {-1.0, "-1.0"},
      {0.1, "0.1"},
      {0.5, "0.5"},
      {2.0, "2.0"},
      {1e-05, "1e-05"},
      {1e-06, "1e-06"},
      {1e-12, "1e-12"},
      {0.0001, "0.0001"},
      {0.00012345, "0.00012345"},
      {1.5e-07, "1.5e-07"},
      {-65504.0, "-65504.0"},
      {65504.0, "65504.0"},
      {-10000.0, "-10000.0"},
      {123.456, "123.456"},
      {1.7015043497085571, "1.7015043497085571"},
      {0.7978845608028654, "0.7978845608028654"},
      {0.044715, "0.044715"},
      {1e15, "1000000000000000.0"},
      {1234567890123456.0, "1234567890123456.0"},
      {1e16, "1e+16"},
      {1.5e16, "1.5e+16"},
      {1e22, "1e+22"},
      {1.2345e100, "1.2345e+100"},
      {1e-100, "1e-100"},
      {5e-324, "5e-324"},
      {1.7976931348623157e308, "1.7976931348623157e+308"},
      {0.3333333333333333, "0.3333333333333333"},
      {100.0, "100.0"},
      {3.14159, "3.14159"},
      {std::numeric_limits<double>::infinity(), "inf"},
      {-std::numeric_limits<double>::infinity(), "-inf"},
      {std::numeric_limits<double>::quiet_NaN(), "nan"},
  };
  for (const auto& [v, repr] : table) {
    EXPECT_EQ(python_float_repr(v), repr);
    const Literal l = Literal::floating(v);
    EXPECT_EQ(l.kind, LitKind::Float);
    EXPECT_EQ(print_literal(l), repr);
    // What Literal::floating prints reads back as the same literal.
    EXPECT_EQ(parse_literal(print_literal(l)), l) << repr;
  }
}

TEST(LiteralPrinter, CanonicalForms) {
  EXPECT_EQ(print_literal(Literal::none()), "None");
  EXPECT_EQ(print_literal(Literal::boolean(true)), "True");
  EXPECT_EQ(print_literal(Literal::integer(std::numeric_limits<int64_t>::min())),
            "-9223372036854775808");
  EXPECT_EQ(print_literal(Literal::string("a'b")), R"('a\'b')");
  EXPECT_EQ(print_literal(Literal::string("tab\there")), R"('tab\there')");
  EXPECT_EQ(print_literal(Literal::dtype_lit(DType::BFloat16)), "bf16");
  EXPECT_EQ(print_literal(Literal::symbol("torch.channels_last")), "torch.channels_last");
  EXPECT_EQ(print_literal(Literal::tuple({})), "()");
  EXPECT_EQ(print_literal(Literal::tuple({Literal::integer(1)})), "(1,)");
  EXPECT_EQ(print_literal(Literal::tuple({Literal::integer(1), Literal::none()})), "(1, None)");
  EXPECT_EQ(print_literal(Literal::list({Literal::integer(1)})), "[1]");
  EXPECT_EQ(print_literal(
                Literal::dict({{Literal::string("dtype"), Literal::dtype_lit(DType::Float16)}})),
            "{'dtype': f16}");
}

TEST(LiteralPrinter, Tensors) {
  TensorLit t;
  t.shape = {2, 3};
  t.dtype = DType::Float16;
  EXPECT_EQ(print_literal(Literal::tensor_lit(t)), "T([2, 3], f16)");
  t.strides = Shape{1, 2};
  t.stride_written = true;
  EXPECT_EQ(print_literal(Literal::tensor_lit(t)), "T([2, 3], f16, stride=(1, 2))");
  t.device = "cuda";
  t.fill = "special";
  EXPECT_EQ(print_literal(Literal::tensor_lit(t)),
            "T([2, 3], f16, stride=(1, 2), device='cuda', fill='special')");
  TensorLit s;
  s.dtype = DType::Int64;
  s.device = "cpu";
  EXPECT_EQ(print_literal(Literal::tensor_lit(s)), "T([], i64, 'cpu')");
  TensorLit one;
  one.shape = {5};
  one.strides = Shape{3};
  one.stride_written = true;
  EXPECT_EQ(print_literal(Literal::tensor_lit(one)), "T([5], f32, stride=(3,))");
}

TEST(LiteralPrinter, Call) {
  CallSpec c;
  EXPECT_EQ(print_call(c), "((), {})");
  c.args.push_back(Literal::integer(3));
  EXPECT_EQ(print_call(c), "((3,), {})");
  c.args.push_back(Literal::floating(1e-05));
  c.kwargs.emplace_back("dtype", Literal::dtype_lit(DType::Float32));
  c.kwargs.emplace_back("keepdim", Literal::boolean(false));
  EXPECT_EQ(print_call(c), "((3, 1e-05), {'dtype': f32, 'keepdim': False})");
  EXPECT_EQ(parse_call(print_call(c)), c);
}

TEST(LiteralEquality, ComparesValueAndSpelling) {
  EXPECT_EQ(parse_literal("nan"), parse_literal("nan"));
  EXPECT_FALSE(parse_literal("0.0") == parse_literal("-0.0"));
  EXPECT_FALSE(parse_literal("1.0") == parse_literal("1."));  // same value, other spelling
  EXPECT_FALSE(parse_literal("1") == parse_literal("1.0"));
  EXPECT_FALSE(parse_literal("'a'") == parse_literal("\"a\""));
  EXPECT_FALSE(parse_literal("f16") == parse_literal("torch.float16"));
  EXPECT_FALSE(parse_literal("[1]") == parse_literal("(1,)"));
  EXPECT_FALSE(parse_literal("T([2], f16)") == parse_literal("T([2], f16, stride=None)"));
  EXPECT_EQ(parse_literal("{'a': [1, (2,)]}"), parse_literal("{ 'a' : [ 1 , ( 2 , ) ] }"));
}

}  // namespace
}  // namespace crucible::cases
