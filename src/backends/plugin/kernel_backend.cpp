// The kernel ABI backend, as the trusted worker runs it (plugin libraries and kernel folders).
//
// Kernel code never runs in this process. Each op's kernels run in a candidate process of their
// own (candidate_process.h), replaced when the op changes and after any fault; every call goes
// through a shared arena (kernel_call.h). A judged call is made three times, in an order drawn
// per case: the case itself; the case again, from other addresses under another poison (the two
// must agree, element by element: what a kernel leaves unwritten, or computes from its buffers'
// earlier contents or addresses, shows); and a decoy, in the same buffers with the inputs
// permuted (a kernel that returns a result cached by pointer, shape or leading elements shows).
// Repeated calls on the very same argument tensors (the timing loop) skip the defences and reuse
// the arena.
#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>

#include <fmt/format.h>

#include "backends/plugin/candidate_process.h"
#include "backends/plugin/candidate_timer.h"
#include "backends/plugin/guards.h"
#include "backends/plugin/kernel_call.h"
#include "backends/plugin/kernel_library.h"
#include "backends/plugin/output_plan.h"
#include "backends/plugin/probe.h"
#include "backends/plugin/shared_arena.h"
#include "crucible/compare/compare.h"
#include "crucible/core/error.h"
#include "sandbox/sandbox.h"

namespace crucible {

namespace {

void collect_tensors(const Value& v, std::vector<Tensor>& out) {
  if (v.is_tensor() && v.tensor().defined()) out.push_back(v.tensor());
  if (v.kind() == ValueKind::TensorList || v.kind() == ValueKind::OptTensorList)
    for (const Tensor& t : v.tensors())
      if (t.defined()) out.push_back(t);
}

// The decoy: a copy of `args` whose data tensors (every role but IndexInto) hold their values
// in a random order. *differs says whether any tensor actually changed.
Values make_decoy(const OpDef& op, const Values& args, std::mt19937_64& rng, bool* differs) {
  Values d = deep_copy(args);
  *differs = false;
  for (size_t i = 0; i < d.size() && i < op.schema.arguments.size(); ++i) {
    const ArgRole role = op.role_of(op.schema.arguments[i].name);
    if (role.kind == ArgRole::Kind::IndexInto) continue;
    std::vector<Tensor> ts, orig;
    collect_tensors(d[i], ts);
    collect_tensors(args[i], orig);
    // Half the time the leading elements stay where they are and only the rest is permuted: a
    // cache keyed by the first few values is then fooled too.
    const int64_t keep = rng() % 2 == 0 ? 0 : 16;
    for (size_t j = 0; j < ts.size(); ++j) {
      // A permutation may come out as the identity (or only swap equal values): draw again, the
      // whole tensor this time, a few times; a tensor of one repeated value cannot change.
      for (int attempt = 0; attempt < 8; ++attempt) {
        permute_elements(ts[j], rng, attempt == 0 ? keep : 0);
        if (j >= orig.size() || !same_elements(ts[j], orig[j])) break;
      }
      if (j < orig.size() && !same_elements(ts[j], orig[j])) *differs = true;
    }
  }
  return d;
}

// Tensors a kernel produced: its tensor outputs (but those whose values are unspecified) and
// the arguments it mutated.
std::vector<Tensor> produced(const OpDef& op, const Values& args, const Values& outs) {
  std::vector<Tensor> ts;
  for (size_t k = 0; k < outs.size(); ++k)
    if (!op.compare.output_unspecified(k, args)) collect_tensors(outs[k], ts);
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

double tol_scale(const OpDef& op, const Values& args) {
  return op.compare.tol_scale ? std::max(1.0, op.compare.tol_scale(args)) : 1.0;
}

// Whether two results agree within the op's tolerances (a reduction over permuted data, or a
// kernel whose threads add in another order, may differ in the last bits).
bool all_close(const OpDef& op, const Values& args, const std::vector<Tensor>& a,
               const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].shape() != b[i].shape() || a[i].dtype() != b[i].dtype()) return false;
    if (!compare_tensors(a[i], b[i], tol_scale(op, args), "").passed) return false;
  }
  return true;
}

