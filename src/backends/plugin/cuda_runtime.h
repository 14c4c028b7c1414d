// The CUDA runtime as a candidate process uses it: loaded with dlopen (crucible builds and runs
// without CUDA; nothing links against it), started before the process enters the sandbox, and
// never in the process that keeps a run's results (only candidate processes call start()).
//
// The CUDA driver opens files and a local socket while it starts; the sandbox refuses both, so
// the context is created (cudaSetDevice + cudaFree(0)) before the sandbox is entered. After
// that, allocations, copies, launches, events and synchronisation go through the device's
// ioctls on descriptors already open.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace crucible {

class CudaRuntime {
 public:
  // The runtime of this process, started on `device` (an index among the visible devices):
  // loads libcudart ($CRUCIBLE_CUDART, else libcudart.so.13/.12/.11/libcudart.so on the loader's
  // path and in $CUDA_HOME/lib64 and /usr/local/cuda/lib64), creates the device's context, a
  // stream, two events and the L2 flush buffer. Returns "" on success, else why not (no GPU
  // visible, no runtime, an error of the driver) in words a user can act on.
  static std::string start(int device);
  // The runtime start() started, or nullptr.
  static CudaRuntime* get();

  int device() const { return device_; }
  void* stream() const { return stream_; }
  size_t l2_bytes() const { return l2_bytes_; }

  // Each returns "" or the CUDA error's name and text, prefixed with `what`.
  std::string malloc(void** p, size_t bytes, const char* what);
  void free(void* p);
  std::string to_device(void* dst, const void* src, size_t bytes, const char* what);
  std::string to_host(void* dst, const void* src, size_t bytes, const char* what);
  std::string memset(void* dst, int value, size_t bytes, const char* what);
  // cudaDeviceSynchronize, then the sticky or pending error of the context, if any.
  std::string synchronize(const char* what);
  // Writes the L2 flush buffer (larger than the L2) and waits for it.
  std::string flush_l2();
  // The timed region: start() records the start event after a device synchronise; stop()
  // synchronises the device, records the stop event, and returns the elapsed nanoseconds in
  // *ns.
  std::string timed_start();
  std::string timed_stop(uint64_t* ns);

 private:
  CudaRuntime() = default;
  std::string check(int code, const char* what) const;
  struct Api;
  Api* api_ = nullptr;
  int device_ = 0;
  void* stream_ = nullptr;
  void* ev_start_ = nullptr;
  void* ev_stop_ = nullptr;
  void* flush_ = nullptr;
  size_t l2_bytes_ = 0;
  size_t flush_bytes_ = 0;
  uint8_t flush_value_ = 0;
};

}  // namespace crucible
