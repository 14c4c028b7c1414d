// The case grammar parser: every value form, and errors naming line:column and what was
// expected.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "crucible/cases/literal.h"
#include "crucible/core/error.h"

namespace crucible::cases {
namespace {

// The message of the Input error that parsing `text` throws ("" when it does not throw).
std::string call_error(const std::string& text, const std::string& where = "<case>") {
  try {
    parse_call(text, where);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    return e.what();
  }
  return "";
}

std::string literal_error(const std::string& text) {
  try {
    parse_literal(text, "<lit>");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    return e.what();
  }
  return "";
}

TEST(LiteralParser, Scalars) {
  EXPECT_EQ(parse_literal("None").kind, LitKind::None);
  EXPECT_TRUE(parse_literal("True").b);
  EXPECT_EQ(parse_literal("False").kind, LitKind::Bool);
  EXPECT_FALSE(parse_literal("False").b);
  EXPECT_EQ(parse_literal("42").i, 42);
  EXPECT_EQ(parse_literal("-7").i, -7);
  EXPECT_EQ(parse_literal("0").i, 0);
  EXPECT_EQ(parse_literal("9223372036854775807").i, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(parse_literal("-9223372036854775808").i, std::numeric_limits<int64_t>::min());
}

TEST(LiteralParser, FloatsKeepTheirSpelling) {
  for (const char* text : {"1e-05", "-65504.0", "0.1", "1.7015043497085571", "1e-12", "2.0", "inf",
                           "-inf", "nan", "1E5", "1.", ".5", "1.5e+300"}) {
    const Literal l = parse_literal(text);
    EXPECT_EQ(l.kind, LitKind::Float) << text;
    EXPECT_EQ(l.text, text);
    EXPECT_EQ(print_literal(l), text);
  }
  EXPECT_DOUBLE_EQ(parse_literal("1e-05").f, 1e-05);
  EXPECT_DOUBLE_EQ(parse_literal("-65504.0").f, -65504.0);
  EXPECT_TRUE(std::isinf(parse_literal("-inf").f));
  EXPECT_LT(parse_literal("-inf").f, 0);
  EXPECT_TRUE(std::isnan(parse_literal("nan").f));
  EXPECT_EQ(parse_literal("1e-400").f, 0.0);  // underflow reads as 0, as in Python
  EXPECT_EQ(parse_literal("- 5").i, -5);
}

TEST(LiteralParser, Strings) {
  const Literal a = parse_literal("'cuda'");
  EXPECT_EQ(a.kind, LitKind::String);
  EXPECT_EQ(a.text, "cuda");
  EXPECT_EQ(a.quote, '\'');
  const Literal b = parse_literal("\"torch.device('cpu')\"");
  EXPECT_EQ(b.text, "torch.device('cpu')");
  EXPECT_EQ(b.quote, '"');
  EXPECT_EQ(print_literal(b), "\"torch.device('cpu')\"");
  EXPECT_EQ(parse_literal(R"('it\'s\n\x41\\')").text, "it's\nA\\");
  EXPECT_EQ(print_literal(parse_literal(R"('it\'s\n\\')")), R"('it\'s\n\\')");
}

TEST(LiteralParser, DTypesAndSymbols) {
  const Literal f16 = parse_literal("f16");
  EXPECT_EQ(f16.kind, LitKind::DType);
  EXPECT_EQ(f16.dtype, DType::Float16);
  for (const char* code :
       {"b8", "u8", "i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64", "f8e4m3fn", "f8e5m2"}) {
    EXPECT_EQ(parse_literal(code).kind, LitKind::DType) << code;
    EXPECT_EQ(print_literal(parse_literal(code)), code);
  }
  const Literal torch_half = parse_literal("torch.float16");
  EXPECT_EQ(torch_half.kind, LitKind::DType);
  EXPECT_EQ(torch_half.dtype, DType::Float16);
  EXPECT_EQ(print_literal(torch_half), "torch.float16");
  EXPECT_EQ(parse_literal("torch.bool").dtype, DType::Bool);
  for (const char* sym : {"torch.strided", "torch.sparse_coo", "torch.contiguous_format",
                          "torch.channels_last", "torch.preserve_format"}) {
    const Literal s = parse_literal(sym);
    EXPECT_EQ(s.kind, LitKind::Symbol) << sym;
    EXPECT_EQ(s.text, sym);
  }
  // Complex codes are DTypes like the others, and print back as written.
  for (const char* c : {"c32", "c64", "c128", "torch.complex64", "torch.cfloat"}) {
    const Literal s = parse_literal(c);
    EXPECT_EQ(s.kind, LitKind::DType) << c;
    EXPECT_TRUE(is_complex_dtype_name(s.text));
    EXPECT_TRUE(is_complex(s.dtype));
    EXPECT_EQ(print_literal(s), c);
  }
  EXPECT_FALSE(is_complex_dtype_name("f32"));
}

TEST(LiteralParser, ListsTuplesDicts) {
  const Literal l = parse_literal("[1, [2, 3], (), (4,), None, [], (5, 6,)]");
  ASSERT_EQ(l.kind, LitKind::List);
  ASSERT_EQ(l.items.size(), 7u);
  EXPECT_EQ(l.items[1].kind, LitKind::List);
  EXPECT_EQ(l.items[2].kind, LitKind::Tuple);
  EXPECT_TRUE(l.items[2].items.empty());
  EXPECT_EQ(l.items[3].kind, LitKind::Tuple);
  EXPECT_EQ(l.items[3].items.size(), 1u);
  EXPECT_EQ(l.items[4].kind, LitKind::None);
  EXPECT_EQ(l.items[6].items.size(), 2u);
  EXPECT_EQ(print_literal(l), "[1, [2, 3], (), (4,), None, [], (5, 6)]");
  // "(x)" is x, as in Python.
  EXPECT_EQ(parse_literal("(3)").kind, LitKind::Int);
  const Literal d = parse_literal("{'dtype': f16, \"k\": [1, 2]}");
  ASSERT_EQ(d.kind, LitKind::Dict);
  ASSERT_EQ(d.entries.size(), 2u);
  EXPECT_EQ(d.entries[0].first.text, "dtype");
  EXPECT_EQ(d.entries[0].second.dtype, DType::Float16);
  EXPECT_EQ(print_literal(d), "{'dtype': f16, \"k\": [1, 2]}");
}

TEST(LiteralParser, WhitespaceTolerant) {
  const CallSpec a = parse_call("((T([2,3],f16),1),{'k':True})");
  const CallSpec b = parse_call(" ( ( T ( [ 2 ,\n 3 ] , f16 ) , 1 , ) ,\t{ 'k' : True , } ) \n");
  EXPECT_EQ(a, b);
  EXPECT_EQ(print_call(b), "((T([2, 3], f16), 1), {'k': True})");
}

TEST(LiteralParser, Tensors) {
  const Literal t = parse_literal("T([96, 3, 224, 224], f16)");
  ASSERT_EQ(t.kind, LitKind::Tensor);
  EXPECT_EQ(t.tensor.shape, (Shape{96, 3, 224, 224}));
  EXPECT_EQ(t.tensor.dtype, DType::Float16);
  EXPECT_FALSE(t.tensor.strides);
  EXPECT_FALSE(t.tensor.stride_written);

  const Literal scalar = parse_literal("T([], f32)");
  EXPECT_TRUE(scalar.tensor.shape.empty());
  EXPECT_EQ(parse_literal("T([0, 5], i64)").tensor.shape, (Shape{0, 5}));

  const Literal strided = parse_literal("T([384, 196], f16, stride=(1, 384))");
  EXPECT_EQ(*strided.tensor.strides, (Shape{1, 384}));
  EXPECT_EQ(strided.tensor.stride_form, TensorLit::StrideForm::Tuple);

  const Literal list_stride = parse_literal("T([4], f16, stride=[2])");
  EXPECT_EQ(list_stride.tensor.stride_form, TensorLit::StrideForm::List);
  EXPECT_EQ(print_literal(list_stride), "T([4], f16, stride=[2])");
  EXPECT_EQ(print_literal(parse_literal("T([4], f16, stride=(2,))")), "T([4], f16, stride=(2,))");

  const Literal none_stride = parse_literal("T([4], f16, stride=None)");
  EXPECT_TRUE(none_stride.tensor.stride_written);
  EXPECT_FALSE(none_stride.tensor.strides);
  EXPECT_EQ(print_literal(none_stride), "T([4], f16, stride=None)");

  const Literal dev = parse_literal("T([2], bf16, 'cpu')");
  EXPECT_EQ(*dev.tensor.device, "cpu");
  EXPECT_EQ(print_literal(dev), "T([2], bf16, 'cpu')");

  const Literal fill =
      parse_literal("T([2, 2], f32, stride=(1, 2), device='cuda', fill='special')");
  EXPECT_EQ(*fill.tensor.fill, "special");
  EXPECT_EQ(print_literal(fill), "T([2, 2], f32, stride=(1, 2), device='cuda', fill='special')");
  EXPECT_EQ(print_literal(parse_literal("T([2], f32, fill='special')")),
            "T([2], f32, fill='special')");

  // BackendBench's positional stride and keyword device print back as written.
  for (const char* text : {"T([2, 3], f16, (1, 2))", "T([2, 3], f16, [1, 2], 'cuda')",
                           "T([2], f16, device='cpu')", "T([2], f16, stride=(1,), device='cpu')",
                           "T([2], torch.float32)", "T([1, 512, 768], c32)"}) {
    EXPECT_EQ(print_literal(parse_literal(text)), text);
  }
  const Literal cplx = parse_literal("T([2], c64)");
  EXPECT_TRUE(cplx.tensor.dtype_known);
  EXPECT_EQ(cplx.tensor.dtype, DType::Complex64);
  EXPECT_EQ(print_literal(parse_literal("T([2], torch.complex128)")), "T([2], torch.complex128)");
  EXPECT_TRUE(parse_literal("T([2], f64)").tensor.dtype_known);
  EXPECT_EQ(parse_literal("T([2], torch.float32)").tensor.dtype, DType::Float32);
  // Keywords in another order print in the canonical order.
  EXPECT_EQ(print_literal(parse_literal("T([2], f16, fill='special', stride=(1,))")),
            "T([2], f16, stride=(1,), fill='special')");
}

TEST(LiteralParser, CallForms) {
  const CallSpec c = parse_call(
      "((1, 1, [965, 192], T([1, 54765], i64)), {'dtype': f16, 'layout': torch.sparse_coo, "
      "'device': 'cuda', 'pin_memory': None})");
  ASSERT_EQ(c.args.size(), 4u);
  ASSERT_EQ(c.kwargs.size(), 4u);
  EXPECT_EQ(c.kwargs[1].first, "layout");
  EXPECT_EQ(c.kwargs[1].second.kind, LitKind::Symbol);
  EXPECT_EQ(c.kwargs[3].second.kind, LitKind::None);
  EXPECT_EQ(print_call(parse_call("((), {})")), "((), {})");
  EXPECT_EQ(print_call(parse_call("((T([2], f16),), {})")), "((T([2], f16),), {})");
  EXPECT_EQ(print_call(parse_call("(([T([2], f16), None],), {})")), "(([T([2], f16), None],), {})");
}

TEST(LiteralParserErrors, UnknownDTypeNamesTheValidCodes) {
  const std::string e = call_error("((T([2], f17),), {})");
  EXPECT_NE(e.find("<case>:1:10: expected a dtype code, got unknown dtype 'f17'"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("b8 u8 i8 i16 i32 i64 f16 bf16 f32 f64"), std::string::npos) << e;
  EXPECT_NE(e.find("c32 c64 c128"), std::string::npos) << e;
  EXPECT_NE(literal_error("torch.strided_x + 1").find("<lit>:1:17"), std::string::npos);
  EXPECT_NE(literal_error("xyz").find("got 'xyz'"), std::string::npos);
}

TEST(LiteralParserErrors, UnterminatedList) {
  const std::string e = call_error("(([1, 2, 3), {})");
  EXPECT_NE(e.find("<case>:1:11: expected ',' or ']' in the list opened at 1:3, got ')'"),
            std::string::npos)
      << e;
  const std::string eof = literal_error("[1, 2");
  EXPECT_NE(eof.find("<lit>:1:6: expected ',' or ']' in the list opened at 1:1, got end of input"),
            std::string::npos)
      << eof;
}

TEST(LiteralParserErrors, StrayCharacters) {
  const std::string e = call_error("((T([2], f16) x), {})", "traces/foo.txt");
  EXPECT_NE(e.find("traces/foo.txt:1:15: expected ',' or ')' after tensor argument 1 of the call "
                   "opened at 1:2, got 'x'"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("got 'x'"), std::string::npos) << e;
  const std::string after = call_error("((1,), {}) junk");
  EXPECT_NE(after.find("<case>:1:12: expected end of input after the call, got 'junk'"),
            std::string::npos)
      << after;
  EXPECT_NE(literal_error("[1, $]").find("<lit>:1:5: expected a value"), std::string::npos);
  EXPECT_NE(literal_error("[1, 2x]").find("got 'x'"), std::string::npos);
}

TEST(LiteralParserErrors, MissingClosingParen) {
  const std::string e = call_error("((T([2], f16),), {}");
  EXPECT_NE(e.find("<case>:1:20: expected ')' to close the call"), std::string::npos) << e;
  EXPECT_NE(e.find("got end of input"), std::string::npos) << e;
  const std::string t = call_error("((T([2], f16), {})");
  EXPECT_NE(t.find("expected"), std::string::npos) << t;
}

TEST(LiteralParserErrors, IntegerOverflow) {
  const std::string e = call_error("((9223372036854775808,), {})");
  EXPECT_NE(e.find("<case>:1:3: integer literal 9223372036854775808 is out of range for int64"),
            std::string::npos)
      << e;
  EXPECT_NE(literal_error("-9223372036854775809").find("out of range"), std::string::npos);
  EXPECT_NE(literal_error("99999999999999999999999").find("out of range"), std::string::npos);
  EXPECT_NE(literal_error("1e999").find("out of range for a double"), std::string::npos);
}

TEST(LiteralParserErrors, LinesAndColumnsAcrossLines) {
  const std::string e = call_error("((1,\n  2,\n  @), {})");
  EXPECT_NE(e.find("<case>:3:3: expected a value"), std::string::npos) << e;
  try {
    parse_call("((1, ?), {})", SourceOrigin{"f.txt", 12, 30});
    FAIL();
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("f.txt:12:35:"), std::string::npos) << err.what();
  }
}

TEST(LiteralParserErrors, Malformed) {
  EXPECT_NE(call_error("((1), {})").find("one-element tuple needs one"), std::string::npos);
  EXPECT_NE(call_error("((1,), {'a': 1, 'a': 2})").find("duplicate keyword argument 'a'"),
            std::string::npos);
  EXPECT_NE(call_error("((1,), {3: 1})").find("expected a string key"), std::string::npos);
  EXPECT_NE(call_error("[(1,), {}]").find("expected '(' to start the call"), std::string::npos);
  EXPECT_NE(literal_error("'abc").find("expected closing ' of the string"), std::string::npos);
  EXPECT_NE(literal_error("T([2, -1], f16)").find("non-negative"), std::string::npos);
  EXPECT_NE(literal_error("T([2, 3], f16, stride=(1,))").find("2 dimensions but 1 strides"),
            std::string::npos);
  EXPECT_NE(literal_error("T([2], f16, stride=5)").find("tuple, list or None"), std::string::npos);
  EXPECT_NE(literal_error("T([2], f16, color='red')").find("stride=, device= or fill="),
            std::string::npos);
  EXPECT_NE(literal_error("T([2], f16, stride=None, 'cpu')")
                .find("<lit>:1:26: expected stride=, device= or fill= after a keyword argument"),
            std::string::npos);
  EXPECT_NE(literal_error("T([2], f16 x)")
                .find("<lit>:1:12: expected ',' or ')' in T(...) "
                      "opened at 1:1, got 'x'"),
            std::string::npos);
  EXPECT_NE(literal_error("T(2, f16)").find("expected '[' to start the tensor shape"),
            std::string::npos);
  EXPECT_NE(literal_error("007").find("leading zeros"), std::string::npos);
  EXPECT_NE(literal_error("").find("expected a value, got end of input"), std::string::npos);
  std::string deep(300, '[');
  EXPECT_NE(literal_error(deep).find("nesting deeper than"), std::string::npos);
}

}  // namespace
}  // namespace crucible::cases
