// The graph format: parsing, the canonical printer (round trips), nodes as trace-grammar cases.
#include <gtest/gtest.h>

#include <string>

#include "crucible/cases/references.h"
#include "crucible/cases/trace.h"
#include "crucible/graph/parse.h"
#include "crucible/graph/print.h"
#include "crucible/ops/materialize.h"
#include "crucible/ops/op.h"
#include "graph/graph_test_util.h"

namespace crucible::graph {
namespace {

using testing::example;
using testing::parse_error;
using testing::with_header;

TEST(GraphParse, MlpExampleHasEveryValueSpec) {
  const Graph g = read_graph(example("mlp.graph"));
  EXPECT_EQ(g.name, "mlp-tiny");
  EXPECT_EQ(g.kind, "forward");
  ASSERT_TRUE(g.source);
  EXPECT_EQ(*g.source, "hand-written: Linear(8, 16), ReLU, Linear(16, 4), log_softmax");
  ASSERT_EQ(g.decls.size(), 5u);
  EXPECT_EQ(g.decls[0].kind, DeclKind::Input);
  EXPECT_FALSE(g.decls[0].init.written);
  EXPECT_EQ(g.decls[0].init.kind, Initializer::Kind::Normal);
  EXPECT_EQ(g.decls[1].name, "fc1.weight");
  EXPECT_EQ(g.decls[1].init.str(), "normal(0, 0.3)");
  EXPECT_EQ(g.decls[4].init.str(), "full(0.1)");
  ASSERT_EQ(g.nodes.size(), 6u);
  EXPECT_EQ(g.nodes[2].op, "aten.relu.default");  // written aten.relu
  EXPECT_EQ(g.nodes[4].call.kwargs.size(), 2u);
  // The transposed weight is a view: its spec keeps the strides.
  EXPECT_EQ(g.value("t0").spec.shape, (Shape{8, 16}));
  EXPECT_EQ(g.value("t0").spec.strides, (Shape{1, 8}));
  EXPECT_EQ(g.value("h").spec.shape, (Shape{4, 16}));
  EXPECT_EQ(g.value("out").spec.shape, (Shape{4, 4}));
  EXPECT_EQ(g.value("out").node, 5);
  EXPECT_EQ(g.value("fc2.bias").decl, 4);
  ASSERT_EQ(g.outputs.size(), 1u);
  EXPECT_EQ(g.outputs[0].value, "out");
  EXPECT_EQ(g.ops_used(),
            (std::vector<std::string>{"aten._log_softmax.default", "aten.addmm.default",
                                      "aten.relu.default", "aten.t.default"}));
}

TEST(GraphParse, ConvBnExampleNamesEveryReturn) {
  const Graph g = read_graph(example("conv_bn.graph"));
  ASSERT_EQ(g.nodes.size(), 7u);
  // _native_batch_norm_legit_no_training returns three tensors; two are ignored as %_.
  EXPECT_EQ(g.nodes[1].outputs, (std::vector<std::string>{"bn", "_", "_"}));
  EXPECT_EQ(g.nodes[1].out_specs.size(), 3u);
  EXPECT_EQ(g.value("pi").spec.dtype, DType::Int64);
  EXPECT_EQ(g.value("pi").spec.shape, (Shape{2, 4, 4, 4}));
  EXPECT_EQ(g.value("s").spec.shape, (Shape{2, 4}));
  EXPECT_EQ(g.find_decl("scale")->init.args.size(), 4u);
  EXPECT_EQ(g.find_decl("bn.num_batches_tracked")->spec.dtype, DType::Int64);
  EXPECT_EQ(g.outputs.size(), 2u);
}

TEST(GraphParse, TrainingExampleReturnsLossAndGradients) {
  const Graph g = read_graph(example("mlp_train.graph"));
  EXPECT_EQ(g.kind, "training");
  ASSERT_EQ(g.outputs.size(), 3u);
  EXPECT_EQ(g.outputs[0].kind, GraphOutput::Kind::Loss);
  EXPECT_EQ(g.outputs[1].kind, GraphOutput::Kind::Grad);
  EXPECT_EQ(g.outputs[1].param, "fc.weight");
  EXPECT_EQ(g.value("gw").spec.shape, (Shape{3, 8}));
  EXPECT_EQ(g.find_decl("tangent")->init.kind, Initializer::Kind::Grad);
}

TEST(GraphPrint, RoundTripsTheExamples) {
  for (const char* name : {"mlp.graph", "conv_bn.graph", "mlp_train.graph", "attention.graph"}) {
    const Graph g = read_graph(example(name));
    const std::string text = print_graph(g);
    const Graph again = parse_graph(text, "printed");
    EXPECT_EQ(print_graph(again), text) << name;
    EXPECT_EQ(again.nodes.size(), g.nodes.size());
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      EXPECT_EQ(again.nodes[i].call, g.nodes[i].call) << name << " node " << i;
      EXPECT_EQ(again.nodes[i].out_specs, g.nodes[i].out_specs) << name << " node " << i;
    }
  }
}

TEST(GraphPrint, CanonicalText) {
  const Graph g = parse_graph(
      "# leading comment\n"
      "crucible-graph 1   # the version\n"
      "name   small\n"
      "kind forward\n"
      "source \"a # inside a string is no comment\"\n"
      "\n"
      "input   %x :  T([2, 3], f32)\n"
      "input %i : T([2], i64) index(0, 3)\n"
      "param %w : T([3, 2], f32, stride=(1, 3)) normal(0, 1e-05)\n"
      "%y =   aten.mm(%x, %w)   # a comment\n"
      "%e = aten.embedding.default(%y, %i, padding_idx=-1, scale_grad_by_freq=False)\n"
      "%s = aten.sum.SymInt(%e, [1], keepdim=True)\n"
      "output %s\n",
      "g");
  EXPECT_EQ(print_graph(g),
            "crucible-graph 1\n"
            "name small\n"
            "kind forward\n"
            "source \"a # inside a string is no comment\"\n"
            "\n"
            "input %x : T([2, 3], f32)\n"
            "input %i : T([2], i64) index(0, 3)\n"
            "param %w : T([3, 2], f32, stride=(1, 3)) normal(0, 1e-05)\n"
            "\n"
            "%y = aten.mm.default(%x, %w) -> T([2, 2], f32)\n"
            "%e = aten.embedding.default(%y, %i, padding_idx=-1, scale_grad_by_freq=False) -> "
            "T([2, 2], f32)\n"
            "%s = aten.sum.dim_IntList(%e, [1], keepdim=True) -> T([2, 1], f32)\n"
            "\n"
            "output %s\n");
}

TEST(GraphPrint, NodeAsCaseIsATraceCase) {
  const Graph g = read_graph(example("mlp.graph"));
  EXPECT_EQ(node_as_case(g, 0), "Operator: aten.t.default\ncnt: 1, ((T([16, 8], f32),), {})\n");
  EXPECT_EQ(node_as_case(g, 1),
            "Operator: aten.addmm.default\n"
            "cnt: 1, ((T([16], f32), T([4, 8], f32), T([8, 16], f32, stride=(1, 8))), {})\n");
  EXPECT_EQ(node_as_case(g, 4),
            "Operator: aten.addmm.default\n"
            "cnt: 1, ((T([4], f32), T([4, 16], f32), T([16, 4], f32, stride=(1, 16))), "
            "{'beta': 1, 'alpha': 1})\n");
  // The trace parser reads every node back, and the case computes on the reference.
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const auto entries = cases::parse_trace(node_as_case(g, i), "node");
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].op, g.nodes[i].op);
    EXPECT_EQ(entries[0].call, node_call_spec(g, i));
    const OpDef& op = OpRegistry::catalog().get(entries[0].op);
    const Values out = op.run_ref(materialize(op, entries[0].call, 0));
    ASSERT_FALSE(out.empty());
    EXPECT_EQ(TensorSpec::of(out[0].tensor()).shape, g.nodes[i].out_specs[0].shape);
  }
}

