// The candidate process: one op's kernels, called over a shared arena.
#include "backends/plugin/kernel_host.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <map>
#include <new>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "backends/plugin/abi_values.h"
#include "backends/plugin/call_environment.h"
#include "backends/plugin/candidate_protocol.h"
#include "backends/plugin/channel.h"
#include "backends/plugin/cuda_runtime.h"
#include "backends/plugin/shared_arena.h"
#include "crucible/core/error.h"

namespace crucible {

namespace {

struct Mapping {
  char* base = nullptr;
  size_t size = 0;
  // CUDA: the arena's device copy, and the guard pages (never read on the host: they are
  // mapped without access; on the device they hold `fill`, checked after each call).
  char* device = nullptr;
  std::vector<std::pair<uint64_t, uint64_t>> pages;
  uint8_t fill = 0;
};

// A CUDA call of the host itself failed (allocating, copying): the context may hold a sticky
// error left by an earlier kernel, so the call is answered as a device error and the trusted
// side retires the process.
struct DeviceFault : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The arenas this process has mapped, newest last (a decoy and the judged call share one).
class Mappings {
 public:
  Mapping get(uint64_t id, size_t size, int fd,
              const std::vector<std::pair<uint64_t, uint64_t>>& guard_pages) {
    for (auto& [k, m] : maps_)
      if (k == id) {
        if (fd >= 0) ::close(fd);
        if (m.size != size) throw WireError("an arena changed size");
        return m;
      }
    if (fd < 0) throw WireError("a new arena came without its descriptor");
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    if (p == MAP_FAILED) throw std::bad_alloc();
    Mapping m{static_cast<char*>(p), size};
    for (const auto& [off, len] : guard_pages)
      if (off <= size && len <= size - off) {
        mprotect(m.base + off, len, PROT_NONE);
        m.pages.push_back({off, len});
      }
    if (CudaRuntime* rt = CudaRuntime::get()) {
      void* d = nullptr;
      const std::string e = rt->malloc(&d, size, "allocating the device copy of the arena");
      if (!e.empty()) {
        munmap(m.base, m.size);
        throw DeviceFault(e);
      }
      m.device = static_cast<char*>(d);
      m.fill = static_cast<uint8_t>(unpredictable_u64() | 1);
    }
    maps_.emplace_back(id, m);
    while (maps_.size() > 3) {
      munmap(maps_.front().second.base, maps_.front().second.size);
      if (CudaRuntime* rt = CudaRuntime::get()) rt->free(maps_.front().second.device);
      maps_.pop_front();
    }
    return m;
  }

