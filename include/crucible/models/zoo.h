// The model zoo: models written in C++ (src/models/<Name>/<Name>.{h,cpp,json}), each a Module
// with a forward over the tracer and a config in BackendBench's model-config schema:
//
//   { "model_config": { "init_args": { ... } },
//     "ops": { "forward": ["aten.mm.default", ...], "backward": [...] },
//     "model_tests": { "small_batch": "([], {'x': T([2, 128], f32)})", ... },
//     "metadata": { "description": "..." } }
//
// `ops.forward` lists the ops of the forward pass as trained (train mode), `ops.backward` those
// of its backward (autograd's nodes); the loss `sum(y * tangent)` is in neither. Tests hold the
// lists equal to the captured graphs' ops.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "crucible/graph/graph.h"
#include "crucible/nn/checkpoint.h"
#include "crucible/nn/module.h"

namespace crucible::models {

using Json = nlohmann::json;

class ZooModel : public nn::Module {
 public:
  virtual std::string class_name() const = 0;
  // How input `name` of a model test is drawn (default: normal(0, 1) for floats); token ids say
  // their range.
  virtual graph::Initializer input_init(const std::string& name, DType dtype) const;
  virtual nn::Var forward(nn::Tracer& t, const std::vector<nn::Var>& inputs) const = 0;
  // How Hugging Face's checkpoints of this model differ from its state dict (checkpoint.h).
  virtual nn::CheckpointLayout hf_layout() const { return {}; }
};

struct ModelConfig {
  std::string name;  // the class name (= folder = file stem)
  std::string file;
  Json init_args = Json::object();
  std::vector<std::string> forward_ops;
  std::vector<std::string> backward_ops;
  std::vector<std::pair<std::string, std::string>> tests;  // name -> call in the trace grammar
  std::string description;
};

struct ZooEntry {
  std::string name;
  std::function<std::unique_ptr<ZooModel>(const Json& init_args)> make;
};

// The zoo's classes, in a stable order.
const std::vector<ZooEntry>& zoo();
// The folder of the configs: $CRUCIBLE_ZOO, else src/models next to the program or in the
// source tree; "" when none is found.
std::string zoo_dir();
// Reads <dir>/<Name>/<Name>.json; anything malformed is an Input error naming the file.
ModelConfig load_config(const std::string& name, const std::string& dir = "");
// The class `name` made with `init_args`; an unknown name is a Usage error listing the zoo.
std::unique_ptr<ZooModel> make_model(const std::string& name, const Json& init_args);

struct Captured {
  graph::Graph graph;
  std::vector<std::string> forward_ops;   // training: the forward's ops; forward: every op
  std::vector<std::string> backward_ops;  // training only
};

// The model's graph for test `test` (a call "([], {'x': T([2, 128], f32)})"): its inputs are
// the test's keyword tensors. `training`: train mode, made a training graph (autograd).
Captured capture(ZooModel& model, const std::string& graph_name, const std::string& test,
                 bool training);

// What is wrong with a config's op lists against the captured training graph: an op listed that
// the model does not use, one it uses that is not listed, a name that is not a catalog op; one
// line each, empty when the lists are right.
std::vector<std::string> check_config_ops(const ModelConfig& c, const Captured& training);

}  // namespace crucible::models
