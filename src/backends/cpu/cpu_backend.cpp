// The `cpu` backend class: everything it knows about ops comes from the kernel table.
#include "backends/cpu/cpu_backend.h"

#include <algorithm>
#include <string>
#include <unordered_map>

#include "backends/cpu/cpu_features.h"
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/random.h"
#include "crucible/core/error.h"
#include "crucible/ops/variants.h"

namespace crucible {

namespace {

// The dtype of the first tensor argument (or first element of the first tensor list).
std::optional<DType> primary_dtype(const Values& args) {
  for (const Value& v : args) {
    if (v.is_tensor()) return v.tensor().dtype();
    if (v.kind() == ValueKind::TensorList || v.kind() == ValueKind::OptTensorList)
      for (const Tensor& t : v.tensors())
        if (t.defined()) return t.dtype();
  }
  return std::nullopt;
}

class CpuBackend final : public Backend {
 public:
  std::string name() const override { return "cpu"; }
  std::string version() const override {
    return "crucible cpu (" + cpu::isa_level() + ", " + std::to_string(cpu::num_threads()) +
           " threads)";
  }
  bool has_op(const OpDef& op) const override { return entry(op) != nullptr; }
  std::vector<DType> supported_dtypes(const OpDef& op) const override {
    const cpu::KernelEntry* e = entry(op);
    if (!e) return {};
    std::vector<DType> out;
    for (DType t : op.dtypes)
      if (std::find(e->dtypes.begin(), e->dtypes.end(), t) != e->dtypes.end()) out.push_back(t);
    return out;
  }
  // A call the op's meta function refuses is refused by cpu too, with ATen's error, whether or
  // not a kernel has its dtypes: run() raises it.
  bool supports(const OpDef& op, const Values& args, std::string* why) const override {
    if (kernel_supports(op, args, why)) return true;
    if (args.empty()) return false;  // (asked before the inputs exist)
    try {
      op.run_meta(args);
    } catch (const Error& e) {
      return e.kind() == ErrorKind::OpError;
    }
    return false;
  }
  Values run(const OpDef& op, const Values& args) override {
    std::string why;
    if (!kernel_supports(op, args, &why)) {
      op.run_meta(args);
      unsupported(why);
    }
    if (const DerivedVariant* v = variant(op)) {
      const Values results =
          cpu::run_kernel(*entry(*v->functional), *v->functional, functional_arguments(*v, args));
      return write_destinations(op, *v, args, results);
    }
    return cpu::run_kernel(*entry(op), op, args);
  }
  void set_num_threads(int n) override { cpu::set_num_threads(n); }
  void manual_seed(uint64_t seed) override {
    Backend::manual_seed(seed);
    cpu::seed_generator(seed);
  }

 private:
  // Whether a kernel of cpu's computes this call (its dtypes, layouts, argument values).
  bool kernel_supports(const OpDef& op, const Values& args, std::string* why) const {
    const cpu::KernelEntry* e = entry(op);
    if (!e) {
      if (why) {
        *why = "backend 'cpu' does not implement " + op.name;
        if (const DerivedVariant* v = derived_variant(op.name))
          *why += " (it runs " + v->functional->name + "'s kernel, which cpu does not have)";
      }
      return false;
    }
    // A derived in-place or out= overload runs its functional op's kernel.
    if (const DerivedVariant* v = variant(op)) {
      Values f = functional_arguments(*v, args);
      return kernel_supports(*v->functional, f, why);
    }
    if (auto d = primary_dtype(args)) {
      if (std::find(e->dtypes.begin(), e->dtypes.end(), *d) == e->dtypes.end()) {
        if (why)
          *why = "backend 'cpu' implements " + op.name + " for " + dtype_list(e->dtypes) +
                 ", not " + std::string(dtype_code(*d));
        return false;
      }
    }
    return e->supports ? e->supports(op, args, why) : true;
  }
  // How `op` runs here, looked up once per op and thread (a call of a small tensor is a few
  // microseconds, of which the lookups by name were a tenth). The name is kept and compared, so
  // an op defined again at the same address is looked up again.
  struct Resolved {
    std::string name;
    const DerivedVariant* variant = nullptr;  // a derived overload without a kernel of its own
    const cpu::KernelEntry* entry = nullptr;  // its own kernel, or its functional op's
  };
  static const Resolved& resolve(const OpDef& op) {
    thread_local std::unordered_map<const OpDef*, Resolved> memo;
    auto it = memo.find(&op);
    if (it != memo.end() && it->second.name == op.name) return it->second;
    Resolved r{op.name, nullptr, cpu::kernel_table().find(op.name)};
    if (!r.entry) {
      r.variant = derived_variant(op.name);
      if (r.variant) r.entry = cpu::kernel_table().find(r.variant->functional->name);
    }
    return memo.insert_or_assign(&op, std::move(r)).first->second;
  }
  static const DerivedVariant* variant(const OpDef& op) { return resolve(op).variant; }
  // The kernel that runs `op`: its own, or its functional op's for a derived overload.
  static const cpu::KernelEntry* entry(const OpDef& op) { return resolve(op).entry; }
  static std::string dtype_list(const std::vector<DType>& ts) {
    std::string s;
    for (DType t : ts) s += (s.empty() ? "" : " ") + std::string(dtype_code(t));
    return s;
  }
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace crucible