 private:
  std::deque<std::pair<uint64_t, Mapping>> maps_;
};

// One call's C view, built from the request.
class HostCall {
 public:
  HostCall(WireReader& r, const Mapping& m) : m_(m) {
    if (CudaRuntime::get()) {
      device_ = {kDLCUDA, CudaRuntime::get()->device()};
      data_base_ = m_.device;
    } else {
      data_base_ = m_.base;
    }
    op_ = r.str(256, "op");
    seed_ = r.get<uint64_t>();
    threads_ = r.get<int32_t>();
    const uint32_t nargs = r.count(kMaxWireValues, "arguments");
    for (uint32_t i = 0; i < nargs; ++i) args_.push_back(read_value(r, static_cast<int>(i)));
    const uint32_t nslots = r.count(kMaxWireValues, "outputs");
    for (uint32_t k = 0; k < nslots; ++k) {
      const auto kind = static_cast<WireSlot>(r.get<uint8_t>());
      Slot s;
      s.kind = kind;
      crucible_value v{};
      switch (kind) {
        case WireSlot::Fresh:
        case WireSlot::View:
          v.kind = CRUCIBLE_TENSOR;
          v.v.tensor = out_tensor(get_tensor_ref(r), k, -1, &s);
          break;
        case WireSlot::FreshList: {
          const uint32_t n = r.count(kMaxWireValues, "output list");
          auto& l = lists_.emplace_back();
          for (uint32_t j = 0; j < n; ++j)
            l.push_back(out_tensor(get_tensor_ref(r), k, static_cast<int>(j), &s));
          v.kind = CRUCIBLE_TENSOR_LIST;
          v.v.tensors.items = l.data();
          v.v.tensors.size = static_cast<int64_t>(l.size());
          break;
        }
        case WireSlot::DataDependent: {
          DLTensor* d = new_dl();
          d->dtype = to_dl_dtype(DType::Int64);
          outs_[d] = {k, -1, OutHow::Missing};
          s.items.push_back(d);
          v.kind = CRUCIBLE_TENSOR;
          v.v.tensor = d;
          break;
        }
        case WireSlot::Mutated: {
          const uint32_t a = r.get<uint32_t>();
          if (a >= args_.size()) throw WireError("a mutated output names no argument");
          v = args_[a];
          break;
        }
        case WireSlot::Number: {
          const auto nk = static_cast<ValueKind>(r.get<uint8_t>());
          v.kind = nk == ValueKind::Float  ? CRUCIBLE_FLOAT
                   : nk == ValueKind::Bool ? CRUCIBLE_BOOL
                                           : CRUCIBLE_INT;
          break;
        }
        default:
          throw WireError("unknown output kind");
      }
      slots_.push_back(std::move(s));
      couts_.push_back(v);
    }
    r.expect_done();
    error_.assign(2048, '\0');
    call_.abi_version = CRUCIBLE_KERNEL_ABI_VERSION;
    call_.struct_size = sizeof(crucible_call);
    call_.op = op_.c_str();
    call_.args = args_.data();
    call_.num_args = static_cast<int32_t>(args_.size());
    call_.outputs = couts_.data();
    call_.num_outputs = static_cast<int32_t>(couts_.size());
    call_.seed = seed_;
    call_.stream = CudaRuntime::get() ? CudaRuntime::get()->stream() : nullptr;
    call_.num_threads = threads_ > 0 ? threads_ : 1;
    call_.error = error_.data();
    call_.error_size = error_.size();
    call_.alloc_output = &HostCall::alloc_output_cb;
    call_.make_view = &HostCall::make_view_cb;
    call_.crucible_private = this;
  }

  ~HostCall() {
    if (CudaRuntime* rt = CudaRuntime::get())
      for (auto& [d, o] : outs_) rt->free(o.device_data);
  }
  HostCall(const HostCall&) = delete;
  HostCall& operator=(const HostCall&) = delete;

  const std::string& op() const { return op_; }

  // CUDA, after the call's device synchronise: the outputs allocated with alloc_output, copied
  // to the host ("" or the CUDA error).
  std::string download_allocations() {
    CudaRuntime* rt = CudaRuntime::get();
    if (!rt) return "";
    for (auto& [d, o] : outs_) {
      if (!o.device_data) continue;
      std::string e = rt->to_host(o.data.data(), o.device_data, o.data.size(),
                                  "copying an allocated output to the host");
      if (!e.empty()) return e;
    }
    return "";
  }
  crucible_call* call() { return &call_; }
  std::string message() const {
    return std::string(error_.data(), strnlen(error_.data(), error_.size()));
  }

  // The reply's per-output part.
  void write_outputs(WireWriter& w) {
    w.put<uint32_t>(static_cast<uint32_t>(slots_.size()));
    for (size_t k = 0; k < slots_.size(); ++k) {
      const Slot& s = slots_[k];
      w.put<uint8_t>(static_cast<uint8_t>(s.kind));
      if (s.kind == WireSlot::Number) {
        const crucible_value& v = couts_[k];
        w.put<int32_t>(v.kind);
        if (v.kind == CRUCIBLE_FLOAT)
          w.put<double>(v.v.f);
        else if (v.kind == CRUCIBLE_BOOL)
          w.put<int64_t>(v.v.b);
        else
          w.put<int64_t>(v.v.i);
        continue;
      }
      if (s.kind == WireSlot::Mutated) continue;
      w.put<uint32_t>(static_cast<uint32_t>(s.items.size()));
      for (DLTensor* d : s.items) write_out(w, d);
    }
  }

 private:
  struct Slot {
    WireSlot kind = WireSlot::Fresh;
    std::vector<DLTensor*> items;
  };
  struct Out {
    uint32_t slot = 0;
    int item = -1;
    OutHow how = OutHow::AsGiven;
    DLTensor expected{};
    int64_t expected_shape[CRUCIBLE_MAX_NDIM] = {};
    int64_t expected_strides[CRUCIBLE_MAX_NDIM] = {};
    // MadeView
    uint32_t view_arg = 0;
    int view_item = -1;
    int64_t view_offset = 0;
    // Allocated
    std::vector<char> data;
    void* device_data = nullptr;  // CUDA: the device allocation, copied into `data` after it
  };
  struct DL {
    DLTensor dl{};
    int64_t shape[CRUCIBLE_MAX_NDIM] = {};
    int64_t strides[CRUCIBLE_MAX_NDIM] = {};
  };

