// The schema parser: every shipped ATen schema, each grammar form, defaults and errors.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "crucible/core/error.h"
#include "crucible/schema/schema.h"

namespace crucible {
namespace {

struct SpecOp {
  std::string op;
  std::string schema;
};

std::vector<SpecOp> load_spec(const std::string& file) {
  std::ifstream in(std::string(CRUCIBLE_SOURCE_DIR) + "/data/spec/" + file);
  EXPECT_TRUE(in.good()) << file;
  nlohmann::json j = nlohmann::json::parse(in);
  std::vector<SpecOp> ops;
  for (const auto& o : j.at("ops"))
    ops.push_back({o.at("op").get<std::string>(), o.at("schema").get<std::string>()});
  return ops;
}

void check_spec_file(const std::string& file, size_t min_count) {
  std::vector<SpecOp> ops = load_spec(file);
  ASSERT_GE(ops.size(), min_count);
  for (const SpecOp& o : ops) {
    Schema s;
    try {
      s = parse_schema(o.schema);
    } catch (const Error& e) {
      ADD_FAILURE() << o.schema << "\n  " << e.what();
      continue;
    }
    EXPECT_EQ(s.op_name(), o.op) << o.schema;
    EXPECT_EQ(s.str(), o.schema);  // the shipped text is already in normal form
    Schema again = parse_schema(s.str());
    EXPECT_TRUE(again == s) << o.schema << "\n" << again.str();
    for (const Argument& a : s.arguments) {
      EXPECT_EQ(a.default_text.has_value(), a.default_value.has_value()) << o.schema;
    }
  }
}

TEST(SchemaParser, EveryAtenOverloadParses) { check_spec_file("all_aten_ops.json", 2174); }

TEST(SchemaParser, EveryCoreAtenOverloadParses) { check_spec_file("core_aten_ops.json", 1); }

// Every default in the shipped schemas has a Value of its argument's kind, never the String
// fallback (except for str arguments, whose defaults are strings).
TEST(SchemaParser, EveryShippedDefaultIsTyped) {
  for (const SpecOp& o : load_spec("all_aten_ops.json")) {
    Schema s = parse_schema(o.schema);
    for (const Argument& a : s.arguments) {
      if (!a.default_value || a.type.base == BaseType::Str) continue;
      EXPECT_NE(a.default_value->kind(), ValueKind::String) << o.schema << " " << a.name;
    }
  }
}

TEST(SchemaParser, ParsingAllSchemasIsFast) {
  std::vector<SpecOp> ops = load_spec("all_aten_ops.json");
  auto start = std::chrono::steady_clock::now();
  size_t args = 0;
  for (const SpecOp& o : ops) args += parse_schema(o.schema).arguments.size();
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GT(args, 0u);
  // Generous for sanitizer and debug builds; a release build takes a few milliseconds.
  EXPECT_LT(ms, 500.0);
}

TEST(SchemaParser, NameNamespaceOverload) {
  Schema s = parse_schema("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  EXPECT_EQ(s.ns, "");
  EXPECT_EQ(s.name, "add");
  EXPECT_EQ(s.overload, "Tensor");
  EXPECT_EQ(s.op_name(), "aten.add.Tensor");
  Schema r = parse_schema("aten::relu(Tensor self) -> Tensor");
  EXPECT_EQ(r.ns, "aten");
  EXPECT_EQ(r.overload, "");
  EXPECT_EQ(r.op_name(), "aten.relu.default");
  EXPECT_EQ(parse_schema("prims::sum(Tensor a) -> Tensor").op_name(), "prims.sum.default");
  EXPECT_EQ(parse_schema("aten::__and__.Scalar(Tensor self, Scalar other) -> Tensor").name,
            "__and__");
}

TEST(SchemaParser, ArgumentsAndKwargOnly) {
  Schema s =
      parse_schema("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  ASSERT_EQ(s.arguments.size(), 3u);
  EXPECT_EQ(s.arguments[0].name, "self");
  EXPECT_EQ(s.arguments[0].type.base, BaseType::Tensor);
  EXPECT_FALSE(s.arguments[1].kwarg_only);
  EXPECT_TRUE(s.arguments[2].kwarg_only);
  EXPECT_EQ(s.arguments[2].type.base, BaseType::Scalar);
  EXPECT_EQ(*s.arguments[2].default_text, "1");
  EXPECT_EQ(s.arguments[2].default_value->kind(), ValueKind::Int);
  EXPECT_EQ(s.find_argument("alpha"), 2);
  EXPECT_EQ(s.find_argument("beta"), -1);
  ASSERT_EQ(s.returns.size(), 1u);
  EXPECT_EQ(s.returns[0].name, "");
}

TEST(SchemaParser, TypeDecorations) {
  Schema s = parse_schema(
      "f(Tensor? a, Tensor?[] b, int[]? c, SymInt[2] d, int[1]? e, str[] f, float[]? g, "
      "bool[3] h, t[] i, __torch__.torch.classes.rnn.CellParamsBase[] j, AnyEnumType k, "
      "Dict( str,t ) l, (int,  int) m, Future(t) n, t1 o, complex p, Any q) -> ()");
  const auto& a = s.arguments;
  ASSERT_EQ(a.size(), 17u);
  EXPECT_TRUE(a[0].type.optional);
  EXPECT_FALSE(a[0].type.is_list);
  EXPECT_TRUE(a[1].type.is_list);
  EXPECT_TRUE(a[1].type.element_optional);
  EXPECT_FALSE(a[1].type.optional);
  EXPECT_TRUE(a[2].type.is_list);
  EXPECT_TRUE(a[2].type.optional);
  EXPECT_FALSE(a[2].type.element_optional);
  EXPECT_EQ(a[3].type.base, BaseType::SymInt);
  EXPECT_EQ(a[3].type.fixed_size, 2);
  EXPECT_EQ(a[4].type.fixed_size, 1);
  EXPECT_TRUE(a[4].type.optional);
  EXPECT_EQ(a[5].type.base, BaseType::Str);
  EXPECT_FALSE(a[5].type.fixed_size.has_value());
  EXPECT_EQ(a[7].type.str(), "bool[3]");
  EXPECT_EQ(a[8].type.base, BaseType::TypeVar);
  EXPECT_EQ(a[9].type.base, BaseType::Other);
  EXPECT_EQ(a[9].type.name, "__torch__.torch.classes.rnn.CellParamsBase");
  EXPECT_EQ(a[10].type.base, BaseType::Other);
  EXPECT_EQ(a[11].type.name, "Dict(str, t)");
  EXPECT_EQ(a[12].type.name, "(int, int)");
  EXPECT_EQ(a[13].type.name, "Future(t)");
  EXPECT_EQ(a[14].type.base, BaseType::TypeVar);
  EXPECT_EQ(a[15].type.base, BaseType::Complex);
  EXPECT_EQ(a[16].type.base, BaseType::Any);
  EXPECT_TRUE(s.returns.empty());
  EXPECT_EQ(s.str(),
            "f(Tensor? a, Tensor?[] b, int[]? c, SymInt[2] d, int[1]? e, str[] f, float[]? g, "
            "bool[3] h, t[] i, __torch__.torch.classes.rnn.CellParamsBase[] j, AnyEnumType k, "
            "Dict(str, t) l, (int, int) m, Future(t) n, t1 o, complex p, Any q) -> ()");
}

TEST(SchemaParser, AliasAnnotations) {
  Schema s = parse_schema(
      "f(Tensor(a!) x, Tensor(a) y, Tensor(a -> *) z, Tensor(b!)[] w, Tensor[](c!) v, "
      "Dict(str, t)(d) u, Tensor(a!)? o) -> (Tensor(b|a), t(*), Tensor(a)[])");
  const auto& a = s.arguments;
  ASSERT_TRUE(a[0].alias);
  EXPECT_TRUE(a[0].is_mutable());
  EXPECT_EQ(a[0].alias->before_sets, std::vector<std::string>{"a"});
  EXPECT_FALSE(a[1].is_mutable());
  EXPECT_EQ(a[2].alias->after_sets, std::vector<std::string>{"*"});
  EXPECT_TRUE(a[2].alias->wildcard_after);
  EXPECT_TRUE(a[3].type.is_list);
  EXPECT_TRUE(a[3].alias->on_elements);
  EXPECT_TRUE(a[3].is_mutable());
  EXPECT_FALSE(a[4].alias->on_elements);
  EXPECT_EQ(a[4].str(), "Tensor[](c!) v");
  EXPECT_EQ(a[3].str(), "Tensor(b!)[] w");
  EXPECT_EQ(a[5].alias->before_sets, std::vector<std::string>{"d"});
  EXPECT_EQ(a[5].type.name, "Dict(str, t)");
  EXPECT_TRUE(a[6].type.optional);
  EXPECT_EQ(a[6].str(), "Tensor(a!)? o");
  EXPECT_EQ(s.returns[0].alias->before_sets, (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(s.returns[1].alias->before_sets, std::vector<std::string>{"*"});
  EXPECT_TRUE(s.returns[2].alias->on_elements);
  EXPECT_EQ(s.mutated_arguments(), (std::vector<size_t>{0, 3, 4, 6}));
  EXPECT_TRUE(parse_schema(s.str()) == s);
}

TEST(SchemaParser, Returns) {
  Schema named = parse_schema(
      "aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)");
  ASSERT_EQ(named.returns.size(), 2u);
  EXPECT_EQ(named.returns[0].name, "values");
  EXPECT_EQ(named.returns[1].name, "indices");
  Schema tuple = parse_schema("f(Tensor a) -> (Tensor, Tensor)");
  EXPECT_EQ(tuple.returns.size(), 2u);
  EXPECT_EQ(tuple.str(), "f(Tensor a) -> (Tensor, Tensor)");
  EXPECT_TRUE(parse_schema("f() -> ()").returns.empty());
  EXPECT_EQ(parse_schema("f(Tensor a) -> Tensor[]").returns[0].type.is_list, true);
  EXPECT_EQ(parse_schema("f(Tensor a) -> (float, int)").returns[1].type.base, BaseType::Int);
  // A single tuple-typed return keeps the parentheses around it: printing round-trips.
  for (const char* text : {"m() -> (())", "m() -> ((int, Tensor))", "m(Tensor a) -> ((int))"}) {
    Schema once = parse_schema(text);
    ASSERT_EQ(once.returns.size(), 1u) << text;
    EXPECT_EQ(once.str(), text);
    EXPECT_EQ(parse_schema(once.str()), once) << text;
  }
  // A single named return keeps its parentheses when printed.
  EXPECT_EQ(parse_schema("f(Tensor a) -> (Tensor out)").str(), "f(Tensor a) -> (Tensor out)");
  Schema var = parse_schema("prim::TupleConstruct(...) -> Any");
  EXPECT_TRUE(var.is_vararg);
  EXPECT_TRUE(var.arguments.empty());
  EXPECT_EQ(var.str(), "prim::TupleConstruct(...) -> Any");
  Schema varret = parse_schema("aten::format(str self, ...) -> ...");
  EXPECT_TRUE(varret.is_vararg);
  EXPECT_TRUE(varret.is_varret);
  EXPECT_EQ(varret.str(), "aten::format(str self, ...) -> ...");
  EXPECT_TRUE(parse_schema(varret.str()) == varret);
}

TEST(SchemaParser, WhitespaceIsNormalised) {
  Schema s =
      parse_schema("  aten::add.Tensor( Tensor self ,Tensor other,*,Scalar alpha = 1 )->Tensor ");
  EXPECT_EQ(s.str(), "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
}

TEST(SchemaParser, MutationQueries) {
  Schema add_ = parse_schema(
      "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)");
  EXPECT_TRUE(add_.is_inplace());
  EXPECT_FALSE(add_.is_out());
  EXPECT_EQ(add_.mutated_arguments(), std::vector<size_t>{0});
  Schema out = parse_schema(
      "aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)");
  EXPECT_FALSE(out.is_inplace());
  EXPECT_TRUE(out.is_out());
  EXPECT_EQ(out.mutated_arguments(), std::vector<size_t>{3});
  Schema add =
      parse_schema("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  EXPECT_FALSE(add.is_inplace());
  EXPECT_FALSE(add.is_out());
  EXPECT_TRUE(add.mutated_arguments().empty());
  // A view op's alias without '!' is not a mutation.
  EXPECT_TRUE(parse_schema("aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)")
                  .mutated_arguments()
                  .empty());
  Schema foreach_ =
      parse_schema("aten::_foreach_add_.Scalar(Tensor(a!)[] self, Scalar scalar) -> ()");
  EXPECT_TRUE(foreach_.is_inplace());
}

const Value& default_of(const Schema& s, const char* name) {
  int i = s.find_argument(name);
  EXPECT_GE(i, 0) << name;
  EXPECT_TRUE(s.arguments[static_cast<size_t>(i)].default_value.has_value()) << name;
  return *s.arguments[static_cast<size_t>(i)].default_value;
}

TEST(SchemaParser, DefaultValues) {
  Schema s = parse_schema(
      "f(int a=-1, float b=1e-05, float c=1., Scalar d=1, Scalar e=1.0, bool f=True, bool g=False, "
      "int? h=None, str i=\"mean\", str j='none', int[2] k=[0, 0], int[2] l=1, int[1] m=[-2, -1], "
      "SymInt[] n=[], float[] o=[1, 2.5], ScalarType? p=None, ScalarType? q=4, "
      "MemoryFormat r=contiguous_format, Layout s=strided, float t=-inf, int reduction=Mean, "
      "bool[3] u=[True, False, True], Device v=\"cuda:1\", float w=9.9999999999999995e-07, "
      "Scalar x=-0.5, ScalarType y=float16, Tensor[] z=[], complex cc=1j, Generator? gen=None, "
      "MemoryFormat mf=2) -> ()");
  EXPECT_EQ(default_of(s, "a").to_int(), -1);
  EXPECT_EQ(default_of(s, "b").kind(), ValueKind::Float);
  EXPECT_DOUBLE_EQ(default_of(s, "b").to_double(), 1e-05);
  EXPECT_EQ(default_of(s, "c").kind(), ValueKind::Float);
  EXPECT_DOUBLE_EQ(default_of(s, "c").to_double(), 1.0);
  EXPECT_EQ(default_of(s, "d").kind(), ValueKind::Int);
  EXPECT_EQ(default_of(s, "e").kind(), ValueKind::Float);
  EXPECT_TRUE(default_of(s, "f").to_bool());
  EXPECT_FALSE(default_of(s, "g").to_bool());
  EXPECT_TRUE(default_of(s, "h").is_none());
  EXPECT_EQ(default_of(s, "i").str_value(), "mean");
  EXPECT_EQ(*s.arguments[8].default_text, "\"mean\"");
  EXPECT_EQ(default_of(s, "j").str_value(), "none");
  EXPECT_EQ(default_of(s, "k").to_int_list(), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(default_of(s, "l").to_int_list(), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(default_of(s, "m").to_int_list(), (std::vector<int64_t>{-2, -1}));
  EXPECT_EQ(default_of(s, "n").kind(), ValueKind::IntList);
  EXPECT_TRUE(default_of(s, "n").to_int_list().empty());
  EXPECT_EQ(default_of(s, "o").float_list(), (std::vector<double>{1.0, 2.5}));
  EXPECT_TRUE(default_of(s, "p").is_none());
  EXPECT_EQ(default_of(s, "q").to_dtype(), DType::Int64);
  EXPECT_EQ(default_of(s, "r").to_memory_format(), MemoryFormat::Contiguous);
  EXPECT_EQ(default_of(s, "s").to_layout(), Layout::Strided);
  EXPECT_TRUE(std::isinf(default_of(s, "t").to_double()));
  EXPECT_LT(default_of(s, "t").to_double(), 0);
  EXPECT_EQ(default_of(s, "reduction").to_int(), 1);
  EXPECT_EQ(default_of(s, "u").bool_list(), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(default_of(s, "v").to_device(), Device::cuda(1));
  EXPECT_DOUBLE_EQ(default_of(s, "w").to_double(), 1e-06);
  EXPECT_DOUBLE_EQ(default_of(s, "x").to_double(), -0.5);
  EXPECT_EQ(default_of(s, "y").to_dtype(), DType::Float16);
  EXPECT_EQ(default_of(s, "z").kind(), ValueKind::TensorList);
  // Not representable: kept as text, never an error.
  EXPECT_EQ(default_of(s, "cc").kind(), ValueKind::String);
  EXPECT_EQ(default_of(s, "cc").str_value(), "1j");
  EXPECT_TRUE(default_of(s, "gen").is_none());
  EXPECT_EQ(default_of(s, "mf").to_memory_format(), MemoryFormat::ChannelsLast);
  EXPECT_TRUE(parse_schema(s.str()) == s);
}

TEST(SchemaParser, UnrepresentableDefaultsAreKeptAsText) {
  Schema s = parse_schema(
      "f(ScalarType a=99, int b=banana, str[] c=['a', 'b'], int d=\"x, y\", Device e=nowhere) -> "
      "()");
  EXPECT_EQ(default_of(s, "a").str_value(), "99");
  EXPECT_EQ(default_of(s, "b").str_value(), "banana");
  EXPECT_EQ(default_of(s, "c").str_value(), "['a', 'b']");
  EXPECT_EQ(default_of(s, "d").str_value(), "\"x, y\"");
  EXPECT_EQ(default_of(s, "e").str_value(), "nowhere");
}

void expect_input_error(const std::string& text, const std::string& fragment) {
  try {
    parse_schema(text);
    ADD_FAILURE() << "no error for: " << text;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input) << text;
    std::string msg = e.what();
    EXPECT_NE(msg.find("schema"), std::string::npos) << msg;
    EXPECT_NE(msg.find(fragment), std::string::npos) << "wanted '" << fragment << "' in: " << msg;
  }
}

TEST(SchemaParser, MalformedSchemasNameColumnAndExpectation) {
  expect_input_error("", "column 1: expected an operator name, got the end of the schema");
  expect_input_error("add.Tensor Tensor self) -> Tensor", "column 12: expected '(' after the");
  expect_input_error("add(Tensor self -> Tensor", "column 17: expected ',' or ')'");
  expect_input_error("add(Tensor self) Tensor", "column 18: expected '->' after the arguments");
  expect_input_error("add(Tensor) -> Tensor", "column 11: expected an argument name, got ')'");
  expect_input_error("add(Tensor self, ) -> Tensor", "column 18: expected a type");
  expect_input_error("add(Tensor self=) -> Tensor", "expected a default value");
  expect_input_error("add(Tensor(a! self) -> Tensor", "expected ')' closing the alias");
  expect_input_error("add(int[2 x) -> Tensor", "expected ']'");
  expect_input_error("add(int[x] a) -> Tensor", "expected a list size");
  expect_input_error("add(Tensor self) -> Tensor junk",
                     "expected the end of the schema, got 'junk'");
  expect_input_error("add(Tensor self) -> (Tensor, ", "got the end of the schema");
  expect_input_error("add(*, *, Tensor a) -> ()", "only one '*'");
  expect_input_error("add(..., Tensor a) -> ()", "varargs must come last");
  expect_input_error("add(str s=\"abc) -> ()", "expected a closing quote");
  expect_input_error("add(int[] a=[1, 2) -> ()",
                     "column 18: expected a closing ']' in the default");
  expect_input_error("add(int[] a=[1, 2 -> ()", "column 24: expected a closing ']' in the default");
  expect_input_error("ns::(Tensor a) -> ()", "expected an operator name after '::'");
  expect_input_error("add.(Tensor a) -> ()", "expected an overload name after '.'");
  expect_input_error("add(int[][] a) -> ()", "nested lists");
  expect_input_error("add(Dict(str, t a -> ()", "column 9: expected a closing ')'");
}

}  // namespace
}  // namespace crucible
