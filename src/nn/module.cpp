// Modules: hierarchical state-dict names (see module.h).
#include "crucible/nn/module.h"

#include "crucible/core/error.h"

namespace crucible::nn {

namespace {
graph::Initializer make_init(graph::Initializer::Kind k, std::vector<double> args) {
  graph::Initializer init;
  init.kind = k;
  for (double a : args) init.args.push_back(cases::Literal::floating(a));
  return init;
}
}  // namespace

graph::Initializer normal_init(double mean, double std) {
  return make_init(graph::Initializer::Kind::Normal, {mean, std});
}
graph::Initializer uniform_init(double lo, double hi) {
  return make_init(graph::Initializer::Kind::Uniform, {lo, hi});
}
graph::Initializer zeros_init() { return make_init(graph::Initializer::Kind::Zeros, {}); }
graph::Initializer ones_init() { return make_init(graph::Initializer::Kind::Ones, {}); }

void Module::train(bool on) {
  training_ = on;
  for (auto& [name, child] : children_) child->train(on);
}

void Module::to(DType t) {
  for (auto& [local, e] : own_)
    if (is_floating(e.dtype)) e.dtype = t;
  for (auto& [name, child] : children_) child->to(t);
}

std::vector<StateEntry> Module::state() const {
  std::vector<StateEntry> out;
  for (const auto& [local, e] : own_) out.push_back(e);
  for (const auto& [name, child] : children_)
    for (StateEntry& e : child->state()) out.push_back(std::move(e));
  return out;
}

std::vector<StateEntry> Module::parameters() const {
  std::vector<StateEntry> out;
  for (StateEntry& e : state())
    if (!e.buffer) out.push_back(std::move(e));
  return out;
}

int64_t Module::num_parameters() const {
  int64_t n = 0;
  for (const StateEntry& e : parameters()) n += numel_of(e.shape);
  return n;
}

const StateEntry* Module::own(const std::string& local) const {
  for (const auto& [name, e] : own_)
    if (name == local) return &e;
  return nullptr;
}

Var Module::param(Tracer& t, const std::string& local) const {
  const StateEntry* e = own(local);
  if (!e)
    usage_error("module " + (prefix_.empty() ? "<root>" : prefix_) +
                " has no parameter or buffer '" + local + "'");
  return t.declare(e->buffer ? graph::DeclKind::Buffer : graph::DeclKind::Param, e->name, e->shape,
                   e->dtype, e->init);
}

Var Module::param_or_none(Tracer& t, const std::string& local) const {
  return own(local) ? param(t, local) : Var{};
}

void Module::register_parameter(const std::string& local, const Shape& shape,
                                graph::Initializer init) {
  if (own(local)) internal_error("module " + prefix_ + ": '" + local + "' registered twice");
  own_.emplace_back(local,
                    StateEntry{prefix_ + local, shape, DType::Float32, std::move(init), false});
}

void Module::register_buffer(const std::string& local, const Shape& shape, graph::Initializer init,
                             DType dtype) {
  if (own(local)) internal_error("module " + prefix_ + ": '" + local + "' registered twice");
  own_.emplace_back(local, StateEntry{prefix_ + local, shape, dtype, std::move(init), true});
}

void Module::adopt(const std::string& local, std::unique_ptr<Module> m) {
  m->set_prefix(prefix_ + local + ".");
  m->train(training_);
  children_.emplace_back(local, std::move(m));
}

void Module::set_prefix(const std::string& p) {
  prefix_ = p;
  for (auto& [local, e] : own_) e.name = p + local;
  for (auto& [name, child] : children_) child->set_prefix(p + name + ".");
}

}  // namespace crucible::nn
