// The `aten` backend: every catalog op runs through the c10 dispatcher by its schema name, as a
// boxed call on a stack of IValues converted from crucible's bound arguments. A new catalog op
// needs no adapter code; the backend supports exactly what this libtorch has, plus the ops of
// the compatibility table (aten_compat.cpp) that newer PyTorch exports and this libtorch lacks.
#include "backends/aten/aten_backend.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/InferenceMode.h>
#include <torch/csrc/jit/runtime/operator.h>

#include <map>
#include <mutex>
#include <new>

#include "backends/aten/aten_compat.h"
#include "backends/aten/aten_convert.h"
#include "backends/aten/aten_device.h"
#include "crucible/core/error.h"
#include "crucible/core/retirement.h"
#include "crucible/ops/args.h"

namespace crucible {

std::string aten_version() { return "libtorch " TORCH_VERSION; }

namespace aten {
namespace {

// How one catalog op maps onto libtorch's operator: the dispatcher's handle (or, for the few
// ops TorchScript registers outside the dispatcher, such as sym_size.int, its operator), and for
// each of libtorch's arguments the index of the catalog argument that fills it (-1: libtorch's
// default).
struct OpBinding {
  std::optional<c10::OperatorHandle> handle;
  std::shared_ptr<torch::jit::Operator> jit;
  const c10::FunctionSchema* schema = nullptr;
  std::string why_not;  // non-empty when libtorch cannot run the op
  // The composition that runs the op where this libtorch lacks it (no handle, schema or jit).
  const Composition* composition = nullptr;
  std::vector<int> from_catalog;
  std::vector<bool> catalog_used;
};

// Warnings ATen prints (resized outputs, deprecations) are dropped: a worker's console is not
// the place, and the verdict does not depend on them.
class QuietWarnings final : public c10::WarningHandler {
 public:
#if TORCH_VERSION_MAJOR >= 2
  void process(const c10::Warning&) override {}
#else
  void process(const c10::SourceLocation&, const std::string&, const bool) override {}
#endif
};

#if TORCH_VERSION_MAJOR >= 2
namespace warning_api = c10::WarningUtils;
#else
namespace warning_api = c10::Warning;
#endif

class WarningsDropped {
 public:
  WarningsDropped() : previous_(warning_api::get_warning_handler()) {
    static QuietWarnings quiet;
    warning_api::set_warning_handler(&quiet);
  }
  ~WarningsDropped() { warning_api::set_warning_handler(previous_); }
  WarningsDropped(const WarningsDropped&) = delete;
  WarningsDropped& operator=(const WarningsDropped&) = delete;

 private:
  c10::WarningHandler* previous_;
};

bool not_implemented(const c10::Error& e) {
  if (dynamic_cast<const c10::NotImplementedError*>(&e)) return true;
  const std::string msg = e.what_without_backtrace();
  return msg.find("not implemented for '") != std::string::npos ||
         msg.find("Could not run '") != std::string::npos;
}

// Calls that this libtorch is known to run out of bounds or to crash in: they corrupt the
// worker's heap (the abort comes at some later allocation, charged to whichever case runs next)
// or kill it in some runs and raise in others, so the verdict would change from run to run.
// crucible does not make them (docs/aten-differences.md lists them).
const char* known_unsafe_call(const OpDef& op, const Values& args, bool cuda) {
#if TORCH_VERSION_MAJOR < 2
  (void)cuda;
  // libtorch 1.13's embedding_bag with include_last_offset and mode max writes past its outputs.
  if ((op.name == "aten._embedding_bag.default" ||
       op.name == "aten._embedding_bag_forward_only.default") &&
      args.size() > 7 && args[4].kind() == ValueKind::Int && args[4].to_int() == 2 &&
      args[7].kind() == ValueKind::Bool && args[7].to_bool())
    return "libtorch " TORCH_VERSION
           " writes past its outputs in embedding_bag with "
           "include_last_offset=True and mode=max (heap corruption); crucible does not run it";
#else
  // cuDNN's fused attention takes head dimensions that are multiples of 8. Given another, it
  // raises "cuDNN Frontend error: hidden_dim should be multiple of 8", or on f32 inputs, after
  // other cuDNN calls in the same process, dies of SIGSEGV. Its backward is kept from the same
  // head dimensions.
  if (cuda && (op.name == "aten._scaled_dot_product_cudnn_attention.default" ||
               op.name == "aten._scaled_dot_product_cudnn_attention_backward.default")) {
    // A call the catalog refuses is ATen's to refuse (it raises before cuDNN runs).
    try {
      op.run_meta(args);
    } catch (const Error&) {
      return nullptr;
    }
    const Args a(args, op.schema);
    const Tensor& q = a.tensor("query");
    const Tensor& v = a.tensor("value");
    if ((q.dim() > 0 && q.size(-1) % 8 != 0) || (v.dim() > 0 && v.size(-1) % 8 != 0))
      return "libtorch " TORCH_VERSION
             "'s cuDNN attention takes head dimensions that are multiples of 8 only: given "
             "another it raises (\"hidden_dim should be multiple of 8\") or crashes the "
             "process; crucible does not run it";
  }
#endif
  return nullptr;
}

// ATen on CUDA as a reference or baseline computes what the op means: no TF32 in matrix products
// and convolutions (cuDNN's default is TF32), no reduced-precision reductions inside f16/bf16
// products. These are process-wide flags; setting them initialises nothing on the device.
// Deterministic algorithms stay as users run them (off): they change what a baseline times.
void pin_cuda_numerics() {
  at::Context& ctx = at::globalContext();
  ctx.setAllowTF32CuBLAS(false);
  ctx.setAllowTF32CuDNN(false);
  ctx.setAllowFP16ReductionCuBLAS(false);
#if TORCH_VERSION_MAJOR >= 2
  ctx.setAllowBF16ReductionCuBLAS(false);
#endif
}

class AtenBackend final : public Backend {
 public:
  AtenBackend(std::string name, Device device) : name_(std::move(name)), device_(device) {
    if (!device_.is_cpu()) pin_cuda_numerics();
  }

