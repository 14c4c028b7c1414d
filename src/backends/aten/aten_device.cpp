// Device support of the aten backend (seeding, CUDA memory, transfers, synchronisation, timing).
#include "backends/aten/aten_device.h"

#include <sys/wait.h>
#include <unistd.h>

#include <ATen/Context.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>
#include <c10/core/Event.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <chrono>
#include <mutex>

#include "backends/aten/aten_convert.h"
#include "crucible/core/error.h"

// c10::Event can measure the time between two events from PyTorch 2.4 on; earlier versions time
// device work with a host clock around a device synchronisation.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
#define CRUCIBLE_ATEN_EVENT_TIMING 1
#else
#define CRUCIBLE_ATEN_EVENT_TIMING 0
#endif

namespace crucible::aten {

void seed_generator(Device d, uint64_t seed) {
  at::Generator gen = at::globalContext().defaultGenerator(c10_device(d));
  std::lock_guard<std::mutex> lock(gen.mutex());
  gen.set_current_seed(seed);
}

namespace {

// The number of CUDA devices libtorch sees, asked in a child process (-1: the child failed).
int probe_cuda_devices() {
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    int n = 0;
    try {
      n = at::hasCUDA() ? static_cast<int>(at::getNumGPUs()) : 0;
    } catch (...) {
      _exit(255);
    }
    _exit(n > 200 ? 200 : n);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) == 255)
    return -1;
  return WEXITSTATUS(status);
}

}  // namespace

void check_cuda_device(const std::string& spec, Device d) {
  static std::once_flag once;
  static int devices = -1;
  std::call_once(once, [] { devices = probe_cuda_devices(); });
  if (devices <= 0)
    usage_error("--backend " + spec + ": this libtorch (" TORCH_VERSION ") " +
                (devices < 0 ? std::string("could not initialise CUDA")
                             : std::string("has no CUDA, or sees no CUDA device")) +
                "; build crucible against a CUDA-enabled libtorch (docs/aten-backend.md) and run "
                "it where a GPU is visible, or use --backend aten for the CPU");
  if (d.index < 0 || d.index >= devices)
    usage_error("--backend " + spec + ": there is no CUDA device " + std::to_string(d.index) +
                " (libtorch sees " + std::to_string(devices) + ")");
}

Tensor device_allocate(Device d, const Shape& shape, const Shape& strides, DType dtype) {
  auto st = to_scalar_type(dtype);
  if (!st) unsupported("libtorch " TORCH_VERSION " has no dtype " + std::string(dtype_code(dtype)));
  at::Tensor t = at::empty_strided(shape, strides, at::TensorOptions(*st).device(c10_device(d)));
  return Tensor::from_storage(wrap_storage(t.storage()), t.storage_offset(), shape, strides, dtype);
}

Tensor copy_storage(const Tensor& t, Device target) {
  at::Tensor src = storage_bytes(t.storage());
  std::shared_ptr<Storage> dst;
  if (target.is_cpu()) {
    dst = Storage::allocate_cpu(t.storage()->nbytes());
    storage_bytes(dst).copy_(src);
  } else {
    at::Tensor bytes =
        at::empty({static_cast<int64_t>(t.storage()->nbytes())},
                  at::TensorOptions(c10::ScalarType::Byte).device(c10_device(target)));
    bytes.copy_(src);
    dst = wrap_storage(bytes.storage());
  }
  return Tensor::from_storage(dst, t.offset(), t.shape(), t.strides(), t.dtype());
}

void device_synchronize(Device d) {
  at::detail::getCUDAHooks().deviceSynchronize(static_cast<int64_t>(d.index));
}

bool device_context_broken(Device d) {
  if (d.is_cpu()) return false;
  // Errors that leave the context usable are cleared when they are reported; a synchronisation
  // fails again only on a sticky one.
  try {
    device_synchronize(d);
    return false;
  } catch (...) {
    return true;
  }
}

namespace {

#if CRUCIBLE_ATEN_EVENT_TIMING
// Device events on the current stream: the time the device spent between start and stop.
class EventTimer final : public DeviceTimer {
 public:
  explicit EventTimer(Device d)
      : device_(c10_device(d)),
        start_(c10::DeviceType::CUDA, c10::EventFlag::BACKEND_DEFAULT),
        stop_(c10::DeviceType::CUDA, c10::EventFlag::BACKEND_DEFAULT) {}
  void start() override { start_.record(stream()); }
  void stop() override { stop_.record(stream()); }
  double elapsed_seconds() override {
    stop_.synchronize();
    return start_.elapsedTime(stop_) * 1e-3;
  }

 private:
  c10::Stream stream() const {
    return c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA)->getStream(device_);
  }
  c10::Device device_;
  c10::Event start_, stop_;
};
#else
// A host clock around a device synchronisation (this libtorch has no event timing API).
class SyncTimer final : public DeviceTimer {
 public:
  explicit SyncTimer(Device d) : device_(d) {}
  void start() override {
    device_synchronize(device_);
    t0_ = std::chrono::steady_clock::now();
  }
  void stop() override {
    device_synchronize(device_);
    t1_ = std::chrono::steady_clock::now();
  }
  double elapsed_seconds() override { return std::chrono::duration<double>(t1_ - t0_).count(); }

 private:
  Device device_;
  std::chrono::steady_clock::time_point t0_, t1_;
};
#endif

}  // namespace

std::unique_ptr<DeviceTimer> make_device_timer(Device d) {
#if CRUCIBLE_ATEN_EVENT_TIMING
  return std::make_unique<EventTimer>(d);
#else
  return std::make_unique<SyncTimer>(d);
#endif
}

}  // namespace crucible::aten
