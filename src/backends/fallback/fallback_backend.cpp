// The candidate-with-fallback backend (see crucible/backends/fallback.h).
#include "crucible/backends/fallback.h"

#include <fmt/format.h>

#include "crucible/core/error.h"

namespace crucible {

FallbackBackend::FallbackBackend(Backend& candidate, std::unique_ptr<Backend> fallback)
    : candidate_(candidate), fallback_(std::move(fallback)) {
  if (!fallback_) internal_error("FallbackBackend without a fallback");
  if (!(fallback_->device() == candidate_.device()))
    usage_error(
        fmt::format("--fallback {} runs on {}, but --backend {} on {}: the fallback must "
                    "run on the candidate's device",
                    fallback_->name(), fallback_->device().str(), candidate_.name(),
                    candidate_.device().str()));
}

std::string FallbackBackend::name() const {
  return candidate_.name() + " (fallback " + fallback_->name() + ")";
}

bool FallbackBackend::has_op(const OpDef& op) const {
  return candidate_.has_op(op) || fallback_->has_op(op);
}

bool FallbackBackend::supports(const OpDef& op, const Values& args, std::string* why) const {
  if (candidate_.supports(op, args, nullptr)) return true;
  return fallback_->supports(op, args, why);
}

Values FallbackBackend::run(const OpDef& op, const Values& args) {
  if (candidate_.supports(op, args, nullptr)) return candidate_.run(op, args);
  fell_back_.insert(op.name);
  return fallback_->run(op, args);
}

void FallbackBackend::manual_seed(uint64_t seed) {
  Backend::manual_seed(seed);
  candidate_.manual_seed(seed);
  fallback_->manual_seed(seed);
}

void FallbackBackend::set_num_threads(int n) {
  candidate_.set_num_threads(n);
  fallback_->set_num_threads(n);
}

Tensor FallbackBackend::allocate(const Shape& shape, const Shape& strides, DType dtype) {
  return candidate_.allocate(shape, strides, dtype);
}

void FallbackBackend::synchronize() {
  candidate_.synchronize();
  fallback_->synchronize();
}

}  // namespace crucible