  DLTensor* new_dl() {
    DL& d = dls_.emplace_back();
    d.dl.device = device_;
    d.dl.shape = d.shape;
    d.dl.strides = d.strides;
    return &d.dl;
  }

  DLTensor* tensor(const TensorRef& t) {
    if (t.shape.size() > CRUCIBLE_MAX_NDIM || t.shape.size() != t.strides.size())
      throw WireError("a tensor with a bad rank");
    DLTensor* d = new_dl();
    d->ndim = static_cast<int32_t>(t.shape.size());
    d->dtype = to_dl_dtype(static_cast<DType>(t.dtype));
    for (size_t i = 0; i < t.shape.size(); ++i) {
      d->shape[i] = t.shape[i];
      d->strides[i] = t.strides[i];
    }
    if (t.offset == kNoData) {
      d->data = nullptr;
    } else {
      if (t.offset > m_.size) throw WireError("a tensor outside the arena");
      d->data = data_base_ + t.offset;
    }
    return d;
  }

  DLTensor* out_tensor(const TensorRef& t, uint32_t slot, int item, Slot* s) {
    DLTensor* d = tensor(t);
    Out& o = outs_[d];
    o.slot = slot;
    o.item = item;
    o.expected = *d;
    std::memcpy(o.expected_shape, d->shape, sizeof o.expected_shape);
    std::memcpy(o.expected_strides, d->strides, sizeof o.expected_strides);
    s->items.push_back(d);
    return d;
  }

  crucible_value read_value(WireReader& r, int arg) {
    crucible_value c{};
    const auto kind = static_cast<ValueKind>(r.get<uint8_t>());
    switch (kind) {
      case ValueKind::None:
        c.kind = CRUCIBLE_NONE;
        break;
      case ValueKind::Tensor:
        c.kind = CRUCIBLE_TENSOR;
        c.v.tensor = tensor(get_tensor_ref(r));
        arg_of_[c.v.tensor] = {arg, -1};
        break;
      case ValueKind::TensorList:
      case ValueKind::OptTensorList: {
        c.kind = kind == ValueKind::TensorList ? CRUCIBLE_TENSOR_LIST : CRUCIBLE_OPT_TENSOR_LIST;
        const uint32_t n = r.count(kMaxWireValues, "tensor list");
        auto& l = lists_.emplace_back();
        for (uint32_t j = 0; j < n; ++j) {
          if (r.get<uint8_t>() == 0) {
            l.push_back(nullptr);
            continue;
          }
          DLTensor* d = tensor(get_tensor_ref(r));
          arg_of_[d] = {arg, static_cast<int>(j)};
          l.push_back(d);
        }
        c.v.tensors.items = l.data();
        c.v.tensors.size = static_cast<int64_t>(l.size());
        break;
      }
      case ValueKind::Int:
        c.kind = CRUCIBLE_INT;
        c.v.i = r.get<int64_t>();
        break;
      case ValueKind::Float:
        c.kind = CRUCIBLE_FLOAT;
        c.v.f = r.get<double>();
        break;
      case ValueKind::Bool:
        c.kind = CRUCIBLE_BOOL;
        c.v.b = r.get<uint8_t>() ? 1 : 0;
        break;
      case ValueKind::String:
        c.kind = CRUCIBLE_STRING;
        c.v.s = strings_.emplace_back(r.str(kMaxWireString, "string")).c_str();
        break;
      case ValueKind::IntList: {
        c.kind = CRUCIBLE_INT_LIST;
        auto& v = ints_.emplace_back(r.array<int64_t>(kMaxWireValues, "int list"));
        c.v.ints.items = v.data();
        c.v.ints.size = static_cast<int64_t>(v.size());
        break;
      }
      case ValueKind::FloatList: {
        c.kind = CRUCIBLE_FLOAT_LIST;
        auto& v = floats_.emplace_back(r.array<double>(kMaxWireValues, "float list"));
        c.v.floats.items = v.data();
        c.v.floats.size = static_cast<int64_t>(v.size());
        break;
      }
      case ValueKind::BoolList: {
        c.kind = CRUCIBLE_BOOL_LIST;
        auto& v = bools_.emplace_back(r.array<uint8_t>(kMaxWireValues, "bool list"));
        c.v.bools.items = v.data();
        c.v.bools.size = static_cast<int64_t>(v.size());
        break;
      }
      case ValueKind::DType:
        c.kind = CRUCIBLE_DTYPE;
        c.v.dtype = to_dl_dtype(static_cast<DType>(r.get<uint8_t>()));
        break;
      case ValueKind::Device:
        c.kind = CRUCIBLE_DEVICE;
        c.v.device.device_type = static_cast<DLDeviceType>(r.get<int32_t>());
        c.v.device.device_id = r.get<int32_t>();
        // A kernel on CUDA makes its tensors where its outputs live: a call's device (a traced
        // 'cpu', 'cuda:1') is this process's device, as the aten backend runs aten:cuda calls.
        if (const CudaRuntime* rt = CudaRuntime::get())
          c.v.device = DLDevice{kDLCUDA, static_cast<int32_t>(rt->device())};
        break;
      case ValueKind::Layout:
        c.kind = CRUCIBLE_LAYOUT;
        c.v.layout = r.get<int32_t>();
        break;
      case ValueKind::MemoryFormat:
        c.kind = CRUCIBLE_MEMORY_FORMAT;
        c.v.memory_format = r.get<int32_t>();
        break;
      default:
        throw WireError("unknown value kind");
    }
    return c;
  }