PoisonKind pick_poison(std::mt19937_64& rng, int avoid) {
  for (;;) {
    int k = static_cast<int>(rng() % 4);
    if (k != avoid) return static_cast<PoisonKind>(k);
  }
}

class KernelBackend final : public Backend {
 public:
  KernelBackend(std::string name, KernelLoader loader, KernelBackendOptions opts)
      : name_(std::move(name)), loader_(std::move(loader)), opts_(std::move(opts)) {}

  std::string name() const override { return name_; }
  std::string version() const override { return opts_.version; }
  bool untrusted() const override { return true; }
  void isolate_candidates(const CandidateIsolation& isolation) override {
    isolation_ = isolation;
    if (opts_.zygote) start_zygote();
  }

  bool has_op(const OpDef& op) const override {
    if (!opts_.library_per_op && listed_) return listing_.count(op.name) > 0;
    CandidateProcess* h = host_for(op);
    if (!h || !h->load_error().empty()) return false;
    return h->ops().count(op.name) > 0;
  }

  bool supports(const OpDef& op, const Values& args, std::string* why) const override {
    if (!opts_.library_per_op && listed_ && !listing_.count(op.name) && load_error_.empty()) {
      if (why) *why = fmt::format("backend '{}' has no kernel for {}", name_, op.name);
      return false;
    }
    CandidateProcess* h = host_for(op);
    if (!h || !h->load_error().empty() || !h->load_changes().empty()) return true;  // run() says
    auto it = h->ops().find(op.name);
    if (it == h->ops().end()) {
      if (why) *why = fmt::format("backend '{}' has no kernel for {}", name_, op.name);
      return false;
    }
    if (!it->second) return true;
    try {
      return KernelCall::ask_supports(*h, op, args, why) == CRUCIBLE_OK;
    } catch (const Error&) {
      host_.reset();
      return true;  // run() meets the fault again and reports it
    }
  }

  void set_num_threads(int n) override { threads_ = n > 0 ? n : 1; }

  // Every call already ends with the device synchronised. The harness calls this before and
  // after each sample of a timing loop (repeated calls on the same arguments), outside the
  // timed region; it judges the timed calls: the call just made must have left what the case's
  // judged call returned on the same arguments (a kernel that recognises the repetition and
  // skips its work, or writes something else, gets a timing error), and every fresh output
  // gets a new poison byte before the next call. On the CPU the poison is also evicted from the
  // caches; on CUDA the outputs are copied from the device and poisoned there after each timed
  // call (not again before the next one, which finds them poisoned: a second copy of a large
  // output there cost a Python kernel's next call hundreds of microseconds of host time, its
  // caches and core gone cold), and the L2 is flushed, so that no sample finds the previous
  // one's data in it.
  void synchronize() override {
    if (!fast_ || !host_) return;
    const auto poison = static_cast<unsigned char>(timed_rng_());
    const bool ran = timed_pending_;
    const bool judge = ran && judge_timed_;
    timed_pending_ = false;
    if (host_->cuda() && ran) fast_->take_device_outputs(*host_, poison);
    if (judge) check_timed_call();
    if (host_->cuda())
      host_->flush_l2();
    else
      fast_->poison_arena_outputs(poison);
  }

  std::unique_ptr<DeviceTimer> make_timer() override {
    return make_candidate_timer([this] {
      CandidateSample s;
      if (!host_) return s;
      s.bare = host_->bare_round_trip();
      if (host_->cuda() && fast_ && fast_pure_) {
        s.device_timed = true;
        s.gap = host_->empty_sample_gap();
        s.event = fast_->reported_seconds();
      }
      return s;
    });
  }

