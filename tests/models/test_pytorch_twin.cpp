// Zoo models against their PyTorch twins in data/models (exported by PyTorch from Hugging
// Face's classes at the same configuration): GPT-2 loads PyTorch's own safetensors checkpoint
// (Hugging Face's layout) and reproduces the logits PyTorch recorded; GPT-2's and Llama's
// gradients equal those of PyTorch's exported training graphs, both run in f64 on the same
// weights, tokens and upstream gradient.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "crucible/graph/executor.h"
#include "crucible/graph/parse.h"
#include "crucible/graph/safetensors.h"
#include "crucible/graph/values.h"
#include "crucible/models/zoo.h"
#include "crucible/nn/checkpoint.h"

namespace {

using namespace crucible;
using namespace crucible::models;

std::string src(const std::string& rel) { return std::string(CRUCIBLE_SOURCE_DIR) + "/" + rel; }

double max_abs(const Tensor& t) {
  double m = 0;
  for (int64_t i = 0; i < t.numel(); ++i) m = std::max(m, std::abs(t.get(i)));
  return m;
}

TEST(PyTorchTwin, Gpt2LoadsPyTorchsCheckpointAndReproducesItsLogits) {
  const ModelConfig c = load_config("GPT2", src("src/models"));
  const auto model = make_model("GPT2", c.init_args);
  const nn::Checkpoint ck(src("data/models/gpt2-tiny-fwd.safetensors"), model->state(),
                          model->hf_layout());
  EXPECT_EQ(ck.reads(), 0);  // the header only
  const graph::TensorMap w = ck.load_all();
  EXPECT_EQ(ck.reads(), static_cast<int64_t>(model->state().size()));
  const graph::Safetensors io =
      graph::read_safetensors(src("data/models/gpt2-tiny-fwd.io.safetensors"));
  const Captured cap = capture(*model, "gpt2", c.tests.front().second, false);
  graph::ExecOptions o;
  o.weights = &w;
  o.weights_file = "gpt2-tiny-fwd.safetensors";
  o.inputs = &io.tensors;
  o.inputs_file = "gpt2-tiny-fwd.io.safetensors";
  const Tensor ours = graph::execute(cap.graph, "ref", o).outputs.at(0);
  const Tensor& theirs = io.tensors.at("output0");
  ASSERT_EQ(ours.shape(), theirs.shape());
  double err = 0;
  for (int64_t i = 0; i < ours.numel(); ++i)
    err = std::max(err, std::abs(ours.get(i) - theirs.get(i)));
  EXPECT_GT(max_abs(theirs), 0.01);
  EXPECT_LT(err, 1e-5 * std::max(1.0, max_abs(theirs))) << "largest logit difference " << err;
}

// Runs our training graph and PyTorch's in f64 on the same weights, tokens and tangent, and
// compares every parameter's gradient. `transposed`: params stored [in, out] in theirs.
void compare_gradients(const std::string& cls, const std::string& twin,
                       const graph::TensorMap& theirs_w, const graph::TensorMap& ours_w,
                       double rel_tol) {
  const ModelConfig c = load_config(cls, src("src/models"));
  const auto model = make_model(cls, c.init_args);
  const nn::CheckpointLayout layout = model->hf_layout();
  const graph::Graph theirs = graph::read_graph(src("data/models/" + twin));
  const Captured ours = capture(*model, cls, c.tests.front().second, true);
  graph::TensorMap drawn = graph::materialize_declarations(theirs, 5);
  graph::TensorMap their_in, our_in;
  their_in["input_ids"] = our_in["input_ids"] = drawn.at("input_ids");
  their_in["tangent0"] = our_in["tangent"] = drawn.at("tangent0");
  graph::ExecOptions ot, oo;
  ot.golden = oo.golden = true;
  ot.weights = &theirs_w;
  oo.weights = &ours_w;
  ot.inputs = &their_in;
  oo.inputs = &our_in;
  const graph::ExecResult rt = graph::execute(theirs, "ref", ot);
  const graph::ExecResult ro = graph::execute(ours.graph, "ref", oo);
  std::map<std::string, Tensor> tg;
  for (size_t k = 0; k < theirs.outputs.size(); ++k)
    if (theirs.outputs[k].kind == graph::GraphOutput::Kind::Grad)
      tg[theirs.outputs[k].param] = rt.outputs[k];
  EXPECT_NEAR(ro.outputs[0].get(0), rt.outputs[0].get(0), rel_tol * std::abs(rt.outputs[0].get(0)))
      << "loss";
  int compared = 0;
  for (size_t k = 0; k < ours.graph.outputs.size(); ++k) {
    const graph::GraphOutput& out = ours.graph.outputs[k];
    if (out.kind != graph::GraphOutput::Kind::Grad) continue;
    const Tensor& g = ro.outputs[k];
    ASSERT_TRUE(tg.contains(out.param)) << out.param;
    Tensor t = tg.at(out.param);
    for (const auto& [alias, target] : layout.tied)
      if (target == out.param && tg.contains(alias)) {
        // PyTorch's graph unties the LM head: our gradient is the sum of both uses.
        Tensor sum = t.to(DType::Float64);
        for (int64_t i = 0; i < sum.numel(); ++i) sum.set(i, sum.get(i) + tg.at(alias).get(i));
        t = sum;
      }
    bool transposed = false;
    for (const std::string& s : layout.transposed)
      transposed |= out.param.size() >= s.size() &&
                    out.param.compare(out.param.size() - s.size(), s.size(), s) == 0;
    if (transposed) t = t.transpose(0, 1).contiguous();
    ASSERT_EQ(g.shape(), t.shape()) << out.param;
    const double scale = std::max(max_abs(t), 1e-12);
    double err = 0;
    for (int64_t i = 0; i < g.numel(); ++i) err = std::max(err, std::abs(g.get(i) - t.get(i)));
    EXPECT_LT(err, rel_tol * scale)
        << cls << " grad " << out.param << ": " << err << " of " << scale;
    ++compared;
  }
  EXPECT_EQ(compared, static_cast<int>(model->parameters().size()));
}

TEST(PyTorchTwin, Gpt2GradientsEqualPyTorchsTrainingGraph) {
  const auto model = make_model("GPT2", load_config("GPT2", src("src/models")).init_args);
  const graph::TensorMap theirs_w =
      graph::read_safetensors(src("data/models/gpt2-tiny-fwd.safetensors")).tensors;
  const nn::Checkpoint ck(src("data/models/gpt2-tiny-fwd.safetensors"), model->state(),
                          model->hf_layout());
  compare_gradients("GPT2", "gpt2-tiny-train.graph", theirs_w, ck.load_all(), 1e-9);
}

TEST(PyTorchTwin, LlamaGradientsEqualPyTorchsTrainingGraph) {
  const graph::Graph theirs = graph::read_graph(src("data/models/llama-tiny-train.graph"));
  const graph::TensorMap w = graph::materialize_declarations(theirs, 3);
  // The rotary tables are f32 constants here, computed by PyTorch from its f32 inv_freq
  // buffer there: they differ by f32 rounding (about 1e-8 relative), hence the tolerance.
  compare_gradients("Llama", "llama-tiny-train.graph", w, w, 1e-6);
}

}  // namespace