  void write_out(WireWriter& w, DLTensor* d) {
    Out& o = outs_.at(d);
    if (o.how == OutHow::AsGiven) {
      bool same =
          d->data == o.expected.data && d->ndim == o.expected.ndim &&
          d->byte_offset == o.expected.byte_offset && d->dtype.code == o.expected.dtype.code &&
          d->dtype.bits == o.expected.dtype.bits && d->dtype.lanes == o.expected.dtype.lanes &&
          d->shape == o.expected.shape && d->strides == o.expected.strides;
      if (same)
        for (int i = 0; i < d->ndim && i < CRUCIBLE_MAX_NDIM; ++i)
          if (d->shape[i] != o.expected_shape[i] || d->strides[i] != o.expected_strides[i])
            same = false;
      if (!same) o.how = OutHow::Changed;
    }
    w.put<uint8_t>(static_cast<uint8_t>(o.how));
    switch (o.how) {
      case OutHow::AsGiven:
      case OutHow::Missing:
        break;
      case OutHow::Changed:
        write_changed(w, o, *d);
        break;
      case OutHow::MadeView: {
        w.put<uint32_t>(o.view_arg);
        w.put<int32_t>(o.view_item);
        w.put<int64_t>(o.view_offset);
        std::vector<int64_t> sh(d->shape, d->shape + d->ndim), st(d->strides, d->strides + d->ndim);
        w.array(sh);
        w.array(st);
        break;
      }
      case OutHow::Allocated: {
        w.put<uint8_t>(static_cast<uint8_t>(*from_dl_dtype(d->dtype)));
        std::vector<int64_t> sh(d->shape, d->shape + d->ndim);
        w.array(sh);
        w.bytes(o.data.data(), o.data.size());
        break;
      }
    }
  }

  // Changed: whether the data pointer moved, and where it points now (an arena offset, or -1).
  void write_changed(WireWriter& w, const Out& o, const DLTensor& now) const {
    const bool moved = now.data != o.expected.data;
    w.put<uint8_t>(moved ? 1 : 0);
    const char* p = static_cast<const char*>(now.data);
    int64_t off = -1;
    if (moved && p && p >= data_base_ && p < data_base_ + m_.size) off = p - data_base_;
    w.put<int64_t>(off);
  }

  int32_t fail_cb(const std::string& msg, int32_t status = CRUCIBLE_ERROR) {
    std::snprintf(error_.data(), error_.size(), "%s", msg.c_str());
    return status;
  }