  Values run(const OpDef& op, const Values& args) override {
    CandidateProcess* hp = host_for(op);
    if (!hp) {
      const std::string why = spawn_error_;
      spawn_error_.clear();
      kernel_fault(why);
    }
    CandidateProcess& h = *hp;
    if (!h.load_error().empty()) {
      const std::string m =
          fmt::format("backend '{}' could not load its kernels: {}", name_, h.load_error());
      if (h.load_error_kind() == ErrorKind::CompileError ||
          h.load_error_kind() == ErrorKind::Unsupported)
        throw Error(h.load_error_kind(), m);
      kernel_fault(m);
    }
    if (!h.load_changes().empty())
      kernel_fault("loading the kernel's library: " + h.load_changes());
    if (!h.ops().count(op.name))
      unsupported(fmt::format("backend '{}' has no kernel for {}", name_, op.name));
    try {
      if (!opts_.guards) {
        const OutputPlan plan = planner_.plan(op, args);
        KernelCall call(op, plan, args, CallLayout{.guarded = false, .seed = unpredictable_u64()},
                        seed_, threads_);
        call.raise_for_status(call.invoke(h));
        return call.outputs();
      }
      if (repeats_last_call(op, args)) return repeat(op, args, h);
      remember_call(op, args);
      const OutputPlan plan = planner_.plan(op, args);  // a copy: the cache may be cleared
      const Values outs = guarded_run(op, h, plan, args);
      // An out= argument is the caller's tensor, which the timed calls write again: the
      // standard they are judged against is a copy of what the judged call left in it.
      judged_ = outs;
      for (size_t k = 0; k < plan.slots.size() && k < judged_.size(); ++k)
        if (plan.slots[k].kind == OutputSlot::Kind::Mutated &&
            is_out_argument(op.schema, plan.slots[k].arg) && judged_[k].is_tensor())
          judged_[k] = Value(judged_[k].tensor().clone());
      return outs;
    } catch (const Error& e) {
      // After a fault the process may be in any state: the next call gets a fresh one.
      if (e.kind() != ErrorKind::OpError && e.kind() != ErrorKind::Unsupported) retire();
      throw;
    }
  }

 private:
  Values guarded_run(const OpDef& op, CandidateProcess& h, const OutputPlan& plan,
                     const Values& args) {
    std::mt19937_64 rng(unpredictable_u64());
    const bool random = op.compare.random || static_cast<bool>(op.ref_seeded);
    const bool values_unspecified =
        op.compare.values_unspecified || op.compare.kind == ComparePolicy::Kind::ShapeOnly;
    const PoisonKind p_real = pick_poison(rng, -1);
    CallLayout real_layout{
        .guarded = true, .seed = rng(), .poison = p_real, .poison_seed = rng(), .arena = nullptr};
    KernelCall real(op, plan, args, real_layout, seed_, threads_);
    if (plan.meta_raised) {
      // An invalid call: the kernel is expected to raise; the evaluator judges it.
      const int32_t st = real.invoke(h);
      real.raise_for_status(st);
      return real.outputs();
    }
    const Values pristine = deep_copy(args);
    Values second_args = deep_copy(pristine);
    KernelCall second(op, plan, second_args,
                      CallLayout{.guarded = true,
                                 .seed = rng(),
                                 .poison = pick_poison(rng, static_cast<int>(p_real)),
                                 .poison_seed = rng(),
                                 .arena = nullptr},
                      seed_, threads_);
    bool differs = false;
    Values decoy_pristine, decoy_args;
    std::unique_ptr<KernelCall> decoy;
    if (!random) {
      decoy_pristine = make_decoy(op, pristine, rng, &differs);
      decoy_args = deep_copy(decoy_pristine);
      decoy = std::make_unique<KernelCall>(
          op, plan, decoy_args,
          CallLayout{.guarded = true,
                     .seed = real_layout.seed,  // the same places in the same arena
                     .poison = pick_poison(rng, -1),
                     .poison_seed = rng(),
                     .arena = real.arena()},
          seed_, threads_);
    }

    // The calls, in an order drawn for this case.
    std::vector<KernelCall*> order = {&real, &second};
    if (decoy) order.push_back(decoy.get());
    std::shuffle(order.begin(), order.end(), rng);
    std::map<KernelCall*, int32_t> status;
    const bool fresh_process = h.calls() == 0;
    for (KernelCall* c : order) status[c] = c->invoke(h);
    // The decoy is judged against the reference too when it was the process's first call: a
    // kernel wrong only on a process's first call would otherwise go unseen.
    const bool judge_decoy = decoy && status[decoy.get()] == CRUCIBLE_OK && fresh_process &&
                             order.front() == decoy.get();

    real.raise_for_status(status[&real]);
    real.check("");
    Values outs = real.outputs();
    if (status[&second] != CRUCIBLE_OK)
      kernel_fault(fmt::format(
          "returned status {} when called again on the same inputs at other addresses (the "
          "judged call returned CRUCIBLE_OK)",
          status[&second]));
    second.check(" (on a second call with the same inputs at other addresses)");
    if (decoy && status[decoy.get()] == CRUCIBLE_OK) decoy->check(" (on a call with decoy inputs)");

    // The two calls on the same inputs agree.
    if (!values_unspecified) {
      const auto a = real.written(), b = second.written();
      for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
        if (op.compare.output_unspecified(a[i].output, pristine)) continue;  // RNG state, unused
        int64_t first = -1;
        const int64_t n =
            count_unwritten(a[i].tensor, a[i].poison, b[i].tensor, b[i].poison, &first);
        if (n > 0)
          kernel_fault(fmt::format(
              "left {} of {} element(s) of {} unwritten (the first at flat index {}): they still "
              "hold the poison crucible filled the output with, in two calls under two "
              "different poisons{}",
              n, a[i].tensor.numel(), a[i].what, first, random ? " (a random op)" : ""));
      }
      const Values second_outs = second.outputs();
      const auto pa = produced(op, args, outs), pb = produced(op, second_args, second_outs);
      for (size_t i = 0; i < pa.size() && i < pb.size(); ++i)
        if (!same_elements(pa[i], pb[i]) && !all_close(op, pristine, {pa[i]}, {pb[i]}))
          kernel_fault(
              "gave a different result when called again on the same inputs at other addresses "
              "and with other initial output contents (does it read its outputs before writing "
              "them, or depend on where its buffers are?)");
    }

