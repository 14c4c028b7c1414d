// One call of a C ABI kernel through the candidate process.
#include "backends/plugin/kernel_call.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <set>

#include <fmt/format.h>

#include "backends/plugin/abi_values.h"
#include "crucible/core/cache_lines.h"
#include "crucible/core/error.h"

namespace crucible {

void kernel_fault(const std::string& message) {
  // A kernel from outside broke the ABI's rules: the user's input is at fault. The evaluator
  // records any error other than op/unsupported/memory/compile errors as a failed case.
  throw Error(ErrorKind::Input, message);
}

namespace {

// Bytes of the body of a tensor laid out with `spec` (offset 0, non-negative strides).
size_t body_bytes(const TensorSpec& spec) {
  int64_t extent = numel_of(spec.shape) > 0 ? 1 : 0;
  if (extent > 0)
    for (size_t d = 0; d < spec.shape.size(); ++d) {
      if (spec.strides[d] < 0) internal_error("an output planned with a negative stride");
      extent += (spec.shape[d] - 1) * spec.strides[d];
    }
  return static_cast<size_t>(extent) * itemsize(spec.dtype);
}

void put_value(WireWriter& w, const Value& v, const std::map<const Storage*, size_t>& region_of,
               const std::vector<size_t>& region_offset) {
  auto ref = [&](const Tensor& t) {
    TensorRef r;
    r.dtype = static_cast<uint8_t>(t.dtype());
    r.shape = t.shape();
    r.strides = t.strides();
    auto it = region_of.find(t.storage().get());
    r.offset = it == region_of.end()
                   ? kNoData
                   : region_offset[it->second] + static_cast<uint64_t>(t.offset()) * t.itemsize();
    return r;
  };
  w.put<uint8_t>(static_cast<uint8_t>(v.kind()));
  switch (v.kind()) {
    case ValueKind::None:
      break;
    case ValueKind::Tensor:
      if (!v.tensor().defined()) internal_error("an undefined tensor argument");
      put_tensor_ref(w, ref(v.tensor()));
      break;
    case ValueKind::TensorList:
    case ValueKind::OptTensorList:
      w.put<uint32_t>(static_cast<uint32_t>(v.tensors().size()));
      for (const Tensor& t : v.tensors()) {
        w.put<uint8_t>(t.defined() ? 1 : 0);
        if (t.defined()) put_tensor_ref(w, ref(t));
      }
      break;
    case ValueKind::Int:
      w.put<int64_t>(v.to_int());
      break;
    case ValueKind::Float:
      w.put<double>(v.to_double());
      break;
    case ValueKind::Bool:
      w.put<uint8_t>(v.to_bool() ? 1 : 0);
      break;
    case ValueKind::String:
      w.str(v.str_value());
      break;
    case ValueKind::IntList:
      w.array(v.to_int_list());
      break;
    case ValueKind::FloatList:
      w.array(v.float_list());
      break;
    case ValueKind::BoolList: {
      std::vector<uint8_t> b;
      for (bool x : v.bool_list()) b.push_back(x ? 1 : 0);
      w.array(b);
      break;
    }
    case ValueKind::DType:
      w.put<uint8_t>(static_cast<uint8_t>(v.to_dtype()));
      break;
    case ValueKind::Device: {
      Device d = v.to_device();
      w.put<int32_t>(d.is_cpu() ? kDLCPU : kDLCUDA);
      w.put<int32_t>(d.index);
      break;
    }
    case ValueKind::Layout:
      w.put<int32_t>(v.to_layout() == Layout::Strided ? CRUCIBLE_STRIDED : CRUCIBLE_SPARSE_COO);
      break;
    case ValueKind::MemoryFormat:
      w.put<int32_t>(static_cast<int32_t>(v.to_memory_format()));
      break;
  }
}

// A `None`-valued tensor argument travels as None.
Values none_for_undefined(const Values& args) {
  Values out = args;
  for (Value& v : out)
    if (v.is_tensor() && !v.tensor().defined()) v = Value();
  return out;
}

void collect(const Value& v, std::vector<Tensor>& out) {
  if (v.is_tensor() && v.tensor().defined()) out.push_back(v.tensor());
  if (v.kind() == ValueKind::TensorList || v.kind() == ValueKind::OptTensorList)
    for (const Tensor& t : v.tensors())
      if (t.defined()) out.push_back(t);
}

void write_call_head(WireWriter& w, const OpDef& op, uint64_t seed, int threads, const Values& args,
                     const std::map<const Storage*, size_t>& region_of,
                     const std::vector<size_t>& region_offset) {
  w.str(op.name);
  w.put<uint64_t>(seed);
  w.put<int32_t>(threads);
  const Values a = none_for_undefined(args);
  w.put<uint32_t>(static_cast<uint32_t>(a.size()));
  for (const Value& v : a) put_value(w, v, region_of, region_offset);
}

}  // namespace

bool is_out_argument(const Schema& schema, size_t arg) {
  return arg < schema.arguments.size() && schema.arguments[arg].kwarg_only &&
         schema.arguments[arg].is_mutable();
}

KernelCall::KernelCall(const OpDef& op, const OutputPlan& plan, const Values& args,
                       CallLayout layout, uint64_t seed, int num_threads)
    : op_(op),
      plan_(plan),
      args_(args),
      layout_opts_(std::move(layout)),
      layout_(layout_opts_.seed),
      seed_(seed),
      threads_(num_threads) {
  lay_out();
}

std::string KernelCall::describe(const Out& o) const {
  return o.item < 0 ? fmt::format("output {}", o.slot)
                    : fmt::format("output {}[{}]", o.slot, o.item);
}

void KernelCall::lay_out() {
  // Every distinct storage of the arguments, whole (a strided view's gaps included).
  std::map<const Storage*, size_t> region_of;
  std::map<const Storage*, int> users;  // argument tensors on each storage
  for (size_t i = 0; i < args_.size(); ++i) {
    std::vector<Tensor> ts;
    collect(args_[i], ts);
    for (const Tensor& t : ts) {
      if (!t.device().is_cpu()) unsupported("the kernel ABI backend passes CPU tensors only");
      if (t.dim() > CRUCIBLE_MAX_NDIM)
        unsupported(fmt::format("a {}-d tensor: the kernel ABI passes at most {} dims", t.dim(),
                                CRUCIBLE_MAX_NDIM));
      ++users[t.storage().get()];
      if (region_of.count(t.storage().get())) continue;
      region_of[t.storage().get()] = storages_.size();
      storages_.push_back(t.storage().get());
      storage_refs_.push_back(t.storage());
      const auto mutated = op_.schema.mutated_arguments();
      const bool written = std::find(mutated.begin(), mutated.end(), i) != mutated.end();
      region_names_.push_back(i < op_.schema.arguments.size()
                                  ? fmt::format("{} '{}'", written ? "mutated argument" : "input",
                                                op_.schema.arguments[i].name)
                                  : fmt::format("argument {}", i));
      layout_.place(t.storage()->nbytes());
    }
  }
  for (size_t k = 0; k < plan_.slots.size(); ++k) {
    const OutputSlot& s = plan_.slots[k];
    if (s.kind != OutputSlot::Kind::Mutated || s.arg >= args_.size() || !args_[s.arg].is_tensor() ||
        !is_out_argument(op_.schema, s.arg))
      continue;
    const Storage* st = args_[s.arg].tensor().storage().get();
    if (users[st] == 1) out_args_.push_back({k, region_of.at(st)});
  }
  auto add_out = [&](size_t k, int item, const TensorSpec& spec) {
    Out o;
    o.slot = k;
    o.item = item;
    o.spec = spec;
    o.region = layout_.regions().size();
    region_names_.push_back(describe(o));
    layout_.place(body_bytes(spec));
    outs_.push_back(std::move(o));
  };
  for (size_t k = 0; k < plan_.slots.size(); ++k) {
    const OutputSlot& s = plan_.slots[k];
    if (s.kind == OutputSlot::Kind::Fresh || s.kind == OutputSlot::Kind::View)
      add_out(k, -1, s.spec);
    if (s.kind == OutputSlot::Kind::FreshList)
      for (size_t j = 0; j < s.items.size(); ++j) add_out(k, static_cast<int>(j), s.items[j]);
    if (s.kind == OutputSlot::Kind::DataDependent) {
      Out o;
      o.slot = k;
      o.region = ~size_t{0};
      o.how = OutHow::Missing;
      outs_.push_back(std::move(o));
    }
  }
  if (layout_opts_.arena && layout_opts_.arena->size() >= layout_.total())
    arena_ = layout_opts_.arena;
  else
    arena_ = SharedArena::create(layout_.total());

  // The request (offsets are known now).
  std::vector<size_t> region_offset;
  for (const auto& [off, bytes] : layout_.regions()) region_offset.push_back(off);
  WireWriter w;
  w.put<uint8_t>(static_cast<uint8_t>(HostRequest::Call));
  w.put<uint8_t>(0);  // CallFlags, set by invoke()
  w.put<uint64_t>(arena_->id());
  w.put<uint64_t>(arena_->size());
  w.put<uint32_t>(static_cast<uint32_t>(layout_.guard_pages().size()));
  for (const auto& [off, len] : layout_.guard_pages()) {
    w.put<uint64_t>(off);
    w.put<uint64_t>(len);
  }
  write_call_head(w, op_, seed_, threads_, args_, region_of, region_offset);
  w.put<uint32_t>(static_cast<uint32_t>(plan_.slots.size()));
  size_t oi = 0;
  for (size_t k = 0; k < plan_.slots.size(); ++k) {
    const OutputSlot& s = plan_.slots[k];
    auto ref = [&](const Out& o) {
      TensorRef r;
      r.offset = region_offset[o.region];
      r.dtype = static_cast<uint8_t>(o.spec.dtype);
      r.shape = o.spec.shape;
      r.strides = o.spec.strides;
      return r;
    };
    switch (s.kind) {
      case OutputSlot::Kind::Fresh:
        w.put<uint8_t>(static_cast<uint8_t>(WireSlot::Fresh));
        put_tensor_ref(w, ref(outs_[oi++]));
        break;
      case OutputSlot::Kind::View:
        w.put<uint8_t>(static_cast<uint8_t>(WireSlot::View));
        put_tensor_ref(w, ref(outs_[oi++]));
        break;
      case OutputSlot::Kind::FreshList:
        w.put<uint8_t>(static_cast<uint8_t>(WireSlot::FreshList));
        w.put<uint32_t>(static_cast<uint32_t>(s.items.size()));
        for (size_t j = 0; j < s.items.size(); ++j) put_tensor_ref(w, ref(outs_[oi++]));
        break;
      case OutputSlot::Kind::DataDependent:
        w.put<uint8_t>(static_cast<uint8_t>(WireSlot::DataDependent));
        ++oi;
        break;
      case OutputSlot::Kind::Mutated:
        w.put<uint8_t>(static_cast<uint8_t>(WireSlot::Mutated));
        w.put<uint32_t>(static_cast<uint32_t>(s.arg));
        break;
      case OutputSlot::Kind::Number:
        w.put<uint8_t>(static_cast<uint8_t>(WireSlot::Number));
        w.put<uint8_t>(static_cast<uint8_t>(s.number_kind));
        break;
    }
  }
  request_ = w.take();
}

void KernelCall::fill() {
  char* base = arena_->base();
  if (layout_opts_.guarded) layout_.fill_guards(base);
  const auto& regions = layout_.regions();
  for (size_t i = 0; i < storages_.size(); ++i)
    if (regions[i].second > 0)
      std::memcpy(base + regions[i].first, storages_[i]->data(), regions[i].second);
  if (layout_opts_.timed)
    for (const auto& [k, r] : out_args_)
      std::memset(base + regions[r].first, static_cast<int>(layout_opts_.seed >> 56) | 1,
                  regions[r].second);
  std::mt19937_64 rng(layout_opts_.poison_seed);
  for (Out& o : outs_) {
    if (o.region == ~size_t{0}) continue;
    const auto [off, bytes] = regions[o.region];
    char* p = base + off;
    if (!layout_opts_.guarded) continue;
    switch (layout_opts_.poison) {
      case PoisonKind::NaN:
        std::memset(p, 0xFF, bytes);
        break;
      case PoisonKind::Huge:
        std::memset(p, 0x7F, bytes);
        break;
      case PoisonKind::Zero:
        std::memset(p, 0, bytes);
        break;
      case PoisonKind::Random:
        for (size_t i = 0; i < bytes; i += 8) {
          const uint64_t r = rng();
          std::memcpy(p + i, &r, std::min<size_t>(8, bytes - i));
        }
        break;
    }
    // The poison as it was, in the output's own layout (for "unwritten" checks).
    o.poison = Tensor::uninitialized_strided(o.spec.shape, o.spec.strides, o.spec.dtype);
    if (bytes > 0) std::memcpy(o.poison.storage()->data(), p, bytes);
  }
}

std::vector<std::pair<uint64_t, uint64_t>> KernelCall::timed_ranges() const {
  std::vector<size_t> regions;
  for (const Out& o : outs_)
    if (o.how == OutHow::AsGiven && o.region != ~size_t{0}) regions.push_back(o.region);
  for (const auto& [k, r] : out_args_) regions.push_back(r);
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (size_t r : regions) {
    const auto [off, bytes] = layout_.regions()[r];
    if (bytes > 0) ranges.push_back({off, bytes});
  }
  return ranges;
}

std::vector<std::pair<size_t, Tensor>> KernelCall::timed_out_arguments() const {
  std::vector<std::pair<size_t, Tensor>> views;
  for (const auto& [k, r] : out_args_) {
    const Tensor& t = args_.at(plan_.slots[k].arg).tensor();
    const auto [off, bytes] = layout_.regions()[r];
    views.push_back({k, Tensor::from_storage(arena_->storage(off, bytes), t.offset(), t.shape(),
                                             t.strides(), t.dtype())});
  }
  return views;
}

void KernelCall::poison_arena_outputs(unsigned char byte) {
  char* base = arena_->base();
  for (const auto& [off, bytes] : timed_ranges()) {
    std::memset(base + off, byte, bytes);
    evict_cache_lines(base + off, bytes);
  }
}

void KernelCall::take_device_outputs(CandidateProcess& host, unsigned char byte) {
  const auto ranges = timed_ranges();
  if (!ranges.empty()) host.timed_outputs(arena_->id(), arena_->size(), ranges, byte);
}

int32_t KernelCall::invoke(CandidateProcess& host, bool refill) {
  if (refill) fill();
  host.count_call();
  // On CUDA the arena travels to the device and back; a repeated timed call finds its inputs
  // on the device still and leaves its outputs there.
  request_[1] = static_cast<char>((host.cuda() && refill ? kCallUpload | kCallDownload : 0) |
                                  (refill ? 0 : kCallRepeat));
  const bool known = host.knows_arena(arena_->id());
  bool data_dependent = false;
  for (const OutputSlot& s : plan_.slots)
    data_dependent = data_dependent || s.kind == OutputSlot::Kind::DataDependent;
  const std::string reply = host.request(request_, known ? -1 : arena_->fd(),
                                         data_dependent ? kMaxReplyBytes : size_t{1} << 20);
  output_text_ = host.take_output();
  parse_reply(reply);
  // The process keeps the arena only when it got as far as the call: after a device error or
  // a failed allocation (mapping it, or its device copy) its descriptor goes again with the
  // next call (a process that has the arena closes the copy).
  if (!known && status_ != kHostOutOfMemory && status_ != kHostDeviceError)
    host.saw_arena(arena_->id());
  if (!refill) return status_;
  copy_back();
  // Fresh outputs leave the arena now, and are looked at again after a moment: a thread the
  // kernel left behind that still writes into them is caught.
  const char* base = arena_->base();
  for (Out& o : outs_) {
    if (o.how != OutHow::AsGiven || o.region == ~size_t{0}) continue;
    const auto [off, bytes] = layout_.regions()[o.region];
    o.copied = Tensor::uninitialized_strided(o.spec.shape, o.spec.strides, o.spec.dtype);
    if (bytes > 0) std::memcpy(o.copied.storage()->data(), base + off, bytes);
  }
  if (status_ == CRUCIBLE_OK) {
    usleep(1000);
    for (const Out& o : outs_) {
      if (o.how != OutHow::AsGiven || o.region == ~size_t{0} || !o.copied.defined()) continue;
      const auto [off, bytes] = layout_.regions()[o.region];
      if (bytes > 0 && std::memcmp(o.copied.storage()->data(), base + off, bytes) != 0) {
        late_write_ = fmt::format(
            "{} changed after the kernel returned (a thread it left behind still writes into "
            "it)",
            describe(o));
        break;
      }
    }
  }
  return status_;
}

void KernelCall::parse_reply(const std::string& reply) {
  try {
    WireReader r(reply);
    status_ = r.get<int32_t>();
    message_ = r.str(kMaxMessageChars, "message");
    changes_ = r.str(kMaxMessageChars, "state changes");
    kernel_ns_ = r.get<uint64_t>();
    if (status_ == kHostBadRequest) {
      kernel_fault("the kernel's process refused the call: " + message_);
    }
    const uint32_t nslots = r.count(kMaxWireValues, "outputs");
    if (status_ == kHostOutOfMemory || status_ == kHostThrew || status_ == kHostDeviceError ||
        status_ == kHostDeviceGuard)
      return;
    if (nslots != plan_.slots.size()) throw WireError("the reply has another number of outputs");
    numbers_.assign(plan_.slots.size(), Value());
    size_t oi = 0;
    for (size_t k = 0; k < plan_.slots.size(); ++k) {
      const OutputSlot& s = plan_.slots[k];
      const auto kind = static_cast<WireSlot>(r.get<uint8_t>());
      if (static_cast<uint8_t>(kind) != static_cast<uint8_t>(s.kind))
        throw WireError("the reply's outputs are of other kinds");
      if (s.kind == OutputSlot::Kind::Number) {
        const int32_t vk = r.get<int32_t>();
        if (vk == CRUCIBLE_FLOAT)
          numbers_[k] = Value(r.get<double>());
        else if (vk == CRUCIBLE_BOOL)
          numbers_[k] = Value(r.get<int64_t>() != 0);
        else if (vk == CRUCIBLE_INT)
          numbers_[k] = Value(r.get<int64_t>());
        else
          kernel_fault(
              fmt::format("output {} is a number, but the kernel set its kind to {}", k, vk));
        continue;
      }
      if (s.kind == OutputSlot::Kind::Mutated) continue;
      const uint32_t n = r.count(kMaxWireValues, "output items");
      const size_t expected = s.kind == OutputSlot::Kind::FreshList ? s.items.size() : 1;
      if (n != expected) throw WireError("the reply has another number of list items");
      for (uint32_t j = 0; j < n; ++j) {
        Out& o = outs_.at(oi++);
        const auto how = static_cast<OutHow>(r.get<uint8_t>());
        switch (how) {
          case OutHow::AsGiven:
            if (s.kind == OutputSlot::Kind::DataDependent) {
              o.how = OutHow::Missing;
              break;
            }
            o.how = how;
            break;
          case OutHow::Missing:
            o.how = how;
            break;
          case OutHow::Changed: {
            o.how = how;
            const bool moved = r.get<uint8_t>() != 0;
            const int64_t at = r.get<int64_t>();
            o.cause = changed_cause(o, moved, at);
            break;
          }
          case OutHow::MadeView: {
            if (s.kind != OutputSlot::Kind::View)
              throw WireError("a view made of a non-view output");
            const uint32_t arg = r.get<uint32_t>();
            const int32_t item = r.get<int32_t>();
            const int64_t offset = r.get<int64_t>();
            Shape sh = r.array<int64_t>(CRUCIBLE_MAX_NDIM, "view shape");
            Shape st = r.array<int64_t>(CRUCIBLE_MAX_NDIM, "view strides");
            if (sh.size() != st.size()) throw WireError("a view with a bad rank");
            if (arg >= args_.size()) throw WireError("a view of no argument");
            const Value& a = args_[arg];
            Tensor base;
            if (item < 0 && a.is_tensor())
              base = a.tensor();
            else if (item >= 0 &&
                     (a.kind() == ValueKind::TensorList || a.kind() == ValueKind::OptTensorList) &&
                     static_cast<size_t>(item) < a.tensors().size())
              base = a.tensors()[static_cast<size_t>(item)];
            if (!base.defined()) throw WireError("a view of no tensor");
            int64_t lo = base.offset() + offset, hi = lo;
            bool empty = false;
            for (size_t d = 0; d < sh.size(); ++d) {
              if (sh[d] < 0) kernel_fault("make_view: negative size");
              if (sh[d] == 0) empty = true;
              if (st[d] > 0) hi += (sh[d] - 1) * st[d];
              if (st[d] < 0) lo += (sh[d] - 1) * st[d];
            }
            const int64_t elems = static_cast<int64_t>(base.storage()->nbytes() / base.itemsize());
            if (!empty && (lo < 0 || hi >= elems))
              kernel_fault(fmt::format(
                  "{}: make_view made a view that reaches outside the base tensor's storage",
                  describe(o)));
            o.how = how;
            o.copied =
                Tensor::from_storage(base.storage(), base.offset() + offset, sh, st, base.dtype());
            break;
          }
          case OutHow::Allocated: {
            if (s.kind != OutputSlot::Kind::DataDependent)
              throw WireError("an allocation for an output crucible allocated");
            const uint8_t dt = r.get<uint8_t>();
            Shape sh = r.array<int64_t>(CRUCIBLE_MAX_NDIM, "allocated shape");
            std::optional<DType> dtype;
            for (DType d : all_dtypes())
              if (static_cast<uint8_t>(d) == dt) dtype = d;
            if (!dtype) throw WireError("an allocation of an unknown dtype");
            int64_t elems = 1;
            for (int64_t x : sh) {
              if (x < 0 || (x > 0 && elems > (int64_t{1} << 40) / x))
                throw WireError("a bad allocated shape");
              elems *= x;
            }
            uint64_t nbytes = 0;
            const char* data = r.bytes(kMaxReplyBytes, &nbytes, "allocated data");
            if (nbytes != static_cast<uint64_t>(elems) * itemsize(*dtype))
              throw WireError("allocated data of the wrong size");
            o.how = how;
            o.copied = Tensor::uninitialized(sh, *dtype);
            if (nbytes > 0) std::memcpy(o.copied.storage()->data(), data, nbytes);
            break;
          }
          default:
            throw WireError("an unknown output state");
        }
      }
    }
    r.expect_done();
  } catch (const WireError& e) {
    kernel_fault(std::string("the kernel's process sent a malformed reply: ") + e.what());
  }
}

std::string KernelCall::device_guard_cause() const {
  // The candidate process names the arena offset of the first changed byte of a device guard
  // page: the region before it is the one the kernel wrote past.
  uint64_t at = 0;
  try {
    at = std::stoull(message_);
  } catch (const std::exception&) {
    kernel_fault("the kernel's process reported a changed device guard page without its place");
  }
  const auto& regions = layout_.regions();
  std::string before;
  for (size_t i = 0; i < regions.size(); ++i)
    if (regions[i].first <= at) before = region_names_[i];
  return before.empty() ? fmt::format(
                              "wrote into device memory before every buffer of the call (arena "
                              "offset {}, a guard page)",
                              at)
                        : fmt::format(
                              "wrote past {} on the device, beyond its guard bytes into the guard "
                              "page after it (arena offset {})",
                              before, at);
}

std::string KernelCall::changed_cause(const Out& o, bool moved, int64_t at) const {
  const std::string what = describe(o);
  if (!moved)
    return fmt::format(
        "the kernel changed the shape, strides, dtype or byte_offset of {} (outputs are "
        "allocated by crucible with their final layout)",
        what);
  const auto& regions = layout_.regions();
  for (size_t i = 0; i < storages_.size() && at >= 0; ++i) {
    const auto [off, bytes] = regions[i];
    if (static_cast<size_t>(at) >= off &&
        static_cast<size_t>(at) < off + std::max<size_t>(bytes, 1))
      return fmt::format(
          "{} points at {} (the kernel replaced the data pointer crucible gave it), but the "
          "schema says {} is a new tensor{}",
          what, region_names_[i], what,
          plan_.slots[o.slot].kind == OutputSlot::Kind::View ? " unless made a view with make_view"
                                                             : "");
  }
  return fmt::format(
      "the kernel replaced the data pointer of {} (crucible allocates outputs: write into them; "
      "data-dependent outputs use alloc_output)",
      what);
}

void KernelCall::copy_back() {
  const char* base = arena_->base();
  const auto& regions = layout_.regions();
  for (size_t i = 0; i < storages_.size(); ++i)
    if (regions[i].second > 0)
      std::memcpy(storages_[i]->data(), base + regions[i].first, regions[i].second);
}

void KernelCall::raise_for_status(int32_t status) const {
  const std::string said =
      output_text_.empty()
          ? ""
          : "; it printed (the kernel's words, not crucible's): «" + output_text_ + "»";
  if (!changes_.empty()) kernel_fault(changes_ + said);
  const std::string m = message_.empty() ? "" : "«" + message_ + "» (the kernel's message)";
  switch (status) {
    case CRUCIBLE_OK:
      return;
    case CRUCIBLE_ERROR:
      op_error(m.empty() ? "the kernel returned CRUCIBLE_ERROR (no message)" : m);
    case CRUCIBLE_UNSUPPORTED:
      unsupported(m.empty() ? "the kernel returned CRUCIBLE_UNSUPPORTED (no message)" : m);
    case CRUCIBLE_INTERNAL:
      kernel_fault("the kernel failed (CRUCIBLE_INTERNAL)" + (m.empty() ? "" : ": " + m) + said);
    case kHostOutOfMemory:
      throw Error(ErrorKind::Memory,
                  "the kernel ran out of memory under the worker's memory limit (std::bad_alloc "
                  "escaped it)");
    case kHostThrew:
      kernel_fault(message_ + said);
    case kHostDeviceError:
      kernel_fault("the device reported an error for the kernel's call (its process is retired): " +
                   message_ + said);
    case kHostDeviceGuard:
      kernel_fault(device_guard_cause() + said);
    default:
      kernel_fault(fmt::format("the kernel returned an unknown status {}{}{}", status,
                               m.empty() ? "" : ": " + m, said));
  }
}

void KernelCall::check(const std::string& when) const {
  if (!changes_.empty()) kernel_fault(changes_ + when);
  if (layout_opts_.guarded) {
    std::string cause = layout_.check_guards(arena_->base(), region_names_);
    if (!cause.empty()) kernel_fault(cause + when);
  }
  for (const Out& o : outs_) {
    if (o.how == OutHow::Changed) kernel_fault(o.cause + when);
    if (o.how == OutHow::Missing)
      kernel_fault(
          fmt::format("the kernel did not allocate {} (its shape depends on the data: call "
                      "alloc_output before writing it){}",
                      describe(o), when));
  }
  if (!late_write_.empty()) kernel_fault(late_write_ + when);
}

Values KernelCall::outputs(bool in_arena) const {
  Values out;
  size_t oi = 0;
  auto tensor_of = [&](const Out& o) {
    if (o.how == OutHow::AsGiven && in_arena) {
      const auto [off, bytes] = layout_.regions()[o.region];
      return Tensor::from_storage(arena_->storage(off, bytes), 0, o.spec.shape, o.spec.strides,
                                  o.spec.dtype);
    }
    return o.copied;
  };
  for (size_t k = 0; k < plan_.slots.size(); ++k) {
    const OutputSlot& s = plan_.slots[k];
    switch (s.kind) {
      case OutputSlot::Kind::Fresh:
      case OutputSlot::Kind::View:
      case OutputSlot::Kind::DataDependent:
        out.emplace_back(tensor_of(outs_.at(oi++)));
        break;
      case OutputSlot::Kind::Mutated:
        out.push_back(args_.at(s.arg));
        break;
      case OutputSlot::Kind::Number:
        out.push_back(numbers_.at(k));
        break;
      case OutputSlot::Kind::FreshList: {
        std::vector<Tensor> ts;
        for (size_t j = 0; j < s.items.size(); ++j) ts.push_back(tensor_of(outs_.at(oi++)));
        out.push_back(Value::tensor_list(std::move(ts)));
        break;
      }
    }
  }
  return out;
}

std::vector<WrittenOutput> KernelCall::written() const {
  std::vector<WrittenOutput> w;
  for (const Out& o : outs_)
    if (o.how == OutHow::AsGiven && o.copied.defined() && o.poison.defined())
      w.push_back({describe(o), o.copied, o.poison, o.slot});
  return w;
}

int32_t KernelCall::ask_supports(CandidateProcess& host, const OpDef& op, const Values& args,
                                 std::string* why) {
  WireWriter w;
  w.put<uint8_t>(static_cast<uint8_t>(HostRequest::Supports));
  write_call_head(w, op, 0, 1, args, {}, {});
  w.put<uint32_t>(0);  // no outputs
  const std::string reply = host.request(w.take());
  host.take_output();
  try {
    WireReader r(reply);
    const int32_t st = r.get<int32_t>();
    std::string m = r.str(kMaxMessageChars, "message");
    if (st == kHostBadRequest)
      kernel_fault("the kernel's process refused the supports query: " + m);
    if (st != CRUCIBLE_OK && why)
      *why = m.empty() ? "the kernel's supports hook declined the call"
                       : "«" + m + "» (the kernel's supports hook)";
    return st;
  } catch (const WireError& e) {
    kernel_fault(std::string("the kernel's process sent a malformed reply: ") + e.what());
  }
}

}  // namespace crucible
