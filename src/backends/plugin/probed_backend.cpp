// A plugin backend whose coverage comes from the load probe's description: `crucible ops` and
// the run's planning ask has_op without loading the library in the process that keeps the
// results; the kernel backend inside loads it in the workers.
#include <algorithm>

#include <fmt/format.h>

#include "backends/delegating_backend.h"
#include "backends/plugin/probe.h"

namespace crucible {

namespace {

class ProbedBackend final : public DelegatingBackend {
 public:
  ProbedBackend(std::unique_ptr<Backend> inner, PluginDescription d)
      : DelegatingBackend(std::move(inner)), d_(std::move(d)) {}

  std::string name() const override { return inner_->name(); }
  std::string version() const override {
    std::string v = d_.name.empty() ? inner_->version() : d_.name;
    if (!d_.version.empty()) v += " " + d_.version;
    if (!d_.name.empty()) v += " (" + inner_->version() + ")";
    return v;
  }
  Device device() const override { return Device::cpu(); }
  bool untrusted() const override { return true; }

  bool has_op(const OpDef& op) const override {
    return std::find(d_.ops.begin(), d_.ops.end(), op.name) != d_.ops.end();
  }
  std::vector<DType> supported_dtypes(const OpDef& op) const override {
    return has_op(op) ? op.dtypes : std::vector<DType>{};
  }
  bool supports(const OpDef& op, const Values& args, std::string* why) const override {
    if (!has_op(op)) {
      if (why) *why = fmt::format("backend '{}' has no kernel for {}", name(), op.name);
      return false;
    }
    return inner_->supports(op, args, why);
  }

 private:
  PluginDescription d_;
};

}  // namespace

std::unique_ptr<Backend> make_probed_backend(std::unique_ptr<Backend> inner,
                                             PluginDescription description) {
  return std::make_unique<ProbedBackend>(std::move(inner), std::move(description));
}

}  // namespace crucible
