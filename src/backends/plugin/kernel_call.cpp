// One call of a C ABI kernel, with its outputs, callbacks and post-call checks.
#include "backends/plugin/kernel_call.h"

#include <cstring>
#include <tuple>

#include <fmt/format.h>

#include "crucible/core/error.h"

namespace crucible {

void kernel_fault(const std::string& message) {
  // A kernel from outside broke the ABI's rules: the user's input is at fault. The evaluator
  // records any error other than op/unsupported/memory/compile errors as a failed case.
  throw Error(ErrorKind::Input, message);
}

namespace {

bool same_dl(const DLTensor& a, const DLTensor& b) {
  if (a.data != b.data || a.ndim != b.ndim || a.byte_offset != b.byte_offset ||
      a.dtype.code != b.dtype.code || a.dtype.bits != b.dtype.bits ||
      a.dtype.lanes != b.dtype.lanes || a.shape != b.shape || a.strides != b.strides)
    return false;
  return true;
}

bool inside_storage(const void* p, const Tensor& t) {
  if (!t.defined() || !t.storage()) return false;
  const char* lo = static_cast<const char*>(t.storage()->data());
  const char* q = static_cast<const char*>(p);
  return q >= lo && q < lo + t.storage()->nbytes();
}

}  // namespace

KernelCall::KernelCall(const OpDef& op, const OutputPlan& plan, const Values& args, bool guarded,
                       uint8_t poison, uint64_t seed, int num_threads)
    : op_(op), plan_(plan), args_(args), call_args_(args), guarded_(guarded), poison_(poison) {
  // Arguments the op writes into: the kernel gets a copy of the storage region they span with
  // guard zones around it (same offsets and strides), copied back after the call.
  if (guarded_)
    for (size_t i : op.schema.mutated_arguments()) {
      if (i >= args.size() || !args[i].is_tensor() || !args[i].tensor().defined()) continue;
      GuardedArg ga;
      ga.arg = i;
      ga.original = args[i].tensor();
      std::tie(ga.lo, ga.hi) = ga.original.storage_extent();
      ga.g = allocate_guarded({ga.hi - ga.lo}, {1}, ga.original.dtype(), 0);
      const size_t item = ga.original.itemsize();
      if (ga.hi > ga.lo)
        std::memcpy(ga.g.tensor.data_ptr(),
                    static_cast<const char*>(ga.original.storage()->data()) + ga.lo * item,
                    static_cast<size_t>(ga.hi - ga.lo) * item);
      call_args_[i] = Value(Tensor::from_storage(
          ga.g.tensor.storage(), ga.g.tensor.offset() + ga.original.offset() - ga.lo,
          ga.original.shape(), ga.original.strides(), ga.original.dtype()));
      guarded_args_.push_back(std::move(ga));
    }
  cargs_ = abi_.values(call_args_);
  out_lists_.reserve(plan.slots.size());
  for (size_t k = 0; k < plan.slots.size(); ++k) {
    const OutputSlot& s = plan.slots[k];
    crucible_value v{};
    switch (s.kind) {
      case OutputSlot::Kind::Fresh:
      case OutputSlot::Kind::View: {
        Out o;
        o.k = k;
        o.kind = s.kind;
        Tensor t = new_output(s.spec, o);
        DLTensor* d = abi_.tensor(t);
        o.expected = *d;
        outs_[d] = std::move(o);
        v.kind = CRUCIBLE_TENSOR;
        v.v.tensor = d;
        break;
      }
      case OutputSlot::Kind::DataDependent: {
        Out o;
        o.k = k;
        o.kind = s.kind;
        DLTensor* d = abi_.empty_slot(DType::Int64);
        o.expected = *d;
        outs_[d] = std::move(o);
        v.kind = CRUCIBLE_TENSOR;
        v.v.tensor = d;
        break;
      }
      case OutputSlot::Kind::Mutated:
        v = cargs_.at(s.arg);
        break;
      case OutputSlot::Kind::Number:
        v.kind = s.number_kind == ValueKind::Float  ? CRUCIBLE_FLOAT
                 : s.number_kind == ValueKind::Bool ? CRUCIBLE_BOOL
                                                    : CRUCIBLE_INT;
        break;
      case OutputSlot::Kind::FreshList: {
        auto& list = out_lists_.emplace_back();
        for (size_t j = 0; j < s.items.size(); ++j) {
          Out o;
          o.k = k;
          o.item = static_cast<int>(j);
          o.kind = s.kind;
          Tensor t = new_output(s.items[j], o);
          DLTensor* d = abi_.tensor(t);
          o.expected = *d;
          outs_[d] = std::move(o);
          list.push_back(d);
        }
        v.kind = CRUCIBLE_TENSOR_LIST;
        v.v.tensors.items = list.data();
        v.v.tensors.size = static_cast<int64_t>(list.size());
        break;
      }
    }
    couts_.push_back(v);
  }
  error_.assign(2048, '\0');
  call_.abi_version = CRUCIBLE_KERNEL_ABI_VERSION;
  call_.struct_size = sizeof(crucible_call);
  call_.op = op.name.c_str();
  call_.args = cargs_.data();
  call_.num_args = static_cast<int32_t>(cargs_.size());
  call_.outputs = couts_.data();
  call_.num_outputs = static_cast<int32_t>(couts_.size());
  call_.stream = nullptr;
  call_.seed = seed;
  call_.num_threads = num_threads;
  call_.error = error_.data();
  call_.error_size = error_.size();
  call_.alloc_output = &KernelCall::alloc_output_cb;
  call_.make_view = &KernelCall::make_view_cb;
  call_.crucible_private = this;
}

Tensor KernelCall::new_output(const TensorSpec& spec, Out& o) {
  if (guarded_) {
    o.g = allocate_guarded(spec.shape, spec.strides, spec.dtype, poison_);
    o.guarded = true;
    o.tensor = o.g.tensor;
  } else {
    o.tensor = Tensor::empty_strided(spec.shape, spec.strides, spec.dtype);
  }
  return o.tensor;
}

int32_t KernelCall::invoke(crucible_kernel_fn fn) {
  error_[0] = '\0';
  const int32_t status = fn(&call_);
  copy_back();
  return status;
}

void KernelCall::copy_back() {
  for (const GuardedArg& ga : guarded_args_) {
    if (ga.hi <= ga.lo) continue;
    const size_t item = ga.original.itemsize();
    std::memcpy(static_cast<char*>(ga.original.storage()->data()) + ga.lo * item,
                ga.g.tensor.data_ptr(), static_cast<size_t>(ga.hi - ga.lo) * item);
  }
}

std::string KernelCall::message() const {
  std::string m(error_.data(), strnlen(error_.data(), error_.size()));
  return m;
}

void KernelCall::raise_for_status(int32_t status) const {
  const std::string m = message();
  switch (status) {
    case CRUCIBLE_OK:
      return;
    case CRUCIBLE_ERROR:
      op_error(m.empty() ? "the kernel returned CRUCIBLE_ERROR (no message)" : m);
    case CRUCIBLE_UNSUPPORTED:
      unsupported(m.empty() ? "the kernel returned CRUCIBLE_UNSUPPORTED (no message)" : m);
    case CRUCIBLE_INTERNAL:
      kernel_fault("the kernel failed (CRUCIBLE_INTERNAL)" + (m.empty() ? "" : ": " + m));
    default:
      kernel_fault(fmt::format("the kernel returned an unknown status {}{}", status,
                               m.empty() ? "" : ": " + m));
  }
}

int32_t KernelCall::callback_error(const std::string& msg) {
  std::snprintf(error_.data(), error_.size(), "%s", msg.c_str());
  return CRUCIBLE_ERROR;
}

std::string KernelCall::describe(const Out& o) const {
  return o.item < 0 ? fmt::format("output {}", o.k) : fmt::format("output {}[{}]", o.k, o.item);
}

int32_t KernelCall::alloc_output_cb(crucible_call* c, DLTensor* out, int32_t ndim,
                                    const int64_t* shape, DLDataType dtype) {
  auto* self = static_cast<KernelCall*>(c->crucible_private);
  auto it = self->outs_.find(out);
  if (it == self->outs_.end() || it->second.kind != OutputSlot::Kind::DataDependent)
    return self->callback_error("alloc_output: not a data-dependent output of this call");
  Out& o = it->second;
  if (o.tensor.defined()) return self->callback_error("alloc_output: output already allocated");
  if (ndim < 0 || ndim > CRUCIBLE_MAX_NDIM || (ndim > 0 && !shape))
    return self->callback_error(fmt::format("alloc_output: bad ndim {}", ndim));
  Shape sh(shape, shape + ndim);
  for (int64_t s : sh)
    if (s < 0) return self->callback_error("alloc_output: negative size");
  auto dt = from_dl_dtype(dtype);
  if (!dt) return self->callback_error("alloc_output: unknown dtype");
  try {
    self->new_output({sh, contiguous_strides(sh), *dt}, o);
  } catch (const Error& e) {
    std::snprintf(self->error_.data(), self->error_.size(), "alloc_output: %s", e.what());
    return CRUCIBLE_INTERNAL;
  }
  self->abi_.rebind(out, o.tensor);
  o.expected = *out;
  return CRUCIBLE_OK;
}

int32_t KernelCall::make_view_cb(crucible_call* c, DLTensor* out, const DLTensor* base,
                                 int32_t ndim, const int64_t* shape, const int64_t* strides,
                                 int64_t offset) {
  auto* self = static_cast<KernelCall*>(c->crucible_private);
  auto it = self->outs_.find(out);
  if (it == self->outs_.end() || it->second.kind != OutputSlot::Kind::View)
    return self->callback_error(
        "make_view: not a view output (the schema gives this output no alias annotation)");
  const Tensor* src = self->abi_.source(base);
  if (!src || self->outs_.count(base))
    return self->callback_error("make_view: base is not one of the call's input tensors");
  if (ndim < 0 || ndim > CRUCIBLE_MAX_NDIM || (ndim > 0 && (!shape || !strides)))
    return self->callback_error(fmt::format("make_view: bad ndim {}", ndim));
  Shape sh(shape, shape + ndim), st(strides, strides + ndim);
  int64_t lo = src->offset() + offset, hi = lo;
  bool empty = false;
  for (int i = 0; i < ndim; ++i) {
    if (sh[i] < 0) return self->callback_error("make_view: negative size");
    if (sh[i] == 0) empty = true;
    if (st[i] > 0) hi += (sh[i] - 1) * st[i];
    if (st[i] < 0) lo += (sh[i] - 1) * st[i];
  }
  const int64_t elems = static_cast<int64_t>(src->storage()->nbytes() / src->itemsize());
  if (!empty && (lo < 0 || hi >= elems))
    return self->callback_error("make_view: the view reaches outside the base tensor's storage");
  Out& o = it->second;
  o.tensor = Tensor::from_storage(src->storage(), src->offset() + offset, sh, st, src->dtype());
  o.viewed = true;
  self->abi_.rebind(out, o.tensor);
  o.expected = *out;
  return CRUCIBLE_OK;
}

std::string KernelCall::pointer_cause(const Out& o, const DLTensor& now) const {
  const std::string what = describe(o);
  if (now.data != o.expected.data) {
    const Schema& s = op_.schema;
    for (size_t i = 0; i < call_args_.size() && i < s.arguments.size(); ++i) {
      std::vector<Tensor> ts;
      const Value& a = call_args_[i];
      if (a.is_tensor()) ts.push_back(a.tensor());
      if (a.kind() == ValueKind::TensorList || a.kind() == ValueKind::OptTensorList)
        ts = a.tensors();
      for (const Tensor& t : ts)
        if (inside_storage(now.data, t))
          return fmt::format(
              "{} points at input '{}' (the kernel replaced the data pointer crucible gave it), "
              "but the schema says {} is a new tensor{}",
              what, s.arguments[i].name, what,
              o.kind == OutputSlot::Kind::View ? " unless made a view with make_view" : "");
    }
    return fmt::format(
        "the kernel replaced the data pointer of {} (crucible allocates outputs: write into "
        "them; data-dependent outputs use alloc_output)",
        what);
  }
  return fmt::format(
      "the kernel changed the shape, strides, dtype or byte_offset of {} (outputs are allocated "
      "by crucible with their final layout)",
      what);
}

void KernelCall::check(const std::string& when) const {
  for (const GuardedArg& ga : guarded_args_) {
    std::string cause = check_guard_zones(
        ga.g, fmt::format("mutated argument '{}'", op_.schema.arguments[ga.arg].name));
    if (!cause.empty()) kernel_fault(cause + when);
  }
  for (const auto& [dl, o] : outs_) {
    const DLTensor& now = *dl;
    bool layout_same = same_dl(now, o.expected);
    if (layout_same && o.tensor.defined())
      for (int d = 0; d < now.ndim; ++d)
        if (now.shape[d] != o.tensor.shape()[d] || now.strides[d] != o.tensor.strides()[d])
          layout_same = false;
    if (!layout_same) kernel_fault(pointer_cause(o, now) + when);
    if (o.kind == OutputSlot::Kind::DataDependent && !o.tensor.defined())
      kernel_fault(
          fmt::format("the kernel did not allocate {} (its shape depends on the data: "
                      "call alloc_output before writing it){}",
                      describe(o), when));
    if (o.guarded && !o.viewed) {
      std::string cause = check_guard_zones(o.g, describe(o));
      if (!cause.empty()) kernel_fault(cause + when);
    }
  }
}

Values KernelCall::outputs() const {
  Values out;
  std::map<std::pair<size_t, int>, Tensor> by_slot;
  for (const auto& [dl, o] : outs_) by_slot[{o.k, o.item}] = o.tensor;
  for (size_t k = 0; k < plan_.slots.size(); ++k) {
    const OutputSlot& s = plan_.slots[k];
    const crucible_value& v = couts_[k];
    switch (s.kind) {
      case OutputSlot::Kind::Fresh:
      case OutputSlot::Kind::View:
      case OutputSlot::Kind::DataDependent:
        out.emplace_back(by_slot.at({k, -1}));
        break;
      case OutputSlot::Kind::Mutated:
        out.push_back(args_.at(s.arg));
        break;
      case OutputSlot::Kind::Number:
        if (v.kind == CRUCIBLE_FLOAT)
          out.emplace_back(v.v.f);
        else if (v.kind == CRUCIBLE_BOOL)
          out.emplace_back(v.v.b != 0);
        else if (v.kind == CRUCIBLE_INT)
          out.emplace_back(v.v.i);
        else
          kernel_fault(
              fmt::format("output {} is a number, but the kernel set its kind to {}", k, v.kind));
        break;
      case OutputSlot::Kind::FreshList: {
        std::vector<Tensor> ts;
        for (size_t j = 0; j < s.items.size(); ++j)
          ts.push_back(by_slot.at({k, static_cast<int>(j)}));
        out.push_back(Value::tensor_list(std::move(ts)));
        break;
      }
    }
  }
  return out;
}

std::vector<KernelCall::Written> KernelCall::fresh_outputs() const {
  std::vector<Written> w;
  for (const auto& [dl, o] : outs_)
    if (o.guarded && !o.viewed && o.tensor.defined()) w.push_back({describe(o), o.tensor});
  return w;
}

int32_t KernelCall::ask_supports(crucible_supports_fn fn, const OpDef& op, const Values& args,
                                 std::string* why) {
  AbiValues abi;
  std::vector<crucible_value> cargs = abi.values(args);
  std::vector<char> err(1024, '\0');
  crucible_call c{};
  c.abi_version = CRUCIBLE_KERNEL_ABI_VERSION;
  c.struct_size = sizeof(crucible_call);
  c.op = op.name.c_str();
  c.args = cargs.data();
  c.num_args = static_cast<int32_t>(cargs.size());
  c.num_threads = 1;
  c.error = err.data();
  c.error_size = err.size();
  int32_t st = fn(&c);
  if (st != CRUCIBLE_OK && why) {
    std::string m(err.data(), strnlen(err.data(), err.size()));
    *why = m.empty() ? "the kernel's supports hook declined the call" : m;
  }
  return st;
}

}  // namespace crucible
