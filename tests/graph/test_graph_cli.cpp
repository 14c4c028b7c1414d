// `crucible graph check` and `crucible graph run` through the real binary.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "crucible/cases/literal.h"
#include "crucible/graph/parse.h"
#include "crucible/graph/print.h"
#include "crucible/graph/safetensors.h"
#include "crucible/graph/values.h"
#include "e2e/cli_helpers.h"
#include "graph/graph_test_util.h"

namespace crucible::e2e {
namespace {

using graph::testing::example;

TEST(GraphCli, CheckPrintsASummary) {
  const Output o = crucible("graph check " + example("conv_bn.graph"));
  EXPECT_EQ(o.status, 0) << o.out;
  EXPECT_NE(o.out.find("graph conv-bn-tiny (forward)"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("declarations: 1 input(s), 4 param(s) (120 elements), 3 buffer(s), "
                       "1 const(s)"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("nodes: 7, 7 distinct op(s), all in the catalog"), std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("output %s T([2, 4], f32)"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("output %pi T([2, 4, 4, 4], i64)"), std::string::npos) << o.out;
}

TEST(GraphCli, CheckWithABackendListsWhatItLacks) {
  Output o = crucible("graph check " + example("mlp.graph") + " --backend cpu");
  EXPECT_EQ(o.status, 0) << o.out;
  EXPECT_NE(o.out.find("backend cpu: runs every node"), std::string::npos) << o.out;
  o = crucible("graph check " + example("mlp.graph") + " --backend faulty");
  EXPECT_EQ(o.status, 1) << o.out;
  EXPECT_NE(o.out.find("backend faulty: cannot run 3 op(s)"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("aten.addmm.default: faulty does not implement it"), std::string::npos)
      << o.out;
}

TEST(GraphCli, BadGraphIsOneLineAndExitTwo) {
  const std::string dir = temp_dir("graph-cli");
  const std::string file = dir + "/bad.graph";
  std::ofstream(file) << "crucible-graph 1\nname t\nkind forward\ninput %x : T([2], f32)\n"
                         "%y = aten.relu(%x) -> T([3], f32)\noutput %y\n";
  Output o = crucible("graph check " + file);
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_EQ(o.out, "crucible: error: " + file +
                       ":5:23: the annotation -> T([3], f32) disagrees with aten.relu.default's "
                       "meta function: -> T([2], f32)\n");
  o = crucible("graph check " + dir + "/absent.graph");
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_NE(o.out.find("absent.graph: cannot read the graph file"), std::string::npos) << o.out;
  o = crucible("graph run " + example("mlp.graph") + " --seed -1");
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_NE(o.out.find("--seed '-1'"), std::string::npos) << o.out;
  o = crucible("graph");
  EXPECT_EQ(o.status, 2) << o.out;
}

TEST(GraphCli, RunPrintsShapesAndChecksums) {
  const Output ref = crucible("graph run " + example("mlp.graph") + " --backend ref --seed 3");
  EXPECT_EQ(ref.status, 0) << ref.out;
  EXPECT_NE(ref.out.find("graph mlp-tiny on ref (seed 3)"), std::string::npos) << ref.out;
  EXPECT_NE(ref.out.find("output %out T([4, 4], f32) sum="), std::string::npos) << ref.out;
  // Same seed, same checksums; another seed, others.
  EXPECT_EQ(crucible("graph run " + example("mlp.graph") + " --backend ref --seed 3").out, ref.out);
  const Output other = crucible("graph run " + example("mlp.graph") + " --backend ref --seed 4");
  EXPECT_NE(other.out.substr(other.out.find("sum=")), ref.out.substr(ref.out.find("sum=")));
  const Output golden = crucible("graph run " + example("mlp_train.graph") + " --golden");
  EXPECT_EQ(golden.status, 0) << golden.out;
  EXPECT_NE(golden.out.find("on ref in f64"), std::string::npos) << golden.out;
  EXPECT_NE(golden.out.find("grad %gw (fc.weight) T([3, 8], f64)"), std::string::npos)
      << golden.out;
}

TEST(GraphCli, ANodeRunsAsACase) {
  const graph::Graph g = graph::read_graph(example("mlp.graph"));
  const std::string dir = temp_dir("graph-case");
  const std::string call = cases::print_call(graph::node_call_spec(g, 4));
  const Output o = crucible("run --backend cpu --op aten.addmm.default --case " +
                            shell_quote(call) + " --workers 1 --quiet --out " + dir + "/run");
  EXPECT_EQ(o.status, 0) << o.out;
  const auto results = read_jsonl(dir + "/run/results.jsonl");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0]["status"], "passed");
  EXPECT_EQ(results[0]["case"], call);
}

TEST(GraphCli, RunsOnAKernelFolder) {
  // Kernels from outside, compiled and run in sandboxed candidate processes, give ref's values.
  const std::string dir = temp_dir("graph-dir");
  const std::string file = dir + "/mm_relu.graph";
  std::ofstream(file) << "crucible-graph 1\nname mm-relu\nkind forward\n"
                         "input %x : T([4, 8], f32)\nparam %w : T([8, 3], f32)\n"
                         "%y = aten.mm(%x, %w)\n%r = aten.relu(%y)\noutput %r\n";
  const std::string kernels = std::string(CRUCIBLE_SOURCE_DIR) + "/examples/kernels";
  const Output d = crucible("graph run " + file + " --backend dir:" + kernels);
  ASSERT_EQ(d.status, 0) << d.out;
  const Output ref = crucible("graph run " + file + " --backend ref");
  const auto checksum = [](const std::string& out) {
    const size_t at = out.find("  output %r");
    return at == std::string::npos ? out : out.substr(at, out.find('\n', at) - at);
  };
  EXPECT_EQ(checksum(d.out), checksum(ref.out));
}

TEST(GraphCli, RunWithWeightsAndRecordedInputs) {
  const std::string f = std::string(CRUCIBLE_SOURCE_DIR) + "/tests/fixtures/graphs/gpt2-tiny-fwd";
  const Output o = crucible("graph run " + f + ".graph --backend cpu --weights " + f +
                            ".safetensors --inputs " + f + ".io.safetensors");
  EXPECT_EQ(o.status, 0) << o.out;
  EXPECT_NE(o.out.find("output %view_39 T([2, 8, 96], f32) sum="), std::string::npos) << o.out;
  const Output bad = crucible("graph run " + f + ".graph --weights " + f + ".io.safetensors");
  EXPECT_EQ(bad.status, 2) << bad.out;
  EXPECT_NE(bad.out.find(".io.safetensors: tensor 'transformer.wte.weight': missing"),
            std::string::npos)
      << bad.out;
}

TEST(GraphCli, ACrashingBackendIsTheRunsVerdict) {
  const std::string dir = temp_dir("graph-crash");
  const std::string file = dir + "/neg.graph";
  std::ofstream(file) << "crucible-graph 1\nname neg\nkind forward\ninput %x : T([8], f32)\n"
                         "%y = aten.neg(%x)\noutput %y\n";
  const Output o = crucible("graph run " + file + " --backend faulty --timeout 5");
  EXPECT_EQ(o.status, 1) << o.out;
  EXPECT_NE(o.out.find("  crashed: "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("SIGSEGV"), std::string::npos) << o.out;
  EXPECT_EQ(crucible("graph run " + file + " --timeout 0").status, 2);
  EXPECT_EQ(crucible("graph run " + file + " --memory-limit lots").status, 2);
}

TEST(GraphCli, RunWithWeights) {
  const std::string dir = temp_dir("graph-weights");
  const graph::Graph g = graph::read_graph(example("mlp.graph"));
  const graph::TensorMap v = graph::materialize_declarations(g, 3);
  std::vector<std::pair<std::string, Tensor>> ts;
  for (const char* p : {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"})
    ts.emplace_back(p, v.at(p));
  graph::write_safetensors(dir + "/w.safetensors", ts);
  // The seed-3 parameters loaded from the file under seed 3 give the seed-3 run.
  const Output with = crucible("graph run " + example("mlp.graph") + " --backend ref --seed 3 " +
                               "--weights " + dir + "/w.safetensors");
  EXPECT_EQ(with.status, 0) << with.out;
  const Output plain = crucible("graph run " + example("mlp.graph") + " --backend ref --seed 3");
  EXPECT_EQ(with.out.substr(with.out.find("\n")), plain.out.substr(plain.out.find("\n")));
  ts.pop_back();
  graph::write_safetensors(dir + "/w.safetensors", ts);
  const Output missing =
      crucible("graph run " + example("mlp.graph") + " --weights " + dir + "/w.safetensors");
  EXPECT_EQ(missing.status, 2) << missing.out;
  EXPECT_NE(missing.out.find("w.safetensors: tensor 'fc2.bias': missing"), std::string::npos)
      << missing.out;
}

}  // namespace
}  // namespace crucible::e2e