  std::string name() const override { return name_; }
  std::string version() const override { return aten_version(); }
  Device device() const override { return device_; }

  bool has_op(const OpDef& op) const override { return binding(op).why_not.empty(); }

  bool supports(const OpDef& op, const Values& args, std::string* why) const override {
    const OpBinding& b = binding(op);
    if (!b.why_not.empty()) {
      if (why) *why = b.why_not;
      return false;
    }
    if (const char* bad = known_unsafe_call(op, args, !device_.is_cpu())) {
      if (why) *why = bad;
      return false;
    }
    for (const Value& v : args) {
      if (v.is_tensor() && v.tensor().defined() && !to_scalar_type(v.tensor().dtype())) {
        if (why)
          *why = "libtorch " TORCH_VERSION " has no dtype " +
                 std::string(dtype_code(v.tensor().dtype()));
        return false;
      }
    }
    return true;
  }

  std::vector<DType> supported_dtypes(const OpDef& op) const override {
    std::vector<DType> out;
    if (!has_op(op)) return out;
    for (DType d : op.dtypes)
      if (to_scalar_type(d)) out.push_back(d);
    return out;
  }

  Values run(const OpDef& op, const Values& args) override {
    const OpBinding& b = binding(op);
    if (!b.why_not.empty()) unsupported(b.why_not);
    if (const char* bad = known_unsafe_call(op, args, !device_.is_cpu())) unsupported(bad);
    WarningsDropped warnings;
    try {
      c10::InferenceMode inference;
      CallContext ctx(c10_device(device_));
      if (b.composition) {
        Values out = b.composition->run(op, args, ctx);
        ctx.finish();
        if (!device_.is_cpu()) device_synchronize(device_);
        return out;
      }
      const c10::FunctionSchema& schema = *b.schema;
      torch::jit::Stack stack;
      stack.reserve(schema.arguments().size());
      for (size_t i = 0; i < schema.arguments().size(); ++i) {
        const c10::Argument& a = schema.arguments()[i];
        const int j = b.from_catalog[i];
        if (j >= 0 && static_cast<size_t>(j) < args.size()) {
          const Value& v = args[static_cast<size_t>(j)];
          // The catalog's `Tensor?` where this libtorch declares `Tensor` (the attention
          // backwards' cum_seq_q/k and attn_bias in 2.x): an absent tensor is passed undefined,
          // as ATen's autograd passes the undefined tensors the forward returned.
          if (v.is_none() && a.type()->kind() == c10::TypeKind::TensorType &&
              op.schema.arguments[static_cast<size_t>(j)].type.optional)
            stack.push_back(at::Tensor());
          else
            stack.push_back(to_ivalue(v, a.type(), a.name(), ctx));
        } else {
          stack.push_back(*a.default_value());
        }
      }
      for (size_t j = 0; j < b.catalog_used.size() && j < args.size(); ++j) {
        if (!b.catalog_used[j] && !args[j].is_none())
          unsupported("libtorch " TORCH_VERSION "'s " + schema.name() + " has no argument '" +
                      op.schema.arguments[j].name + "', which this case sets");
      }
      // A kernel returning several Tensor& (the out= overloads with several outputs) is boxed so
      // that the returned references point into the stack slots it drops before it pushes its
      // results: these must not hold the last reference to their tensors, or the results are
      // read from freed tensors. PyTorch's own callers keep their arguments alive the same way.
      const std::vector<c10::IValue> keep_alive(stack.begin(), stack.end());
      if (b.handle) {
        b.handle->callBoxed(&stack);
      } else {
        torch::jit::Operation operation = b.jit->getOperation();
        operation(stack);
      }
      ctx.finish();
      // A device kernel's fault (a device-side assert on a bad index) belongs to this call:
      // waiting for the device here reports it here, never in a later case.
      if (!device_.is_cpu()) device_synchronize(device_);
      Values out;
      out.reserve(stack.size());
      for (const c10::IValue& iv : stack) out.push_back(from_ivalue(iv, ctx));
      return out;
    } catch (const c10::OutOfMemoryError& e) {
      throw Error(ErrorKind::Memory, std::string("ATen: ") + e.what_without_backtrace());
    } catch (const c10::Error& e) {
      const std::string msg = e.what_without_backtrace();
      if (device_context_broken(device_))
        request_worker_retirement("the CUDA context is broken: " + msg);
      if (not_implemented(e)) unsupported("libtorch " TORCH_VERSION ": " + msg);
      op_error("ATen raised: " + msg);
    } catch (const Error&) {
      throw;
    } catch (const std::bad_alloc&) {
      throw;
    } catch (const std::exception& e) {
      // Libraries under ATen (oneDNN, pocketfft, ...) raise their own exception types; to the
      // caller they are ATen rejecting the call.
      op_error(std::string("ATen raised: ") + e.what());
    }
  }

