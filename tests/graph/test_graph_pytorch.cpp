// A model exported from PyTorch (GPT-2, tiny: scripts/export_graph.py's graph, weights and
// recorded input/output) run on ref, cpu and in f64 gives PyTorch's output.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "crucible/core/error.h"
#include "crucible/graph/executor.h"
#include "crucible/graph/parse.h"
#include "crucible/graph/safetensors.h"

namespace crucible::graph {
namespace {

std::string fixture(const std::string& name) {
  return std::string(CRUCIBLE_SOURCE_DIR) + "/tests/fixtures/graphs/" + name;
}

TEST(GraphPyTorch, Gpt2TinyGivesPyTorchsOutput) {
  const Graph g = read_graph(fixture("gpt2-tiny-fwd.graph"));
  const Safetensors weights = read_safetensors(fixture("gpt2-tiny-fwd.safetensors"));
  const Safetensors io = read_safetensors(fixture("gpt2-tiny-fwd.io.safetensors"));
  const Tensor& want = io.tensors.at("output0");
  for (const auto& [backend, golden] :
       {std::pair{"ref", false}, std::pair{"cpu", false}, std::pair{"ref", true}}) {
    ExecOptions o;
    o.golden = golden;
    o.weights = &weights.tensors;
    o.inputs = &io.tensors;
    const ExecResult r = execute(g, backend, o);
    ASSERT_EQ(r.outputs.size(), 1u);
    const Tensor& got = r.outputs[0];
    ASSERT_EQ(got.shape(), want.shape());
    EXPECT_EQ(got.dtype(), golden ? DType::Float64 : DType::Float32);
    double worst = 0, largest = 0;
    for (int64_t k = 0; k < want.numel(); ++k) {
      worst = std::max(worst, std::abs(got.get(k) - want.get(k)));
      largest = std::max(largest, std::abs(want.get(k)));
    }
    EXPECT_LT(worst, 2e-6) << backend << (golden ? " f64" : "");
    EXPECT_GT(largest, 0.1);  // the logits are not all zero
    // Drawn inputs instead of the recorded ones give another output.
    o.inputs = nullptr;
    const Tensor other = execute(g, backend, o).outputs[0];
    double moved = 0;
    for (int64_t k = 0; k < want.numel(); ++k)
      moved = std::max(moved, std::abs(other.get(k) - want.get(k)));
    EXPECT_GT(moved, 1e-3) << backend;
  }
}

TEST(GraphPyTorch, RecordedInputsAreChecked) {
  const Graph g = read_graph(fixture("gpt2-tiny-fwd.graph"));
  TensorMap inputs{{"input_ids", Tensor::zeros({2, 8}, DType::Int32)}};
  try {
    materialize_declarations(g, 0, nullptr, "", &inputs, "io.safetensors");
    FAIL() << "an i32 input_ids was taken for i64";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "io.safetensors: tensor 'input_ids': is i32 [2, 8]; the "
              "graph declares T([2, 8], i64)");
  }
}

}  // namespace
}  // namespace crucible::graph
