// Modules and capture: state-dict names, meta-checked calls, and captured graphs that print,
// parse back and run on any backend.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "crucible/core/error.h"
#include "crucible/graph/executor.h"
#include "crucible/graph/parse.h"
#include "crucible/graph/print.h"
#include "crucible/nn/layers.h"

namespace {

using crucible::DType;
using crucible::graph::DeclKind;
using crucible::graph::Initializer;
using namespace crucible::nn;

class Block : public Module {
 public:
  Block() {
    ln = &register_module("ln", std::make_unique<LayerNorm>(8));
    attn = &register_module(
        "attn", std::make_unique<MultiheadAttention>(MultiheadAttention::Config{
                    .dim = 8, .heads = 4, .kv_heads = 2, .causal = true, .rope_theta = 10000}));
    mlp = &register_module("mlp", std::make_unique<Mlp>(8, 16, "swiglu", false));
  }
  Var forward(Tracer& t, const Var& x) const {
    const Var h = F::add(t, x, attn->forward(t, ln->forward(t, x)));
    return F::add(t, h, mlp->forward(t, h));
  }
  LayerNorm* ln;
  MultiheadAttention* attn;
  Mlp* mlp;
};

class Net : public Module {
 public:
  Net() {
    auto& list = register_module("h", std::make_unique<ModuleList>());
    for (int i = 0; i < 2; ++i) blocks.push_back(&list.push_back(std::make_unique<Block>()));
  }
  Var forward(Tracer& t, const Var& x) const {
    Var h = x;
    for (const Block* b : blocks) h = b->forward(t, h);
    return h;
  }
  std::vector<Block*> blocks;
};

Initializer normal() {
  Initializer i;
  i.kind = Initializer::Kind::Normal;
  i.args = {crucible::cases::Literal::integer(0), crucible::cases::Literal::integer(1)};
  return i;
}

TEST(NnModule, StateDictNamesAreHierarchical) {
  Net net;
  std::vector<std::string> names;
  for (const StateEntry& e : net.state()) names.push_back(e.name);
  ASSERT_EQ(names.size(), 2u * (2 + 4 + 3));
  EXPECT_EQ(names[0], "h.0.ln.weight");
  EXPECT_EQ(names[2], "h.0.attn.q_proj.weight");
  EXPECT_EQ(names[3], "h.0.attn.k_proj.weight");
  EXPECT_EQ(net.blocks[1]->attn->prefix(), "h.1.attn.");
  EXPECT_EQ(names.back(), "h.1.mlp.down_proj.weight");
  // q: 8x8, k and v: 4x8 (two KV heads of 2), o: 8x8; swiglu: 3 x 16x8; ln: 2 x 8
  EXPECT_EQ(net.num_parameters(), 2 * (64 + 32 + 32 + 64 + 3 * 128 + 16));
}

TEST(NnModule, CaptureRoundTripsAndRunsAlike) {
  Net net;
  Tracer t("net");
  const Var x = t.declare(DeclKind::Input, "x", {2, 5, 8}, DType::Float32, normal());
  t.output(net.forward(t, x));
  const crucible::graph::Graph g = t.finish();
  const std::string text = crucible::graph::print_graph(g);
  EXPECT_EQ(crucible::graph::print_graph(crucible::graph::parse_graph(text)), text);
  EXPECT_NE(text.find("param %h.1.mlp.gate_proj.weight : T([16, 8], f32)"), std::string::npos);
  EXPECT_NE(text.find("aten.bmm.default"), std::string::npos);
  const auto ops = g.ops_used();
  EXPECT_TRUE(std::find(ops.begin(), ops.end(), "aten.silu.default") != ops.end());
  crucible::graph::ExecOptions o;
  o.seed = 3;
  const auto ref = crucible::graph::execute(g, "ref", o);
  const auto cpu = crucible::graph::execute(g, "cpu", o);
  ASSERT_EQ(ref.outputs[0].shape(), (crucible::Shape{2, 5, 8}));
  double diff = 0, mag = 0;
  for (int64_t i = 0; i < ref.outputs[0].numel(); ++i) {
    diff = std::max(diff, std::abs(ref.outputs[0].get(i) - cpu.outputs[0].get(i)));
    mag = std::max(mag, std::abs(ref.outputs[0].get(i)));
  }
  EXPECT_LT(diff, 1e-4);
  EXPECT_GT(mag, 0.1);
}

TEST(NnModule, CausalMaskHidesTheFuture) {
  // Perturbing the last position's input must not change any earlier position's output.
  MultiheadAttention attn({.dim = 4, .heads = 2, .kv_heads = 1, .causal = true});
  attn.to(DType::Float64);
  Tracer t("causal");
  const Var x = t.declare(DeclKind::Input, "x", {1, 3, 4}, DType::Float64, normal());
  t.output(attn.forward(t, x));
  const crucible::graph::Graph g = t.finish();
  crucible::graph::TensorMap inputs = crucible::graph::materialize_declarations(g, 1);
  crucible::graph::ExecOptions o;
  o.seed = 1;
  o.inputs = &inputs;
  const auto a = crucible::graph::execute(g, "ref", o);
  inputs["x"] = inputs["x"].clone();
  for (int64_t j = 8; j < 12; ++j) inputs["x"].set(j, 5.0);
  const auto b = crucible::graph::execute(g, "ref", o);
  for (int64_t j = 0; j < 8; ++j) EXPECT_DOUBLE_EQ(a.outputs[0].get(j), b.outputs[0].get(j)) << j;
  bool changed = false;
  for (int64_t j = 8; j < 12; ++j) changed |= a.outputs[0].get(j) != b.outputs[0].get(j);
  EXPECT_TRUE(changed);
}

TEST(NnModule, MetaRefusesACallThatDoesNotChain) {
  Linear lin(8, 4);
  Tracer t("bad");
  const Var x = t.declare(DeclKind::Input, "x", {2, 5}, DType::Float32, normal());
  try {
    lin.forward(t, x);
    FAIL() << "a [2, 5] input went through Linear(8, 4)";
  } catch (const crucible::Error& e) {
    EXPECT_NE(std::string(e.what()).find("aten.addmm.default"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cannot be multiplied (2x5 and 8x4)"), std::string::npos)
        << e.what();
  }
}

TEST(NnModule, DropoutIsSeededAndOffInEval) {
  Dropout drop(0.5);
  auto run = [&](uint64_t seed, bool training) {
    drop.train(training);
    Tracer t("drop");
    const Var x = t.declare(DeclKind::Input, "x", {64}, DType::Float32, normal());
    t.output(drop.forward(t, x));
    crucible::graph::ExecOptions o;
    o.seed = seed;
    return crucible::graph::execute(t.finish(), "ref", o).outputs[0];
  };
  const auto a = run(1, true), b = run(1, true), c = run(2, true);
  int zeros = 0, differ = 0;
  for (int64_t i = 0; i < 64; ++i) {
    EXPECT_EQ(a.get(i), b.get(i));
    zeros += a.get(i) == 0;
    differ += a.get(i) != c.get(i);
  }
  EXPECT_GT(zeros, 10);
  EXPECT_GT(differ, 0);
  const auto e = run(1, false);
  int ezeros = 0;
  for (int64_t i = 0; i < 64; ++i) ezeros += e.get(i) == 0;
  EXPECT_EQ(ezeros, 0);
}

}  // namespace
