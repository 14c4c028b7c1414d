// A backend whose calls run through another one it wraps (a plugin's probed description, a
// kernel folder, FlagGems' synthesized folder): what it knows of its ops is its own, the calls
// and their device work are the inner backend's.
#pragma once

#include <memory>
#include <utility>

#include "crucible/backends/backend.h"

namespace crucible {

class DelegatingBackend : public Backend {
 public:
  Values run(const OpDef& op, const Values& args) override { return inner_->run(op, args); }
  void manual_seed(uint64_t seed) override {
    Backend::manual_seed(seed);
    inner_->manual_seed(seed);
  }
  void set_num_threads(int n) override { inner_->set_num_threads(n); }
  void isolate_candidates(const CandidateIsolation& isolation) override {
    inner_->isolate_candidates(isolation);
  }
  Tensor allocate(const Shape& shape, const Shape& strides, DType dtype) override {
    return inner_->allocate(shape, strides, dtype);
  }
  Tensor to_device(const Tensor& host) override { return inner_->to_device(host); }
  Tensor to_host(const Tensor& t) override { return inner_->to_host(t); }
  void synchronize() override { inner_->synchronize(); }
  std::unique_ptr<DeviceTimer> make_timer() override { return inner_->make_timer(); }

 protected:
  DelegatingBackend() = default;
  explicit DelegatingBackend(std::unique_ptr<Backend> inner) : inner_(std::move(inner)) {}
  std::unique_ptr<Backend> inner_;
};

}  // namespace crucible