TEST(GraphPrint, UndefinedOutputsPrintAsNone) {
  const Graph g = parse_graph(with_header("input %g : T([1, 2, 4, 4], f32)\n"
                                          "input %x : T([1, 3, 4, 4], f32)\n"
                                          "param %w : T([2, 3, 3, 3], f32)\n"
                                          "%_, %gw, %gb = aten.convolution_backward.default(%g, "
                                          "%x, %w, [2], [1, 1], [1, 1], [1, 1], False, [0, 0], "
                                          "1, [False, True, True])\n"
                                          "output %gw\n"),
                              "g");
  EXPECT_FALSE(g.nodes[0].out_specs[0].defined);
  EXPECT_NE(print_node(g, 0).find("-> (None, T([2, 3, 3, 3], f32), T([2], f32))"),
            std::string::npos)
      << print_node(g, 0);
  EXPECT_EQ(print_graph(parse_graph(print_graph(g), "again")), print_graph(g));
}

TEST(GraphParse, TraceGrammarStillRefusesReferences) {
  EXPECT_THROW(cases::parse_call("((%x,), {})"), Error);
  EXPECT_THROW(cases::parse_literal("%x"), Error);
}

TEST(GraphParse, ArgumentListKeywordsComeLast) {
  size_t end = 0;
  const cases::CallSpec c =
      cases::parse_argument_list("(%a, [%b, None], 2, keepdim=True) -> x", {"f", 3, 10}, &end);
  EXPECT_EQ(end, 33u);
  ASSERT_EQ(c.args.size(), 3u);
  EXPECT_TRUE(cases::is_value_ref(c.args[0]));
  EXPECT_EQ(c.args[0].text, "%a");
  EXPECT_TRUE(cases::is_value_ref(c.args[1].items[0]));
  ASSERT_EQ(c.kwargs.size(), 1u);
  EXPECT_EQ(c.kwargs[0].first, "keepdim");
  try {
    cases::parse_argument_list("(%a, dim=1, 2)", {"f", 3, 10}, &end);
    FAIL() << "a positional argument after a keyword was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "f:3:22: expected a keyword argument (name=value) after the keyword argument "
              "'dim', got a positional one");
  }
}

}  // namespace
}  // namespace crucible::graph
