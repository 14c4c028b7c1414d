// The guarded backend over C ABI kernels (plugin libraries and kernel folders).
//
// A call runs the kernel twice: first on a decoy (the arguments with the values of every data
// tensor reversed: the same shapes, dtypes and value sets, so index tensors stay in range), then
// on the case's own arguments. Outputs are guarded and poisoned both times. After the real call
// crucible checks the output pointers and guard zones, confirms elements still holding the
// poison with a third call under another poison (a kernel may legitimately write 0xFF bytes),
// and, when every output equals the decoy call's while the reference says they should differ,
// reports that the kernel returned the result of an earlier call. Repeated calls on the very same
// argument tensors (the timing loop) skip the decoy and the checks.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>

#include <fmt/format.h>

#include "backends/plugin/guards.h"
#include "backends/plugin/kernel_call.h"
#include "backends/plugin/kernel_library.h"
#include "backends/plugin/output_plan.h"
#include "backends/plugin/probe.h"
#include "crucible/core/error.h"
#include "crucible/eval/compare.h"
#include "eval/sandbox.h"

namespace crucible {

namespace {

void collect_tensors(const Value& v, std::vector<Tensor>& out) {
  if (v.is_tensor() && v.tensor().defined()) out.push_back(v.tensor());
  if (v.kind() == ValueKind::TensorList || v.kind() == ValueKind::OptTensorList)
    for (const Tensor& t : v.tensors())
      if (t.defined()) out.push_back(t);
}

// The decoy: a copy of `args` whose data tensors (role Data, Positive or Unit) hold their
// values in reverse order. *differs says whether any tensor actually changed.
Values make_decoy(const OpDef& op, const Values& args, bool* differs) {
  Values d = deep_copy(args);
  *differs = false;
  for (size_t i = 0; i < d.size() && i < op.schema.arguments.size(); ++i) {
    const ArgRole role = op.role_of(op.schema.arguments[i].name);
    if (role.kind == ArgRole::Kind::IndexInto) continue;
    std::vector<Tensor> ts, orig;
    collect_tensors(d[i], ts);
    collect_tensors(args[i], orig);
    for (size_t j = 0; j < ts.size(); ++j) {
      reverse_elements(ts[j]);
      if (j < orig.size() && !same_elements(ts[j], orig[j])) *differs = true;
    }
  }
  return d;
}

// Tensors a kernel produced: its tensor outputs and the arguments it mutated.
std::vector<Tensor> produced(const OpDef& op, const Values& args, const Values& outs) {
  std::vector<Tensor> ts;
  for (const Value& v : outs) collect_tensors(v, ts);
  for (size_t i : op.schema.mutated_arguments())
    if (i < args.size()) collect_tensors(args[i], ts);
  return ts;
}

bool all_same(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return false;
  int64_t elements = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!same_elements(a[i], b[i])) return false;
    elements += a[i].numel();
  }
  return elements > 0;
}

// Whether the reference's results on two argument sets agree within the op's tolerances (a
// reduction over reversed data may differ in its last bits: that is not a different answer).
bool all_close(const OpDef& op, const Values& args, const std::vector<Tensor>& a,
               const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return false;
  const double scale = op.compare.tol_scale ? std::max(1.0, op.compare.tol_scale(args)) : 1.0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].shape() != b[i].shape() || a[i].dtype() != b[i].dtype()) return false;
    if (!compare_tensors(a[i], b[i], scale, "").passed) return false;
  }
  return true;
}

class KernelBackend final : public Backend {
 public:
  KernelBackend(std::string name, std::function<std::vector<LoadedKernel>()> loader,
                KernelBackendOptions opts)
      : name_(std::move(name)), loader_(std::move(loader)), opts_(std::move(opts)) {}

  std::string name() const override { return name_; }
  std::string version() const override { return opts_.version; }
  // Kernels from outside crucible: they run in sandboxed workers.
  bool untrusted() const override { return true; }

  bool has_op(const OpDef& op) const override {
    load();
    return kernels_.count(op.name) > 0;
  }

  bool supports(const OpDef& op, const Values& args, std::string* why) const override {
    load();
    if (!load_error_.empty()) return true;  // run() reports the load error as the verdict
    auto it = kernels_.find(op.name);
    if (it == kernels_.end()) {
      if (why) *why = fmt::format("backend '{}' has no kernel for {}", name_, op.name);
      return false;
    }
    if (!it->second.supports) return true;
    return KernelCall::ask_supports(it->second.supports, op, args, why) == CRUCIBLE_OK;
  }