    if (judge_decoy && !values_unspecified)
      judge_against_reference(op, decoy_pristine, decoy_args, decoy->outputs());

    // A result cached from another call.
    if (decoy && status[decoy.get()] == CRUCIBLE_OK && differs) {
      const Values decoy_outs = decoy->outputs();
      if (all_same(produced(op, args, outs), produced(op, decoy_args, decoy_outs))) {
        Values a = deep_copy(pristine);
        Values b = deep_copy(decoy_pristine);
        Values ra = op.run_ref(a, seed_), rb = op.run_ref(b, seed_);
        if (!all_close(op, a, produced(op, a, ra), produced(op, b, rb)))
          kernel_fault(
              "returned the result of an earlier call: every output equals what the kernel "
              "produced on another call, on different inputs (does it cache answers by "
              "pointer, shape or a few elements?)");
      }
    }
    return outs;
  }

  // Fails the case when the outputs of a call on `inputs` (mutated arguments in `args`) are not
  // the reference's within the op's tolerances.
  void judge_against_reference(const OpDef& op, const Values& inputs, const Values& args,
                               const Values& outs) {
    Values ref_args = deep_copy(inputs);
    Values ref_outs;
    try {
      ref_outs = op.run_ref(ref_args, seed_);
    } catch (const Error&) {
      return;  // the permuted inputs are not a valid call: nothing to judge
    }
    auto fault = [](const std::string& reason) {
      kernel_fault(
          "wrong on a decoy call (the same shapes, the input values permuted, the same "
          "buffers): " +
          reason);
    };
    if (op.compare.kind == ComparePolicy::Kind::Custom) {
      for (const TensorCheck& c : op.compare.custom(inputs, ref_outs, outs))
        if (!c.passed) fault(c.reason);
    } else {
      const auto want = produced(op, ref_args, ref_outs), got = produced(op, args, outs);
      if (want.size() != got.size()) return;
      for (size_t i = 0; i < want.size(); ++i) {
        if (want[i].shape() != got[i].shape() || want[i].dtype() != got[i].dtype()) continue;
        TensorCheck c = compare_tensors(want[i], got[i], tol_scale(op, inputs), "its result");
        if (!c.passed) fault(c.reason);
      }
    }
    if (op.compare.kind == ComparePolicy::Kind::Custom)
      for (size_t i : op.schema.mutated_arguments()) {
        if (i >= args.size() || !args[i].is_tensor() || !ref_args[i].is_tensor()) continue;
        TensorCheck c = compare_tensors(ref_args[i].tensor(), args[i].tensor(),
                                        tol_scale(op, inputs), "its mutated argument");
        if (!c.passed) fault(c.reason);
      }
  }

  // The timing loop's repeated call: the same arguments, the same arena, no defences (what it
  // left is judged in synchronize(), after the timed region).
  Values repeat(const OpDef& op, const Values& args, CandidateProcess& h) {
    timed_pending_ = true;
    if (!fast_ || fast_args_ != &args) {
      fast_plan_ = planner_.plan(op, args);
      fast_.reset();
      fast_ = std::make_unique<KernelCall>(
          op, fast_plan_, args,
          CallLayout{.guarded = false, .seed = unpredictable_u64(), .timed = true}, seed_,
          threads_);
      fast_args_ = &args;
      fast_pure_ = false;
      judge_timed_ = !op.compare.random && !static_cast<bool>(op.ref_seeded) &&
                     !op.compare.values_unspecified &&
                     op.compare.kind != ComparePolicy::Kind::ShapeOnly;
      timed_scale_ = tol_scale(op, args);
      fast_->raise_for_status(fast_->invoke(h, true));
      return fast_->outputs(true);
    }
    fast_pure_ = true;
    fast_->raise_for_status(fast_->invoke(h, false));
    return fast_->outputs(true);
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

  // A timed call's fresh outputs and out= arguments against the judged call's: byte for byte,
  // or else within the op's tolerance of them (a kernel whose sums are ordered by its threads or
  // atomics may round differently from call to call; one that skipped its work left the poison).
  void check_timed_call() const {
    const Values got = fast_->outputs(true);
    std::vector<std::pair<size_t, Tensor>> timed;
    for (size_t k = 0; k < fast_plan_.slots.size() && k < got.size(); ++k)
      if (fast_plan_.slots[k].kind == OutputSlot::Kind::Fresh && got[k].is_tensor())
        timed.push_back({k, got[k].tensor()});
    for (auto& view : fast_->timed_out_arguments()) timed.push_back(std::move(view));
    for (const auto& [k, a] : timed) {
      if (k >= judged_.size() || !judged_[k].is_tensor()) continue;
      const Tensor& b = judged_[k].tensor();
      if (!a.defined() || !b.defined() || a.shape() != b.shape() || a.dtype() != b.dtype())
        continue;
      if (same_elements(a, b)) continue;
      const TensorCheck c = compare_tensors(b, a, timed_scale_, "the timed call's result");
      if (!c.passed)
        kernel_fault(fmt::format(
            "output {} of a timed call differs from what the case's judged call returned on the "
            "same arguments ({}): the kernel skipped or changed its work while it was timed",
            k, c.reason));
    }
  }

  void remember_call(const OpDef& op, const Values& args) {
    judged_.clear();
    timed_pending_ = false;
    std::vector<Tensor> ts;
    for (const Value& v : args) collect_tensors(v, ts);
    last_op_ = op.name;
    last_storages_.clear();
    for (const Tensor& t : ts) last_storages_.push_back(t.storage());
    fast_.reset();
    fast_args_ = nullptr;
  }

  // The candidate process of `op` (a fresh one when the op changed), or nullptr when it could
  // not be started or said something malformed (spawn_error_ says what).
  CandidateProcess* host_for(const OpDef& op) const {
    if (host_ && host_op_ == op.name) return host_.get();
    host_.reset();
    if (!spawn_error_.empty() && spawn_op_ == op.name) return nullptr;
    if (opts_.zygote && !zygote_) start_zygote();
    const KernelHostSetup setup = setup_for(opts_.library_per_op ? op.name : "",
                                            opts_.cuda_device ? opts_.cuda_device(op.name) : -1);
    try {
      host_ = std::make_unique<CandidateProcess>(setup, isolation_, zygote_.get());
    } catch (const Error& e) {
      spawn_error_ = e.what();
      spawn_op_ = op.name;
      return nullptr;
    }
    spawn_error_.clear();
    host_op_ = op.name;
    if (!opts_.library_per_op && !listed_) {
      listed_ = true;
      load_error_ = host_->load_error();
      for (const auto& [name, hook] : host_->ops()) listing_.insert(name);
    }
    return host_.get();
  }

  KernelHostSetup setup_for(const std::string& op, int cuda_device) const {
    KernelHostSetup setup;
    setup.op = op;
    setup.loader = loader_;
    setup.prepare = opts_.prepare_candidate;
    setup.cuda_device = cuda_device;
    return setup;
  }

  // Forks the zygote from this worker as it is now: it keeps the loader, options and isolation
  // as they are (all set before any case runs).
  void start_zygote() const {
    host_.reset();
    zygote_.reset();
    zygote_ = std::make_unique<CandidateZygote>(
        [this](const ZygoteSpawn& z, int sock, int out_fd, char* note, size_t note_size,
               pid_t parent) {
          CandidateProcess::child_main(setup_for(z.op, z.cuda_device), isolation_, sock, out_fd,
                                       note, note_size, z.tag, parent);
        },
        opts_.zygote_hooks);
  }

  void retire() {
    fast_.reset();
    fast_args_ = nullptr;
    host_.reset();
  }

  std::string name_;
  KernelLoader loader_;
  KernelBackendOptions opts_;
  CandidateIsolation isolation_;
  mutable std::unique_ptr<CandidateZygote> zygote_;  // declared first: outlives host_
  mutable std::unique_ptr<CandidateProcess> host_;
  mutable std::string host_op_;
  mutable bool listed_ = false;
  mutable std::set<std::string> listing_;
  mutable std::string load_error_;
  mutable std::string spawn_error_, spawn_op_;
  OutputPlanner planner_;
  int threads_ = 1;
  std::string last_op_;
  std::vector<std::weak_ptr<Storage>> last_storages_;
  std::unique_ptr<KernelCall> fast_;
  OutputPlan fast_plan_;
  const Values* fast_args_ = nullptr;
  bool fast_pure_ = false;
  Values judged_;               // the outputs of the last judged call (the timed calls' standard)
  bool timed_pending_ = false;  // a timed call was made since the last synchronize()
  bool judge_timed_ = false;    // its op's values can be compared
  double timed_scale_ = 1;      // its op's tolerance scale on the timed arguments
  std::mt19937_64 timed_rng_{unpredictable_u64()};  // the poison bytes between timed calls
};

}  // namespace

