// Checkpoints: a module's state saved and loaded back lazily under PyTorch names; missing,
// extra, mis-shaped, mistyped and truncated tensors are errors naming the tensor (exit status 2
// from the command line); Hugging Face's transposed Conv1D weights and tied LM head.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "crucible/core/error.h"
#include "crucible/graph/safetensors.h"
#include "crucible/nn/checkpoint.h"
#include "crucible/nn/layers.h"

namespace {

namespace fs = std::filesystem;
using namespace crucible;
using namespace crucible::nn;

class TwoLayer : public Module {
 public:
  TwoLayer() {
    register_module("fc1", std::make_unique<Linear>(4, 3));
    register_module("bn", std::make_unique<BatchNorm2d>(3));
  }
};

graph::TensorMap values_of(const Module& m, double base) {
  graph::TensorMap out;
  for (const StateEntry& e : m.state()) {
    Tensor t = Tensor::zeros(e.shape, e.dtype);
    for (int64_t i = 0; i < t.numel(); ++i) t.set(i, base + i);
    out.emplace(e.name, t);
  }
  return out;
}

std::string tmp(const std::string& name) { return (fs::temp_directory_path() / name).string(); }

void expect_error(const std::string& path, const Module& m, const std::string& needle) {
  try {
    Checkpoint ck(path, m.state());
    FAIL() << "loaded " << path;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST(Checkpoint, SavesAndLoadsLazilyByName) {
  TwoLayer m;
  const graph::TensorMap v = values_of(m, 1);
  const std::string path = tmp("crucible_ckpt_ok.safetensors");
  save_checkpoint(path, m.state(), v);
  const graph::Safetensors raw = graph::read_safetensors(path);
  EXPECT_TRUE(raw.tensors.contains("fc1.weight"));
  EXPECT_TRUE(raw.tensors.contains("bn.num_batches_tracked"));
  const Checkpoint ck(path, m.state());
  EXPECT_EQ(ck.reads(), 0);
  const Tensor w = ck.get("fc1.weight");
  EXPECT_EQ(ck.reads(), 1);
  EXPECT_EQ(w.shape(), (Shape{3, 4}));
  EXPECT_EQ(w.get(5), 6.0);
  const graph::TensorMap all = ck.load_all();
  EXPECT_EQ(all.size(), m.state().size());
  EXPECT_EQ(all.at("bn.running_var").get(2), 3.0);
  fs::remove(path);
}

TEST(Checkpoint, MissingExtraMisshapedMistypedAndTruncatedAreNamed) {
  TwoLayer m;
  graph::TensorMap v = values_of(m, 1);
  const std::string path = tmp("crucible_ckpt_bad.safetensors");
  auto write = [&](const graph::TensorMap& tensors) {
    std::vector<std::pair<std::string, Tensor>> list(tensors.begin(), tensors.end());
    graph::write_safetensors(path, list);
  };
  graph::TensorMap missing = v;
  missing.erase("fc1.bias");
  write(missing);
  expect_error(path, m, "tensor 'fc1.bias' is missing");
  graph::TensorMap extra = v;
  extra["fc2.weight"] = Tensor::zeros({2}, DType::Float32);
  write(extra);
  expect_error(path, m, "tensor 'fc2.weight' is not a parameter or buffer");
  graph::TensorMap shaped = v;
  shaped["fc1.weight"] = Tensor::zeros({4, 3}, DType::Float32);
  write(shaped);
  expect_error(path, m, "tensor 'fc1.weight' has shape [4, 3]");
  graph::TensorMap typed = v;
  typed["bn.weight"] = Tensor::zeros({3}, DType::Float64);
  write(typed);
  expect_error(path, m, "tensor 'bn.weight' is F64");
  write(v);
  fs::resize_file(path, fs::file_size(path) - 4);
  expect_error(path, m, "is truncated");
  fs::remove(path);
}

TEST(Checkpoint, HuggingFaceLayoutTransposesAndTies) {
  class Lm : public Module {
   public:
    Lm() {
      register_module("wte", std::make_unique<Embedding>(5, 4));
      register_module("c_fc", std::make_unique<Linear>(4, 3));
    }
  } m;
  CheckpointLayout layout;
  layout.transposed = {"c_fc.weight"};
  layout.tied = {{"lm_head.weight", "wte.weight"}};
  layout.ignored = {".masked_bias"};
  Tensor conv1d = Tensor::zeros({4, 3}, DType::Float32);  // [in, out]
  for (int64_t i = 0; i < 12; ++i) conv1d.set(i, i);
  const Tensor wte = Tensor::full({5, 4}, 2.0, DType::Float32);
  const std::string path = tmp("crucible_ckpt_hf.safetensors");
  graph::write_safetensors(path, {{"wte.weight", wte},
                                  {"lm_head.weight", wte},
                                  {"c_fc.weight", conv1d},
                                  {"c_fc.bias", Tensor::zeros({3}, DType::Float32)},
                                  {"h.0.masked_bias", Tensor::zeros({1}, DType::Float32)}});
  const Checkpoint ck(path, m.state(), layout);
  const Tensor w = ck.get("c_fc.weight");
  ASSERT_EQ(w.shape(), (Shape{3, 4}));
  EXPECT_EQ(w.get(1), conv1d.get(3));  // w[0][1] = conv1d[1][0]
  EXPECT_EQ(ck.get("wte.weight").get(0), 2.0);
  // Without the layout, the transposed weight is mis-shaped and the tied head an extra.
  expect_error(path, m, "tensor 'c_fc.weight' has shape [4, 3]");
  fs::remove(path);
}

TEST(Checkpoint, TheCommandLineExitsWith2NamingTheTensor) {
  const std::string path = tmp("crucible_ckpt_cli.safetensors");
  graph::write_safetensors(path, {{"weight1", Tensor::zeros({128, 256}, DType::Float32)}});
  const std::string out = tmp("crucible_ckpt_cli.txt");
  const std::string cmd = std::string(CRUCIBLE_BINARY) +
                          " models --export SmokeTestModel --checkpoint " + path + " -o " +
                          tmp("crucible_ckpt_cli.graph") + " 2> " + out;
  const int rc = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(rc));
  EXPECT_EQ(WEXITSTATUS(rc), 2);
  std::ifstream in(out);
  const std::string err((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(err.find("tensor 'weight2' is missing"), std::string::npos) << err;
  fs::remove(path);
  fs::remove(out);
}

}  // namespace