  static int32_t alloc_output_cb(crucible_call* c, DLTensor* out, int32_t ndim,
                                 const int64_t* shape, DLDataType dtype) {
    auto* self = static_cast<HostCall*>(c->crucible_private);
    auto it = self->outs_.find(out);
    if (it == self->outs_.end() || (it->second.how != OutHow::Missing))
      return self->fail_cb(it == self->outs_.end()
                               ? "alloc_output: not a data-dependent output of this call"
                               : "alloc_output: output already allocated");
    if (ndim < 0 || ndim > CRUCIBLE_MAX_NDIM || (ndim > 0 && !shape))
      return self->fail_cb(fmt::format("alloc_output: bad ndim {}", ndim));
    auto dt = from_dl_dtype(dtype);
    if (!dt) return self->fail_cb("alloc_output: unknown dtype");
    int64_t n = 1;
    for (int i = 0; i < ndim; ++i) {
      if (shape[i] < 0) return self->fail_cb("alloc_output: negative size");
      if (shape[i] > 0 && n > (int64_t{1} << 40) / shape[i])
        return self->fail_cb("alloc_output: too many elements", CRUCIBLE_INTERNAL);
      n *= shape[i];
    }
    Out& o = it->second;
    try {
      o.data.assign(static_cast<size_t>(n) * itemsize(*dt), 0);
    } catch (const std::bad_alloc&) {
      return self->fail_cb("alloc_output: out of memory", CRUCIBLE_INTERNAL);
    }
    out->data = o.data.data();
    if (CudaRuntime* rt = CudaRuntime::get()) {
      const std::string e = rt->malloc(&o.device_data, o.data.size(), "alloc_output");
      if (e.empty()) rt->memset(o.device_data, 0, o.data.size(), "alloc_output");
      if (!e.empty()) return self->fail_cb(e, CRUCIBLE_INTERNAL);
      out->data = o.device_data;
    }
    out->ndim = ndim;
    out->dtype = dtype;
    out->byte_offset = 0;
    int64_t st = 1;
    for (int i = ndim - 1; i >= 0; --i) {
      out->shape[i] = shape[i];
      out->strides[i] = st;
      st *= std::max<int64_t>(1, shape[i]);
    }
    o.how = OutHow::Allocated;
    return CRUCIBLE_OK;
  }

  static int32_t make_view_cb(crucible_call* c, DLTensor* out, const DLTensor* base, int32_t ndim,
                              const int64_t* shape, const int64_t* strides, int64_t offset) {
    auto* self = static_cast<HostCall*>(c->crucible_private);
    auto it = self->outs_.find(out);
    if (it == self->outs_.end() || self->slots_[it->second.slot].kind != WireSlot::View)
      return self->fail_cb(
          "make_view: not a view output (the schema gives this output no alias annotation)");
    auto a = self->arg_of_.find(base);
    if (a == self->arg_of_.end())
      return self->fail_cb("make_view: base is not one of the call's input tensors");
    if (ndim < 0 || ndim > CRUCIBLE_MAX_NDIM || (ndim > 0 && (!shape || !strides)))
      return self->fail_cb(fmt::format("make_view: bad ndim {}", ndim));
    Out& o = it->second;
    o.how = OutHow::MadeView;
    o.view_arg = static_cast<uint32_t>(a->second.first);
    o.view_item = a->second.second;
    o.view_offset = offset;
    out->data =
        static_cast<char*>(base->data) + offset * static_cast<int64_t>(base->dtype.bits / 8);
    out->ndim = ndim;
    out->dtype = base->dtype;
    for (int i = 0; i < ndim; ++i) {
      out->shape[i] = shape[i];
      out->strides[i] = strides[i];
    }
    return CRUCIBLE_OK;
  }