  void manual_seed(uint64_t seed) override {
    seed_ = seed;
    seed_generator(device_, seed);
  }

  void set_num_threads(int n) override {
    if (n > 0) at::set_num_threads(n);
  }

  Tensor allocate(const Shape& shape, const Shape& strides, DType dtype) override {
    if (device_.is_cpu()) return Backend::allocate(shape, strides, dtype);
    return device_allocate(device_, shape, strides, dtype);
  }
  Tensor to_device(const Tensor& host) override {
    if (device_.is_cpu() || !host.device().is_cpu()) return host;
    return copy_storage(host, device_);
  }
  Tensor to_host(const Tensor& t) override {
    if (t.device().is_cpu()) return t;
    return copy_storage(t, Device::cpu());
  }
  void synchronize() override {
    if (!device_.is_cpu()) device_synchronize(device_);
  }
  std::unique_ptr<DeviceTimer> make_timer() override {
    if (device_.is_cpu()) return Backend::make_timer();
    return make_device_timer(device_);
  }

 private:
  const OpBinding& binding(const OpDef& op) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = bindings_.find(op.name);
    if (it != bindings_.end()) return it->second;
    return bindings_.emplace(op.name, bind(op)).first->second;
  }

  // The dispatcher's operator, or where this libtorch cannot run the op, its composition.
  OpBinding bind(const OpDef& op) const {
    OpBinding b = bind_dispatcher(op);
    if (b.why_not.empty()) return b;
    if (const Composition* c = find_composition(op.name)) {
      OpBinding composed;
      composed.composition = c;
      return composed;
    }
    return b;
  }

  OpBinding bind_dispatcher(const OpDef& op) const {
    OpBinding b;
    const std::string qualified =
        (op.schema.ns.empty() ? "aten" : op.schema.ns) + "::" + op.schema.name;
    auto handle = c10::Dispatcher::singleton().findSchema({qualified, op.schema.overload});
    const std::string display =
        qualified + (op.schema.overload.empty() ? "" : "." + op.schema.overload);
    if (handle) {
      b.handle.emplace(*handle);
      const c10::DispatchKey key =
          device_.is_cpu() ? c10::DispatchKey::CPU : c10::DispatchKey::CUDA;
      if (!b.handle->hasComputedKernelForDispatchKey(key)) {
        b.why_not = "libtorch " TORCH_VERSION " has no " +
                    std::string(device_.is_cpu() ? "CPU" : "CUDA") + " kernel for " + display;
        return b;
      }
      b.schema = &b.handle->schema();
    } else {
      b.jit = torch::jit::findOperatorFor(c10::OperatorName(qualified, op.schema.overload));
      if (!b.jit) {
        b.why_not = "libtorch " TORCH_VERSION " has no " + display;
        return b;
      }
      b.schema = &b.jit->schema();
    }
    const c10::FunctionSchema& schema = *b.schema;
    b.catalog_used.assign(op.schema.arguments.size(), false);
    for (const c10::Argument& a : schema.arguments()) {
      const int j = op.schema.find_argument(a.name());
      if (j < 0 && !a.default_value()) {
        b.why_not = "libtorch " TORCH_VERSION "'s " + display + " takes an argument '" + a.name() +
                    "' that the catalog's schema does not have";
        return b;
      }
      b.from_catalog.push_back(j);
      if (j >= 0) b.catalog_used[static_cast<size_t>(j)] = true;
    }
    return b;
  }

  std::string name_;
  Device device_;
  mutable std::mutex mu_;
  mutable std::map<std::string, OpBinding> bindings_;
};

}  // namespace
}  // namespace aten

std::unique_ptr<Backend> make_aten_backend(const std::string& spec) {
  const std::string rest = spec == "aten" ? "" : spec.substr(spec.find(':') + 1);
  if (rest.empty() || rest == "cpu")
    return std::make_unique<aten::AtenBackend>(spec, Device::cpu());
  if (rest == "cuda" || rest.starts_with("cuda:")) {
    Device d;
    try {
      d = parse_device(rest);
    } catch (const Error&) {
      usage_error("--backend " + spec + ": write aten:cuda or aten:cuda:<index>");
    }
    aten::check_cuda_device(spec, d);
    return std::make_unique<aten::AtenBackend>(spec, d);
  }
  usage_error("--backend " + spec + ": unknown ATen device '" + rest +
              "'; use aten (the CPU), aten:cuda or aten:cuda:<index>");
}

}  // namespace crucible
