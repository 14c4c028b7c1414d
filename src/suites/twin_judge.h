// A zoo model against its PyTorch twin: PyTorch's exported training graph of the same model
// (data/models/*-tiny-train.graph), judged as the model suite judges a model graph.
//
// Both graphs get the same parameter values by state-dict name (PyTorch's, drawn from the
// twin's initialisers and seed, or read from a safetensors file of the twin's names), the same
// inputs and the same upstream gradient. The twin is the reference: golden is the twin in f64 on
// `ref`, the baselines are the twin in its own dtypes on `ref` (unperturbed and perturbed by
// honest rounding, model_judge.h), and the candidate is the zoo model's training graph in its
// own dtypes on the backend under test. The loss and every parameter gradient of the zoo model
// are judged by the f64 arbiter (crucible/compare/arbiter.h): a zoo model whose forward or
// backward differs from PyTorch's anywhere fails the gradients downstream of the difference.
//
// Names: PyTorch's names become the zoo's through `renames` (substring replacements, in order);
// tensors PyTorch's graph holds twice (a tied LM head exported untied) are listed in `same_as`:
// they get the values of the tensor they are tied to, and their gradient adds to its gradient.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "crucible/backends/backend.h"
#include "crucible/compare/arbiter.h"
#include "crucible/graph/values.h"
#include "crucible/models/zoo.h"
#include "suites/model_judge.h"

namespace crucible {

struct TwinSpec {
  std::string cls;         // the zoo class
  models::Json init_args;  // the twin's configuration in the class's init_args
  std::string test;        // a model test with the twin's input shapes (trace grammar)
  std::string graph;       // PyTorch's exported training graph
  std::string weights;     // safetensors of the twin's names; "": drawn from the graph
  uint64_t seed = 0;       // of the drawn values (weights, inputs, upstream gradient)
  // Drawn parameters whose initialiser is a constant (zeros, ones: biases and norm scales) get
  // this much normal noise, so that a bias or scale the zoo model ignores or misplaces shows.
  double jitter = 0.05;
  std::vector<std::pair<std::string, std::string>> renames;  // PyTorch's substring -> the zoo's
  std::map<std::string, std::string> same_as;  // PyTorch's name -> PyTorch's name it is tied to
  std::vector<std::string> transposed;         // PyTorch's name suffixes stored [in, out]
  // Changes the drawn inputs (by PyTorch's input names) before both runs: e.g. puts a padding
  // token where the drawn token ids have none.
  std::function<void(graph::TensorMap& inputs)> adjust_inputs;
};

// One judged output of the zoo model with what it is judged against.
struct TwinOutput {
  std::string what;                 // "loss", "grad bert.embeddings.word_embeddings.weight"
  Tensor golden;                    // the twin in f64
  std::vector<Tensor> baselines;    // the twin in its dtypes, unperturbed first
  Tensor candidate;                 // the zoo model on the backend under test
  std::vector<std::string> theirs;  // the twin's outputs it stands for (tied ones added)
};

struct TwinRun {
  std::vector<TwinOutput> outputs;  // the loss, then every parameter gradient of the zoo model
  size_t twin_grads = 0;            // the gradients the twin's graph returns
  size_t twin_grads_used = 0;       // of them, those some output stands for
};

// The twin's parameter name as the zoo model calls it.
std::string twin_name_in_zoo(const TwinSpec& spec, const std::string& theirs);

// Runs the twin (golden and baselines on ref) and the zoo model (on `candidate`) with the same
// values. An Input error when a zoo parameter has no counterpart in the twin (or one of another
// shape), naming both.
TwinRun run_twin(const TwinSpec& spec, Backend& candidate, const ModelJudgeOptions& options);
// The same for several candidates (one run each, in order), the twin's runs made once.
std::vector<TwinRun> run_twin(const TwinSpec& spec, const std::vector<Backend*>& candidates,
                              const ModelJudgeOptions& options);

// The arbiter's verdict on each output of `run`, in order.
std::vector<ArbiterCheck> judge_twin(const TwinRun& run, double k = 3.0);

}  // namespace crucible
