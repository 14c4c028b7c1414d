// The `ref` backend: the catalog's reference implementations, computed in f64 (exactly for
// integers) and rounded once to the output dtype. It is the golden reference, not a fast path.
#include "backends/ref/ref_backend.h"

#include "crucible/core/error.h"
#include "ops/ref_parallel.h"

namespace crucible {

namespace {
class RefBackend final : public Backend {
 public:
  std::string name() const override { return "ref"; }
  std::string version() const override { return "crucible reference"; }
  bool has_op(const OpDef& op) const override {
    return static_cast<bool>(op.ref) || static_cast<bool>(op.ref_seeded);
  }
  Values run(const OpDef& op, const Values& args) override { return op.run_ref(args, seed_); }
  // The references' threads (their results are the same bits for any count).
  void set_num_threads(int n) override { refpar::set_threads(n); }
};
}  // namespace

std::unique_ptr<Backend> make_ref_backend() { return std::make_unique<RefBackend>(); }

}  // namespace crucible
