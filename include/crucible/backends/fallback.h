// A candidate backend with a named fallback for the ops it lacks (`crucible run --suite model
// --fallback <backend>`): a call the candidate supports runs on it, any other call runs on the
// fallback, and every op that ran there is recorded, so a report can say which ran where.
// Nothing falls back silently: the fallback is named by the user and listed in the verdict.
#pragma once

#include <memory>
#include <set>
#include <string>

#include "crucible/backends/backend.h"

namespace crucible {

class FallbackBackend final : public Backend {
 public:
  // Both must run on the same device (a Usage error otherwise).
  FallbackBackend(Backend& candidate, std::unique_ptr<Backend> fallback);

  std::string name() const override;
  Device device() const override { return candidate_.device(); }
  bool untrusted() const override { return candidate_.untrusted(); }
  bool has_op(const OpDef& op) const override;
  bool supports(const OpDef& op, const Values& args, std::string* why) const override;
  Values run(const OpDef& op, const Values& args) override;
  void manual_seed(uint64_t seed) override;
  void set_num_threads(int n) override;
  Tensor allocate(const Shape& shape, const Shape& strides, DType dtype) override;
  Tensor to_device(const Tensor& host) override { return candidate_.to_device(host); }
  Tensor to_host(const Tensor& t) override { return candidate_.to_host(t); }
  void synchronize() override;

  // The ops (overload names) that ran on the fallback so far.
  const std::set<std::string>& fell_back() const { return fell_back_; }
  const Backend& fallback() const { return *fallback_; }

 private:
  Backend& candidate_;
  std::unique_ptr<Backend> fallback_;
  std::set<std::string> fell_back_;
};

}  // namespace crucible
