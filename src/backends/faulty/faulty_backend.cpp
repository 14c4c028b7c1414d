// The `faulty` backend: each supported op has one deliberate fault.
//   relu.default      returns its input unchanged (identity, and aliases the input)
//   add.Tensor        wrong values (off by a little)
//   mul.Tensor        wrong shape (flattened)
//   sub.Tensor        wrong dtype (always f64)
//   neg.default       crashes with SIGSEGV
//   exp.default       hangs
//   tanh.default      aborts (SIGABRT)
//   sigmoid.default   allocates without bound
//   add_.Tensor       in-place op that does nothing
//   clone.default     wrong only on NaN (turns NaN into 0)
#include "backends/faulty/faulty_backend.h"

#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <vector>

#include "crucible/core/error.h"

namespace crucible {

namespace {

using Kernel = Values (*)(const OpDef&, const Values&, uint64_t seed);

Values identity(const OpDef&, const Values& args, uint64_t) { return {args[0]}; }

Values off_by_a_little(const OpDef& op, const Values& args, uint64_t seed) {
  Values out = op.run_ref(args, seed);
  const Tensor& t = out[0].tensor();
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (is_floating(t.dtype()))
      t.set(i, t.get(i) * 1.01 + 0.125);
    else
      t.set_int(i, t.get_int(i) + 1);
  }
  return out;
}

Values flattened(const OpDef& op, const Values& args, uint64_t seed) {
  Values out = op.run_ref(args, seed);
  Tensor t = out[0].tensor().contiguous();
  return {Value(t.view({t.numel()}))};
}

Values always_f64(const OpDef& op, const Values& args, uint64_t seed) {
  Values out = op.run_ref(args, seed);
  return {Value(out[0].tensor().to(DType::Float64))};
}

Values segfault(const OpDef&, const Values&, uint64_t) {
  raise(SIGSEGV);
  return {};
}

Values hang(const OpDef&, const Values&, uint64_t) {
  for (;;) pause();
}

Values aborts(const OpDef&, const Values&, uint64_t) { std::abort(); }

Values unbounded(const OpDef&, const Values&, uint64_t) {
  std::vector<Tensor> hoard;
  for (;;) hoard.push_back(Tensor::empty({int64_t{1} << 28}, DType::Float32));  // 1 GiB each
}

Values does_nothing(const OpDef&, const Values& args, uint64_t) { return {args[0]}; }

Values nan_to_zero(const OpDef& op, const Values& args, uint64_t seed) {
  Values out = op.run_ref(args, seed);
  const Tensor& t = out[0].tensor();
  if (is_floating(t.dtype()))
    for (int64_t i = 0; i < t.numel(); ++i)
      if (std::isnan(t.get(i))) t.set(i, 0.0);
  return out;
}

const std::map<std::string, Kernel>& kernels() {
  static const std::map<std::string, Kernel> k = {
      {"aten.relu.default", identity},    {"aten.add.Tensor", off_by_a_little},
      {"aten.mul.Tensor", flattened},     {"aten.sub.Tensor", always_f64},
      {"aten.neg.default", segfault},     {"aten.exp.default", hang},
      {"aten.tanh.default", aborts},      {"aten.sigmoid.default", unbounded},
      {"aten.add_.Tensor", does_nothing}, {"aten.clone.default", nan_to_zero},
  };
  return k;
}

class FaultyBackend final : public Backend {
 public:
  std::string name() const override { return "faulty"; }
  bool has_op(const OpDef& op) const override { return kernels().count(op.name) > 0; }
  Values run(const OpDef& op, const Values& args) override {
    auto it = kernels().find(op.name);
    if (it == kernels().end()) unsupported("faulty does not implement " + op.name);
    return it->second(op, args, seed_);
  }
};

}  // namespace

std::unique_ptr<Backend> make_faulty_backend() { return std::make_unique<FaultyBackend>(); }

}  // namespace crucible
