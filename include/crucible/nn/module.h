// Modules: a model's parameters and buffers under hierarchical, PyTorch-compatible state-dict
// names (`transformer.h.0.attn.c_attn.weight`), train/eval mode, and children. A module holds
// no tensor data: a capture declares its parameters in the graph (with their initialisers), and
// their values come from the initialisers and the seed, or by name from a state dict
// (checkpoint.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "crucible/graph/graph.h"
#include "crucible/nn/tracer.h"

namespace crucible::nn {

// A parameter or buffer: its full state-dict name, shape, dtype and initialiser. A buffer that
// is not persistent stays out of the state dict (Llama's rotary frequencies in PyTorch).
struct StateEntry {
  std::string name;
  Shape shape;
  DType dtype = DType::Float32;
  graph::Initializer init;
  bool buffer = false;
};

graph::Initializer normal_init(double mean, double std);
graph::Initializer uniform_init(double lo, double hi);
graph::Initializer zeros_init();
graph::Initializer ones_init();

class Module {
 public:
  Module() = default;
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // train(true) / train(false) (eval), for this module and every child.
  void train(bool on = true);
  bool training() const { return training_; }
  // Floating parameters and buffers become `t` (f64 for gradient checks), recursively.
  void to(DType t);

  const std::string& prefix() const { return prefix_; }  // "transformer.h.0." ("" at the root)
  // Every parameter and buffer of this module and its children, in registration order, with
  // full names.
  std::vector<StateEntry> state() const;
  std::vector<StateEntry> parameters() const;
  int64_t num_parameters() const;

  // Declares parameter or buffer `local` (this module's own name for it) in the tracer under its
  // full name; a Usage error when the module has none of that name.
  Var param(Tracer& t, const std::string& local) const;
  // The same for an optional one (a bias a layer was made without): an undefined Var.
  Var param_or_none(Tracer& t, const std::string& local) const;

 protected:
  void register_parameter(const std::string& local, const Shape& shape, graph::Initializer init);
  void register_buffer(const std::string& local, const Shape& shape, graph::Initializer init,
                       DType dtype = DType::Float32);
  template <class M>
  M& register_module(const std::string& local, std::unique_ptr<M> m) {
    M& ref = *m;
    adopt(local, std::move(m));
    return ref;
  }

 private:
  void adopt(const std::string& local, std::unique_ptr<Module> m);
  void set_prefix(const std::string& p);
  const StateEntry* own(const std::string& local) const;

  std::string prefix_;
  bool training_ = true;
  std::vector<std::pair<std::string, StateEntry>> own_;  // local name -> entry (full name)
  std::vector<std::pair<std::string, std::unique_ptr<Module>>> children_;
};

// A list of modules named 0, 1, 2, ... (nn.ModuleList / nn.Sequential's naming).
class ModuleList : public Module {
 public:
  template <class M>
  M& push_back(std::unique_ptr<M> m) {
    return register_module(std::to_string(size_++), std::move(m));
  }
  size_t size() const { return size_; }

 private:
  size_t size_ = 0;
};

}  // namespace crucible::nn