std::unique_ptr<Backend> make_kernel_backend(std::string name, KernelLoader loader,
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
  // The library runs on the device its description names (learnt by the probe, before any
  // candidate process loads it): a CUDA plugin's candidate processes start CUDA first.
  auto make_inner = [&](bool cuda) {
    KernelBackendOptions o = opts;
    if (cuda) {
      o.cuda_device = [](const std::string&) { return 0; };
      o.zygote = true;
    }
    return make_kernel_backend(
        spec,
        [path, cuda](const std::string&) {
          PluginInfo info;
          std::vector<LoadedKernel> k = load_plugin_library(path, &info);
          if (info.device.is_cpu() == cuda)
            input_error(path, fmt::format("the library now says it runs on {}, but its probe "
                                          "said {} (did the file change during the run?)",
                                          info.device.is_cpu() ? "the CPU" : "CUDA",
                                          cuda ? "CUDA" : "the CPU"));
          return k;
        },
        o);
  };
  // Probes are kept per file version, so workers forked from this process inherit the answer.
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
  // A sandboxed process (a worker) starts no process: it loads the library lazily, as told
  // (on the device its parent's probe found, else the CPU).
  if (sandbox_entered()) return make_inner(it != probed.end() && it->second.cuda);
  // Elsewhere the library is loaded first in a short-lived child (never here): one that cannot
  // load is refused now, before any case runs.
  if (it == probed.end()) it = probed.emplace(key, probe_kernel_library(path)).first;
  return make_probed_backend(make_inner(it->second.cuda), it->second);
}

}  // namespace crucible