  void set_num_threads(int n) override { threads_ = n > 0 ? n : 1; }

  Values run(const OpDef& op, const Values& args) override {
    load();
    if (!load_error_.empty()) {
      if (load_error_kind_ == ErrorKind::CompileError || load_error_kind_ == ErrorKind::Unsupported)
        throw Error(load_error_kind_, load_error_);
      kernel_fault(load_error_);
    }
    auto it = kernels_.find(op.name);
    if (it == kernels_.end())
      unsupported(fmt::format("backend '{}' has no kernel for {}", name_, op.name));
    const LoadedKernel& k = it->second;
    const OutputPlan plan = planner_.plan(op, args, seed_);  // a copy: the cache may be cleared

    if (!opts_.guards || repeats_last_call(op, args)) {
      KernelCall call(op, plan, args, false, 0, seed_, threads_);
      call.raise_for_status(call.invoke(k.fn));
      return call.outputs();
    }
    remember_call(op, args);
    return guarded_run(op, k, plan, args);
  }

 private:
  Values guarded_run(const OpDef& op, const LoadedKernel& k, const OutputPlan& plan,
                     const Values& args) {
    const bool random = op.compare.random || static_cast<bool>(op.ref_seeded);
    const bool mutates = !op.schema.mutated_arguments().empty();

    // 1. The decoy call.
    bool decoy_ok = false, differs = false;
    Values decoy_pristine, decoy_args;
    Values decoy_outputs;
    std::unique_ptr<KernelCall> decoy;
    if (!random && !plan.ref_raised) {
      decoy_pristine = make_decoy(op, args, &differs);
      decoy_args = deep_copy(decoy_pristine);
      decoy =
          std::make_unique<KernelCall>(op, plan, decoy_args, true, kPoisonByte, seed_, threads_);
      if (decoy->invoke(k.fn) == CRUCIBLE_OK) {
        decoy->check(" (on the first call, with decoy inputs)");
        decoy_outputs = decoy->outputs();
        decoy_ok = true;
      }
    }

    // 2. The real call.
    Values real_pristine = mutates ? deep_copy(args) : Values{};
    KernelCall real(op, plan, args, true, kPoisonByte, seed_, threads_);
    real.raise_for_status(real.invoke(k.fn));
    Values outs = real.outputs();
    if (plan.ref_raised) return outs;  // the evaluator reports the missing error
    real.check("");

    // 3. Elements left unwritten: still poisoned, and still poisoned under a second poison.
    std::vector<KernelCall::Written> suspects;
    for (const auto& w : real.fresh_outputs()) {
      int64_t first = 0;
      if (count_poisoned(w.tensor, kPoisonByte, &first) > 0) suspects.push_back(w);
    }
    if (!suspects.empty()) confirm_unwritten(op, k, plan, args, real_pristine, suspects, random);

    // 4. The result of an earlier call.
    if (decoy_ok && differs &&
        all_same(produced(op, args, outs), produced(op, decoy_args, decoy_outputs))) {
      Values a = mutates ? real_pristine : deep_copy(args);
      Values b = deep_copy(decoy_pristine);
      Values ra = op.run_ref(a, seed_), rb = op.run_ref(b, seed_);
      if (!all_close(op, a, produced(op, a, ra), produced(op, b, rb)))
        kernel_fault(
            "returned the result of an earlier call: every output equals what the kernel "
            "produced on the previous call, on different inputs (does it cache its first answer?)");
    }
    return outs;
  }

