// Every malformed graph is refused with one line naming file:line:column and what is wrong.
#include <gtest/gtest.h>

#include <string>

#include "graph/graph_test_util.h"

namespace crucible::graph {
namespace {

using testing::parse_error;
using testing::with_header;

TEST(GraphErrors, Version) {
  EXPECT_EQ(parse_error("crucible-graph 2\nname t\nkind forward\n"),
            "g.graph:1:16: graph format version '2' is not supported: this crucible reads "
            "version 1 (crucible-graph 1)");
  EXPECT_EQ(parse_error("# comment\nname t\n"),
            "g.graph:2:1: expected the header 'crucible-graph 1' as the first line, got 'name'");
  EXPECT_EQ(parse_error(""), "g.graph: empty graph: expected the header 'crucible-graph 1'");
}

TEST(GraphErrors, MissingPropertiesAndOutputs) {
  EXPECT_EQ(parse_error("crucible-graph 1\nkind forward\ninput %x : T([2], f32)\noutput %x\n"),
            "g.graph: the graph has no 'name' line");
  EXPECT_EQ(parse_error(with_header("input %x : T([2], f32)\n")),
            "g.graph: the graph returns nothing: no output, loss or grad line");
  EXPECT_EQ(parse_error("crucible-graph 1\nname t\nkind inference\n"),
            "g.graph:3:6: expected kind forward or training, got 'inference'");
  EXPECT_EQ(parse_error(with_header("frobnicate %x\n")),
            "g.graph:4:1: expected a declaration (input, param, buffer, const), a node (%x = "
            "aten.op(...)), output, loss, grad, name, kind or source, got 'frobnicate'");
}

TEST(GraphErrors, UnknownOp) {
  EXPECT_EQ(parse_error(with_header("input %x : T([2], f32)\n%y = aten.nosuch(%x)\n")),
            "g.graph:5:6: unknown op 'aten.nosuch.default': not in crucible's catalog (crucible "
            "ops lists it)");
}

TEST(GraphErrors, UnknownInitialiser) {
  EXPECT_EQ(parse_error(with_header("param %w : T([2], f32) gaussian(0, 1)\n")),
            "g.graph:4:24: unknown initialiser 'gaussian' (expected normal(mean, std), "
            "uniform(lo, hi), zeros, ones, full(v), arange, index(lo, hi), bool, data(v0, ...) "
            "or grad)");
}

TEST(GraphErrors, InitialiserArgumentsAndDtypes) {
  EXPECT_EQ(parse_error(with_header("input %i : T([2], i64)\n")),
            "g.graph:4:23: %i is an integer tensor: give its values with index(lo, hi) or "
            "data(v0, ...)");
  EXPECT_EQ(parse_error(with_header("const %c : T([4], f32) data(1.0, 2.0, 3.0)\n")),
            "g.graph:4:28: data(...) takes 4 values (the elements of T([4], f32)), got 3");
  EXPECT_EQ(parse_error(with_header("param %w : T([2], f32) normal(0)\n")),
            "g.graph:4:30: normal(...) takes 2 argument(s), got 1");
  EXPECT_EQ(parse_error(with_header("input %i : T([2], i64) index(5, 5)\n")),
            "g.graph:4:29: index(lo, hi) needs lo < hi (integers in [lo, hi))");
  EXPECT_EQ(parse_error(with_header("input %i : T([2], i32) normal(0, 1)\n")),
            "g.graph:4:24: normal cannot initialise a tensor of dtype i32");
  EXPECT_EQ(parse_error(with_header("input %i : T([2], i32) data(1, 2.5)\n")),
            "g.graph:4:28: data(...) takes integers for a tensor of dtype i32, got 2.5");
  EXPECT_EQ(parse_error(with_header("param %w : T([2], f32) grad\n")),
            "g.graph:4:24: grad marks an input (the upstream gradient), not a param");
  EXPECT_EQ(parse_error(with_header("param %w : T([2], f32) zeros(1)\n")),
            "g.graph:4:29: zeros takes no arguments");
  EXPECT_EQ(parse_error(with_header("param %w : 3 zeros\n")),
            "g.graph:4:12: expected the value's type T([shape], dtype) after ':'");
  EXPECT_EQ(parse_error(with_header("param %w : T([2], f99) zeros\n")).substr(0, 19),
            "g.graph:4:19: expec");
}

TEST(GraphErrors, UseBeforeDefinitionNamesBothPlaces) {
  EXPECT_EQ(parse_error(with_header("input %x : T([2], f32)\n"
                                    "%y = aten.add.Tensor(%x, %z)\n"
                                    "%z = aten.relu(%x)\n"
                                    "output %y\n")),
            "g.graph:5:26: %z is used before its definition at g.graph:6");
  EXPECT_EQ(parse_error(with_header("input %x : T([2], f32)\n%y = aten.relu(%q)\n")),
            "g.graph:5:16: unknown value %q (never defined)");
  EXPECT_EQ(parse_error(with_header("input %x : T([2], f32)\noutput %y\n%y = aten.relu(%x)\n")),
            "g.graph:5:8: %y is used before its definition at g.graph:6");
  EXPECT_EQ(parse_error(with_header("input %x : T([2], f32)\n"
                                    "%a, %_ = aten.max.dim(%x, 0)\n"
                                    "%b = aten.relu(%_)\n")),
            "g.graph:6:16: %_ names a discarded output; it cannot be used");
}

TEST(GraphErrors, Redefinition) {
  EXPECT_EQ(parse_error(with_header("input %x : T([2], f32)\nparam %x : T([2], f32)\n")),
            "g.graph:5:7: %x is already defined at g.graph:4");
  EXPECT_EQ(parse_error(with_header("input %x : T([2], f32)\n%y = aten.relu(%x)\n"
                                    "%y = aten.neg(%x)\n")),
            "g.graph:6:1: %y is already defined at g.graph:5");
}

TEST(GraphErrors, WrongNumberOfOutputNames) {
  EXPECT_EQ(parse_error(with_header("input %x : T([2], f32)\n%a, %b = aten.relu(%x)\n")),
            "g.graph:5:1: aten.relu.default returns 1 tensor(s) here; 2 output name(s) given");
  // A list return gets one name per element.
  EXPECT_EQ(parse_error(with_header("input %x : T([6], f32)\n%a, %b = aten.split.Tensor(%x, 2)\n")),
            "g.graph:5:1: aten.split.Tensor returns 3 tensor(s) here; 2 output name(s) given");
  EXPECT_EQ(parse_error(with_header("input %x : T([6], f32)\n"
                                    "%a, %b, %c = aten.split.Tensor(%x, 2)\noutput %c\n")),
            "");
}

TEST(GraphErrors, MetaRefusalNamesTheNode) {
  const std::string e =
      parse_error(with_header("input %x : T([2, 3], f32)\n"
                              "%y = aten.mm(%x, %x)\n"));
  EXPECT_EQ(e.rfind("g.graph:5:6: %y = aten.mm.default: the op's meta function refuses the call: "
                    "mat1 and mat2",
                    0),
            0u)
      << e;
  EXPECT_NE(e.find("2x3"), std::string::npos) << e;
  // An argument the schema does not take is refused the same way.
  EXPECT_NE(parse_error(with_header("input %x : T([2], f32)\n%y = aten.relu(%x, bogus=1)\n"))
                .find("g.graph:5:6: %y = aten.relu.default: the op's meta function refuses the "
                      "call: "),
            std::string::npos);
}

TEST(GraphErrors, AnnotationDisagreeingWithMeta) {
  EXPECT_EQ(parse_error(with_header("input %x : T([2, 3], f32)\n"
                                    "%y = aten.relu(%x) -> T([2, 4], f32)\n")),
            "g.graph:5:23: the annotation -> T([2, 4], f32) disagrees with aten.relu.default's "
            "meta function: -> T([2, 3], f32)");
  // Strides are checked where the annotation writes them.
  EXPECT_EQ(parse_error(with_header("input %x : T([2, 3], f32)\n"
                                    "%y = aten.t(%x) -> T([3, 2], f32, stride=(2, 1))\n")),
            "g.graph:5:20: the annotation -> T([3, 2], f32, stride=(2, 1)) disagrees with "
            "aten.t.default's meta function: -> T([3, 2], f32, stride=(1, 3))");
  EXPECT_EQ(parse_error(with_header("input %x : T([2, 3], f32)\n"
                                    "%y = aten.t(%x) -> T([3, 2], f32)\noutput %y\n")),
            "");
  EXPECT_EQ(parse_error(with_header("input %x : T([2, 3], f32)\n"
                                    "%y = aten.t(%x) -> T([3, 2], f16)\n")),
            "g.graph:5:20: the annotation -> T([3, 2], f16) disagrees with aten.t.default's "
            "meta function: -> T([3, 2], f32, stride=(1, 3))");
  EXPECT_EQ(
      parse_error(with_header("input %x : T([2, 3], f32)\n"
                              "%a, %i = aten.max.dim(%x, 1) -> (T([2], f32), T([2], i32))\n")),
      "g.graph:5:33: the annotation -> (T([2], f32), T([2], i32)) disagrees with "
      "aten.max.dim's meta function: -> (T([2], f32), T([2], i64))");
}

TEST(GraphErrors, NodeSyntax) {
  // Errors inside the argument list come from the case grammar's parser, at their column.
  EXPECT_EQ(parse_error(with_header("input %x : T([2], f32)\n%y = aten.relu(%x,, 1)\n")),
            "g.graph:5:19: expected a value (number, string, True/False/None, T(...), list, "
            "tuple, dict or dtype), got ','");
  EXPECT_EQ(parse_error(with_header("input %x : T([2], f32)\n%y = aten.relu(T([2], f32))\n")),
            "g.graph:5:16: a node's tensor arguments are value references (%name), not T(...)");
  EXPECT_EQ(parse_error(with_header("input %x : T([2], f32)\n%y aten.relu(%x)\n")),
            "g.graph:5:4: expected ',' or '=' after the output name, got 'aten.relu(%x)'");
  EXPECT_EQ(parse_error(with_header("input %x : T([2], f32)\n%y = aten.relu(%x) extra\n")),
            "g.graph:5:20: expected end of line after the arguments, got 'extra'");
}

TEST(GraphErrors, GradNamesADeclaredParam) {
  EXPECT_EQ(parse_error(with_header("input %x : T([2], f32)\ngrad %x fc.weight\n")),
            "g.graph:5:9: grad names 'fc.weight', which is not a declared param");
}

}  // namespace
}  // namespace crucible::graph
