// Backend defaults and the backend registry.
#include "crucible/backends/backend.h"

#include <chrono>

#include "crucible/core/error.h"

namespace crucible {

std::string Backend::version() const { return "builtin"; }

bool Backend::supports(const OpDef& op, const Values& /*args*/, std::string* why) const {
  if (has_op(op)) return true;
  if (why) *why = "backend '" + name() + "' does not implement " + op.name;
  return false;
}

std::vector<DType> Backend::supported_dtypes(const OpDef& op) const {
  return has_op(op) ? op.dtypes : std::vector<DType>{};
}

Tensor Backend::allocate(const Shape& shape, const Shape& strides, DType dtype) {
  return Tensor::empty_strided(shape, strides, dtype);
}

Tensor Backend::to_device(const Tensor& host) { return host; }
Tensor Backend::to_host(const Tensor& t) { return t; }

namespace {
class SteadyTimer final : public DeviceTimer {
 public:
  void start() override { t0_ = std::chrono::steady_clock::now(); }
  void stop() override { t1_ = std::chrono::steady_clock::now(); }
  double elapsed_seconds() override { return std::chrono::duration<double>(t1_ - t0_).count(); }

 private:
  std::chrono::steady_clock::time_point t0_, t1_;
};
}  // namespace

std::unique_ptr<DeviceTimer> Backend::make_timer() { return std::make_unique<SteadyTimer>(); }

BackendRegistry& BackendRegistry::instance() {
  static BackendRegistry* r = [] {
    auto* reg = new BackendRegistry();
    register_builtin_backends(*reg);
    return reg;
  }();
  return *r;
}

void BackendRegistry::add(Entry e) { entries_.push_back(std::move(e)); }

namespace {

bool names(const BackendRegistry::Entry& e, const std::string& spec) {
  const bool prefix = !e.name.empty() && e.name.back() == ':';
  return (prefix && spec.starts_with(e.name)) || (!prefix && spec == e.name);
}

}  // namespace

void BackendRegistry::prepare(const std::vector<std::string>& specs) const {
  for (const std::string& spec : specs)
    for (const Entry& e : entries_)
      if (names(e, spec)) {
        if (e.prepare) e.prepare();
        break;
      }
}

std::unique_ptr<Backend> BackendRegistry::create(const std::string& spec) const {
  for (const Entry& e : entries_)
    if (names(e, spec)) return e.factory(spec);
  std::string known;
  for (const Entry& e : entries_) {
    if (!e.listed) continue;
    known += (known.empty() ? "" : ", ") + e.name + (e.name.back() == ':' ? "<...>" : "");
  }
  if (spec == "aten" || spec.starts_with("aten:"))
    usage_error("--backend " + spec +
                ": this build of crucible has no ATen backend (libtorch was not found when it "
                "was built); install libtorch (scripts/install-deps.sh installs Debian's "
                "libtorch-dev) and rebuild, or point CMake at a PyTorch installation "
                "(docs/aten-backend.md). Known backends: " +
                known);
  usage_error("unknown backend '" + spec + "'; known backends: " + known);
}

std::vector<const BackendRegistry::Entry*> BackendRegistry::entries() const {
  std::vector<const Entry*> out;
  for (const Entry& e : entries_) out.push_back(&e);
  return out;
}

std::string BackendRegistry::default_backend() const {
  // The fastest built-in CPU backend of this build, in order of preference.
  for (const char* name : {"cpu", "aten", "ref"})
    for (const Entry& e : entries_)
      if (e.name == name) return name;
  internal_error("no CPU backend registered");
}

}  // namespace crucible