  Mapping m_;
  char* data_base_ = nullptr;  // where the arena's tensors are for the kernel
  DLDevice device_{kDLCPU, 0};
  std::string op_;
  uint64_t seed_ = 0;
  int32_t threads_ = 1;
  std::deque<DL> dls_;
  std::deque<std::vector<DLTensor*>> lists_;
  std::deque<std::string> strings_;
  std::deque<std::vector<int64_t>> ints_;
  std::deque<std::vector<double>> floats_;
  std::deque<std::vector<uint8_t>> bools_;
  std::vector<crucible_value> args_, couts_;
  std::vector<Slot> slots_;
  std::map<const DLTensor*, Out> outs_;
  std::map<const DLTensor*, std::pair<int, int>> arg_of_;
  std::vector<char> error_;
  crucible_call call_{};
};

[[noreturn]] void quit() { _exit(0); }

// CUDA: the arena's bytes outside the guard pages, in order ([offset, length)).
std::vector<std::pair<size_t, size_t>> open_ranges(const Mapping& m) {
  std::vector<std::pair<size_t, size_t>> out;
  size_t at = 0;
  auto pages = m.pages;
  std::sort(pages.begin(), pages.end());
  for (const auto& [off, len] : pages) {
    if (off > at) out.push_back({at, off - at});
    at = std::max<size_t>(at, off + len);
  }
  if (at < m.size) out.push_back({at, m.size - at});
  return out;
}

// CUDA: the arena to the device; the device's guard pages get the mapping's fill byte.
std::string upload(CudaRuntime& rt, const Mapping& m) {
  for (const auto& [off, len] : open_ranges(m)) {
    std::string e =
        rt.to_device(m.device + off, m.base + off, len, "copying the inputs to the device");
    if (!e.empty()) return e;
  }
  for (const auto& [off, len] : m.pages) {
    std::string e = rt.memset(m.device + off, m.fill, len, "filling the device's guard pages");
    if (!e.empty()) return e;
  }
  return "";
}

// CUDA: the device's arena back into the shared arena (the trusted side checks guard bytes,
// inputs and outputs there, as on the CPU); a changed device guard page is reported in *guard.
std::string download(CudaRuntime& rt, const Mapping& m, std::string* guard) {
  for (const auto& [off, len] : open_ranges(m)) {
    std::string e =
        rt.to_host(m.base + off, m.device + off, len, "copying the outputs to the host");
    if (!e.empty()) return e;
  }
  std::vector<uint8_t> page;
  for (const auto& [off, len] : m.pages) {
    page.resize(len);
    std::string e =
        rt.to_host(page.data(), m.device + off, len, "reading the device's guard pages");
    if (!e.empty()) return e;
    for (size_t i = 0; i < len; ++i)
      if (page[i] != m.fill) {
        *guard = fmt::format("{}", off + i);
        return "";
      }
  }
  return "";
}

bool g_call_is_repeat = false;  // kernel_call_is_repeat()

void reply(int sock, uint32_t tag, const std::string& payload) {
  if (!send_frame(sock, tag, payload)) quit();
}

}  // namespace

bool kernel_call_is_repeat() { return g_call_is_repeat; }

void run_kernel_host(int sock, uint32_t tag, const KernelHostSetup& setup) {
  // CUDA starts before any kernel code exists in the process. Its driver opens local sockets
  // while it starts (it binds one; refusing that fails cudaFree(0) with error 304, seen on an
  // H100 with driver 580), which the seccomp filter refuses: so a sandboxed CUDA candidate
  // enters the sandbox here, starting CUDA between Landlock's rules (which its threads inherit)
  // and the filter (synchronised to every thread, CUDA's included). No socket can be opened
  // after. Other candidates enter the sandbox when asked to load.
  std::string cuda_error, sandbox_error;
  bool sandboxed = false, prepared = false;
  if (setup.cuda_device >= 0) {
    // What the candidate needs from the sandbox (a Python kernel's programs) is decided before
    // it is entered here.
    if (setup.prepare) setup.prepare(setup.op);
    prepared = true;
    auto start = [&] {
      cuda_error = CudaRuntime::start(setup.cuda_device);
      return std::string();
    };
    if (setup.enter_sandbox) {
      sandbox_error = setup.enter_sandbox(start);
      sandboxed = true;
    } else {
      start();
    }
  }
  CudaRuntime* rt = CudaRuntime::get();

  // Before anything of the candidate is loaded: the trusted side measures the bare round trip
  // (on CUDA with an empty device synchronise) and the event time of an empty timed region.
  std::string msg;
  int fd = -1;
  for (;;) {
    if (recv_frame(sock, tag, 1 << 20, &msg, &fd) != FrameStatus::Ok) quit();
    if (fd >= 0) ::close(fd);
    if (msg.size() == 1 && static_cast<HostRequest>(msg[0]) == HostRequest::Ping) {
      if (rt) rt->synchronize("ping");
      reply(sock, tag, msg);
      continue;
    }
    if (msg.size() == 1 && static_cast<HostRequest>(msg[0]) == HostRequest::EmptySample) {
      uint64_t ns = 0;
      if (rt && rt->timed_start().empty()) rt->timed_stop(&ns);
      WireWriter w;
      w.put<uint64_t>(ns);
      reply(sock, tag, w.take());
      continue;
    }
    break;  // "load"
  }

  WireWriter ready;
  std::map<std::string, LoadedKernel> kernels;
  std::string load_error, load_changes;
  uint8_t load_kind = 0;
  if (!cuda_error.empty()) {
    load_error = "cannot start CUDA in the kernel's process: " + cuda_error;
    load_kind = static_cast<uint8_t>(ErrorKind::Usage);
  }
  if (setup.prepare && !prepared && load_error.empty()) setup.prepare(setup.op);
  if (setup.enter_sandbox && load_error.empty()) {
    std::string why = sandboxed ? sandbox_error : setup.enter_sandbox({});
    if (!why.empty()) {
      load_error = "cannot enter the sandbox: " + why;
      load_kind = static_cast<uint8_t>(ErrorKind::Usage);
    }
  }
  if (load_error.empty()) {
    reset_floating_point_environment();
    const CallEnvironment before = capture_call_environment();
    try {
      for (LoadedKernel& k : setup.loader(setup.op)) kernels.emplace(k.op, std::move(k));
    } catch (const Error& e) {
      load_error = e.what();
      load_kind = static_cast<uint8_t>(e.kind());
    } catch (const std::exception& e) {
      load_error = std::string("loading threw: ") + e.what();
      load_kind = static_cast<uint8_t>(ErrorKind::Input);
    }
    load_changes = call_environment_changes(before, capture_call_environment());
  }
  ready.put<uint8_t>(load_kind);
  ready.str(load_error.substr(0, kMaxMessageChars));
  ready.str(load_changes);
  ready.put<uint32_t>(static_cast<uint32_t>(kernels.size()));
  for (const auto& [op, k] : kernels) {
    ready.str(op);
    ready.put<uint8_t>(k.supports ? 1 : 0);
  }
  reply(sock, tag, ready.take());

  Mappings maps;
  for (;;) {
    fd = -1;
    if (recv_frame(sock, tag, 64 << 20, &msg, &fd) != FrameStatus::Ok) quit();
    WireWriter w;
    try {
      WireReader r(msg);
      const auto type = static_cast<HostRequest>(r.get<uint8_t>());
      if (type == HostRequest::Ping) {
        w.put<uint8_t>(1);
      } else if (type == HostRequest::FlushL2) {
        const std::string e = rt ? rt->flush_l2() : "";
        w.put<uint8_t>(e.empty() ? 1 : 0);
        w.str(e.substr(0, kMaxMessageChars));
      } else if (type == HostRequest::TimedOutputs) {
        const uint64_t id = r.get<uint64_t>();
        const uint64_t size = r.get<uint64_t>();
        const uint8_t poison = r.get<uint8_t>();
        std::vector<std::pair<uint64_t, uint64_t>> ranges;
        const uint32_t nr = r.count(kMaxWireValues, "output ranges");
        for (uint32_t i = 0; i < nr; ++i) {
          const uint64_t off = r.get<uint64_t>();
          ranges.push_back({off, r.get<uint64_t>()});
        }
        r.expect_done();
        if (!rt) throw WireError("timed outputs asked of a process without CUDA");
        const Mapping m = maps.get(id, size, -1, {});
        for (const auto& [off, len] : ranges) {
          bool clear = off <= m.size && len <= m.size - off;
          for (const auto& [p, plen] : m.pages)
            clear = clear && (off + len <= p || p + plen <= off);
          if (!clear) throw WireError("an output range outside the arena's open memory");
        }
        std::string e;
        for (const auto& [off, len] : ranges)
          if (e.empty())
            e = rt->to_host(m.base + off, m.device + off, len,
                            "copying a timed call's outputs to the host");
        for (const auto& [off, len] : ranges)
          if (e.empty())
            e = rt->memset(m.device + off, poison, len,
                           "poisoning the outputs between timed calls");
        if (e.empty()) e = rt->synchronize("after poisoning the outputs between timed calls");
        w.put<uint8_t>(e.empty() ? 1 : 0);
        w.str(e.substr(0, kMaxMessageChars));
      } else if (type == HostRequest::Supports) {
        Mapping none;
        HostCall hc(r, none);  // the arguments, without data and without outputs
        auto it = kernels.find(hc.op());
        if (it == kernels.end() || !it->second.supports)
          throw WireError("no supports hook for " + hc.op());
        crucible_call* c = hc.call();
        c->outputs = nullptr;
        c->num_outputs = 0;
        int32_t st = it->second.supports(c);
        w.put<int32_t>(st);
        w.str(hc.message().substr(0, kMaxMessageChars));
      } else if (type == HostRequest::Call) {
        const uint8_t flags = r.get<uint8_t>();
        const uint64_t id = r.get<uint64_t>();
        const uint64_t size = r.get<uint64_t>();
        std::vector<std::pair<uint64_t, uint64_t>> pages;
        const uint32_t np = r.count(1 << 20, "guard pages");
        for (uint32_t i = 0; i < np; ++i) {
          const uint64_t off = r.get<uint64_t>();
          pages.push_back({off, r.get<uint64_t>()});
        }
        Mapping m = maps.get(id, size, fd, pages);
        fd = -1;
        HostCall hc(r, m);
        auto it = kernels.find(hc.op());
        if (it == kernels.end()) throw WireError("no kernel for " + hc.op());
        // The state the call must leave as it is, captured before the device's timed region
        // opens: on a GPU the events time the host's work between them too (reading the
        // process's threads took tens of microseconds of every timed call).
        if (setup.call_started) setup.call_started();
        reset_floating_point_environment();
        const bool repeat = (flags & kCallRepeat) != 0;
        const CallEnvironment before = capture_call_environment(repeat);
        std::string device_error;
        if (rt && (flags & kCallUpload)) device_error = upload(*rt, m);
        if (rt && device_error.empty()) device_error = rt->timed_start();
        if (!device_error.empty()) {
          w.put<int32_t>(kHostDeviceError);
          w.str(device_error.substr(0, kMaxMessageChars));
          w.str("");
          w.put<uint64_t>(0);
          w.put<uint32_t>(0);
          reply(sock, tag, w.take());
          continue;
        }
        int32_t status;
        std::string message;
        const auto t0 = std::chrono::steady_clock::now();
        g_call_is_repeat = repeat;
        try {
          status = it->second.fn(hc.call());
          message = hc.message();
        } catch (const std::bad_alloc&) {
          status = kHostOutOfMemory;
          message = "std::bad_alloc escaped the kernel";
        } catch (const std::exception& e) {
          status = kHostThrew;
          message = std::string("a C++ exception escaped the kernel: ") + e.what();
        } catch (...) {
          status = kHostThrew;
          message = "an exception escaped the kernel";
        }
        g_call_is_repeat = false;
        uint64_t ns = 0;
        std::string guard;
        if (rt) {
          // Every stream's work is finished and judged: the whole device is synchronised.
          device_error = rt->timed_stop(&ns);
          if (device_error.empty() && (flags & kCallDownload)) {
            device_error = download(*rt, m, &guard);
            if (device_error.empty()) device_error = hc.download_allocations();
          }
        } else {
          ns = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                         std::chrono::steady_clock::now() - t0)
                                         .count());
        }
        const std::string changes =
            call_environment_changes(before, capture_call_environment(repeat));
        if (!device_error.empty() || !guard.empty()) {
          // The context may be broken: the trusted side retires this process.
          w.put<int32_t>(device_error.empty() ? kHostDeviceGuard : kHostDeviceError);
          w.str((device_error.empty() ? guard : device_error).substr(0, kMaxMessageChars));
          w.str(changes);
          w.put<uint64_t>(ns);
          w.put<uint32_t>(0);
        } else {
          w.put<int32_t>(status);
          w.str(message.substr(0, kMaxMessageChars));
          w.str(changes);
          w.put<uint64_t>(ns);
          hc.write_outputs(w);
        }
      } else {
        throw WireError("unknown request");
      }
    } catch (const DeviceFault& e) {
      w = WireWriter();
      w.put<int32_t>(kHostDeviceError);
      w.str(e.what());
      w.str("");
      w.put<uint64_t>(0);
      w.put<uint32_t>(0);
    } catch (const std::bad_alloc&) {
      w = WireWriter();
      w.put<int32_t>(kHostOutOfMemory);
      w.str("out of memory while setting up the call");
      w.str("");
      w.put<uint64_t>(0);
      w.put<uint32_t>(0);
    } catch (const std::exception& e) {
      w = WireWriter();
      w.put<int32_t>(kHostBadRequest);
      w.str(e.what());
      w.str("");
      w.put<uint64_t>(0);
      w.put<uint32_t>(0);
    }
    if (fd >= 0) ::close(fd);
    reply(sock, tag, w.take());
  }
}

}  // namespace crucible