  void confirm_unwritten(const OpDef& op, const LoadedKernel& k, const OutputPlan& plan,
                         const Values& args, const Values& real_pristine,
                         const std::vector<KernelCall::Written>& suspects, bool random) {
    Values again_args = deep_copy(real_pristine.empty() ? args : real_pristine);
    KernelCall again(op, plan, again_args, true, kConfirmPoisonByte, seed_, threads_);
    if (again.invoke(k.fn) != CRUCIBLE_OK) return;
    again.check(" (on a repeated call)");
    std::map<std::string, Tensor> second;
    for (const auto& w : again.fresh_outputs()) second[w.what] = w.tensor;
    for (const auto& w : suspects) {
      auto it = second.find(w.what);
      if (it == second.end()) continue;
      int64_t n = 0, first = -1;
      for (int64_t i = 0; i < w.tensor.numel(); ++i)
        if (element_poisoned(w.tensor, i, kPoisonByte) &&
            element_poisoned(it->second, i, kConfirmPoisonByte)) {
          if (n++ == 0) first = i;
        }
      if (n > 0)
        kernel_fault(fmt::format(
            "left {} of {} element(s) of {} unwritten (the first at flat index {}): they still "
            "hold the poison crucible filled the output with{}",
            n, w.tensor.numel(), w.what, first, random ? " (a random op)" : ""));
    }
  }

  bool repeats_last_call(const OpDef& op, const Values& args) const {
    if (op.name != last_op_) return false;
    std::vector<Tensor> ts;
    for (const Value& v : args) collect_tensors(v, ts);
    if (ts.empty() || ts.size() != last_storages_.size()) return false;
    for (size_t i = 0; i < ts.size(); ++i) {
      auto s = last_storages_[i].lock();
      if (!s || s != ts[i].storage()) return false;
    }
    return true;
  }

  void remember_call(const OpDef& op, const Values& args) {
    std::vector<Tensor> ts;
    for (const Value& v : args) collect_tensors(v, ts);
    last_op_ = op.name;
    last_storages_.clear();
    for (const Tensor& t : ts) last_storages_.push_back(t.storage());
  }

  void load() const {
    if (loaded_) return;
    loaded_ = true;
    try {
      for (LoadedKernel& k : loader_()) {
        std::string op = k.op;
        kernels_.emplace(op, std::move(k));
      }
    } catch (const Error& e) {
      load_error_ = fmt::format("backend '{}' could not load its kernels: {}", name_, e.what());
      load_error_kind_ = e.kind();
    }
  }

  std::string name_;
  std::function<std::vector<LoadedKernel>()> loader_;
  KernelBackendOptions opts_;
  mutable bool loaded_ = false;
  mutable std::string load_error_;
  mutable ErrorKind load_error_kind_ = ErrorKind::Input;
  mutable std::map<std::string, LoadedKernel> kernels_;
  OutputPlanner planner_;
  int threads_ = 1;
  std::string last_op_;
  std::vector<std::weak_ptr<Storage>> last_storages_;
};

}  // namespace

std::unique_ptr<Backend> make_kernel_backend(std::string name,
                                             std::function<std::vector<LoadedKernel>()> loader,
                                             KernelBackendOptions opts) {
  return std::make_unique<KernelBackend>(std::move(name), std::move(loader), std::move(opts));
}

std::unique_ptr<Backend> make_plugin_backend(const std::string& spec) {
  const std::string path = spec.substr(spec.find(':') + 1);
  if (path.empty())
    usage_error("--backend plugin: needs a library path, e.g. --backend plugin:build/libmine.so");
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    usage_error(
        fmt::format("--backend {}: no such file '{}' (give the path of a plugin library "
                    "built against crucible/kernel.h, see docs/kernel-abi.md)",
                    spec, path));
  KernelBackendOptions opts;
  opts.version = std::filesystem::path(path).filename().string();
  auto inner = make_kernel_backend(
      spec, [path] { return load_plugin_library(path, nullptr); }, opts);
  // A sandboxed process (a worker) starts no process: it loads the library lazily, as told.
  if (sandbox_entered()) return inner;
  // Elsewhere the library is loaded first in a short-lived child (never here): one that cannot
  // load is refused now, before any case runs. Probes are kept per file version, so workers
  // forked from this process inherit the answer.
  static std::mutex mu;
  static std::map<std::string, PluginDescription> probed;
  struct stat st;
  if (stat(path.c_str(), &st) != 0)
    usage_error(
        fmt::format("--backend {}: cannot read '{}': {}", spec, path, std::strerror(errno)));
  const std::string key = fmt::format("{}\n{}:{}:{}:{}.{}", path, st.st_dev, st.st_ino, st.st_size,
                                      st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
  std::lock_guard<std::mutex> lock(mu);
  auto it = probed.find(key);
  if (it == probed.end()) it = probed.emplace(key, probe_kernel_library(path)).first;
  return make_probed_backend(std::move(inner), it->second);
}

}  // namespace crucible
