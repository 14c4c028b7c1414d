// A whole graph run in a worker process: the outputs come back as computed in process; a crash,
// a hang and a runaway allocation are the run's verdict.
#include <gtest/gtest.h>

#include <string>

#include "crucible/core/error.h"
#include "crucible/eval/graph_run.h"
#include "crucible/graph/parse.h"
#include "graph/graph_test_util.h"

namespace crucible {
namespace {

using graph::testing::example;
using graph::testing::with_header;

graph::Graph one_op(const std::string& op) {
  return graph::parse_graph(
      with_header("input %x : T([64], f32)\n%y = " + op + "(%x)\noutput %y\n"), "one.graph");
}

TEST(GraphIsolated, OutputsAreTheInProcessOnes) {
  const graph::Graph g = graph::read_graph(example("conv_bn.graph"));
  GraphRunOptions o;
  o.backend = "cpu";
  o.exec.seed = 6;
  const GraphRunResult r = run_graph_isolated(g, o);
  ASSERT_EQ(r.status, GraphRunResult::Status::Ok) << r.detail;
  const graph::ExecResult here = graph::execute(g, "cpu", {.seed = 6});
  ASSERT_EQ(r.outputs.size(), here.outputs.size());
  for (size_t i = 0; i < here.outputs.size(); ++i) {
    ASSERT_EQ(r.outputs[i].shape(), here.outputs[i].shape());
    ASSERT_EQ(r.outputs[i].dtype(), here.outputs[i].dtype());
    for (int64_t k = 0; k < here.outputs[i].numel(); ++k)
      EXPECT_EQ(r.outputs[i].get(k), here.outputs[i].get(k)) << i << " " << k;
  }
}

TEST(GraphIsolated, CrashHangAndRunawayMemoryAreVerdicts) {
  GraphRunOptions o;
  o.backend = "faulty";
  o.timeout_s = 1;
  o.memory_limit = size_t{256} << 20;
  GraphRunResult r = run_graph_isolated(one_op("aten.neg"), o);  // SIGSEGV
  EXPECT_EQ(r.status, GraphRunResult::Status::Crashed) << r.detail;
  EXPECT_NE(r.detail.find("SIGSEGV"), std::string::npos) << r.detail;
  r = run_graph_isolated(one_op("aten.tanh"), o);  // abort()
  EXPECT_EQ(r.status, GraphRunResult::Status::Crashed) << r.detail;
  EXPECT_NE(r.detail.find("SIGABRT"), std::string::npos) << r.detail;
  r = run_graph_isolated(one_op("aten.exp"), o);  // never returns
  EXPECT_EQ(r.status, GraphRunResult::Status::TimedOut) << r.detail;
  r = run_graph_isolated(one_op("aten.sigmoid"), o);  // allocates without end
  EXPECT_EQ(r.status, GraphRunResult::Status::MemoryLimit) << r.detail;
  // The process that asked goes on: the next run is fine.
  o.backend = "ref";
  r = run_graph_isolated(one_op("aten.neg"), o);
  ASSERT_EQ(r.status, GraphRunResult::Status::Ok) << r.detail;
  EXPECT_EQ(r.outputs.at(0).shape(), (Shape{64}));
}

TEST(GraphIsolated, ErrorsAndMissingOps) {
  const graph::Graph bad = graph::parse_graph(with_header("param %w : T([3, 2], f32)\n"
                                                          "input %i : T([2], i64) data(0, 7)\n"
                                                          "%e = aten.embedding(%w, %i)\n"
                                                          "output %e\n"),
                                              "e.graph");
  GraphRunOptions o;
  o.backend = "ref";
  const GraphRunResult r = run_graph_isolated(bad, o);
  EXPECT_EQ(r.status, GraphRunResult::Status::Error);
  EXPECT_EQ(r.detail.rfind("e.graph:6: %e = aten.embedding.default(%w, %i)", 0), 0u) << r.detail;
  o.backend = "faulty";
  try {
    run_graph_isolated(graph::read_graph(example("mlp.graph")), o);
    FAIL() << "a graph ran on a backend lacking its ops";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_NE(std::string(e.what()).find("cannot run 3 op(s)"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace crucible
