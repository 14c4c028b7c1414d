// The CUDA runtime through dlopen, for candidate processes.
#include "backends/plugin/cuda_runtime.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include <fmt/format.h>

namespace crucible {

namespace {

// The runtime API's values this file uses (cuda_runtime_api.h, stable across releases).
constexpr int kCudaSuccess = 0;
constexpr int kMemcpyHostToDevice = 1;
constexpr int kMemcpyDeviceToHost = 2;
constexpr int kDevAttrL2CacheSize = 89;
constexpr unsigned kStreamNonBlocking = 1;

CudaRuntime* g_runtime = nullptr;

}  // namespace

struct CudaRuntime::Api {
  void* lib = nullptr;
  std::string path;
  int (*get_device_count)(int*) = nullptr;
  int (*set_device)(int) = nullptr;
  int (*free)(void*) = nullptr;
  int (*malloc)(void**, size_t) = nullptr;
  int (*memcpy)(void*, const void*, size_t, int) = nullptr;
  int (*memset)(void*, int, size_t) = nullptr;
  int (*device_synchronize)() = nullptr;
  int (*get_last_error)() = nullptr;
  const char* (*get_error_string)(int) = nullptr;
  const char* (*get_error_name)(int) = nullptr;
  int (*stream_create_with_flags)(void**, unsigned) = nullptr;
  int (*event_create)(void**) = nullptr;
  int (*event_record)(void*, void*) = nullptr;
  int (*event_synchronize)(void*) = nullptr;
  int (*event_elapsed_time)(float*, void*, void*) = nullptr;
  int (*device_get_attribute)(int*, int, int) = nullptr;
};

namespace {

template <typename F>
bool bind(void* lib, const char* name, F* f) {
  *f = reinterpret_cast<F>(dlsym(lib, name));
  return *f != nullptr;
}

}  // namespace

std::string CudaRuntime::check(int code, const char* what) const {
  if (code == kCudaSuccess) return "";
  const char* name = api_->get_error_name ? api_->get_error_name(code) : nullptr;
  const char* text = api_->get_error_string ? api_->get_error_string(code) : nullptr;
  return fmt::format("{}: CUDA error {} ({}): {}", what, code, name ? name : "?",
                     text ? text : "no description");
}

std::string CudaRuntime::start(int device) {
  if (g_runtime) return "";
  auto* api = new Api();
  std::vector<std::string> names;
  if (const char* e = std::getenv("CRUCIBLE_CUDART"); e && *e) names.push_back(e);
  for (const char* n : {"libcudart.so.13", "libcudart.so.12", "libcudart.so.11", "libcudart.so"})
    names.push_back(n);
  std::vector<std::string> dirs;
  if (const char* h = std::getenv("CUDA_HOME"); h && *h) dirs.push_back(std::string(h) + "/lib64");
  dirs.push_back("/usr/local/cuda/lib64");
  for (const std::string& d : dirs)
    for (const char* n : {"libcudart.so.13", "libcudart.so.12", "libcudart.so.11", "libcudart.so"})
      names.push_back(d + "/" + n);
  std::string tried;
  for (const std::string& n : names) {
    api->lib = dlopen(n.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (api->lib) {
      api->path = n;
      break;
    }
    tried += (tried.empty() ? "" : ", ") + n;
  }
  if (!api->lib) {
    delete api;
    return fmt::format(
        "the CUDA runtime (libcudart) was not found (tried {}; set CRUCIBLE_CUDART to its path)",
        tried);
  }
  bool ok = bind(api->lib, "cudaGetDeviceCount", &api->get_device_count) &&
            bind(api->lib, "cudaSetDevice", &api->set_device) &&
            bind(api->lib, "cudaFree", &api->free) && bind(api->lib, "cudaMalloc", &api->malloc) &&
            bind(api->lib, "cudaMemcpy", &api->memcpy) &&
            bind(api->lib, "cudaMemset", &api->memset) &&
            bind(api->lib, "cudaDeviceSynchronize", &api->device_synchronize) &&
            bind(api->lib, "cudaGetLastError", &api->get_last_error) &&
            bind(api->lib, "cudaGetErrorString", &api->get_error_string) &&
            bind(api->lib, "cudaGetErrorName", &api->get_error_name) &&
            bind(api->lib, "cudaStreamCreateWithFlags", &api->stream_create_with_flags) &&
            bind(api->lib, "cudaEventCreate", &api->event_create) &&
            bind(api->lib, "cudaEventRecord", &api->event_record) &&
            bind(api->lib, "cudaEventSynchronize", &api->event_synchronize) &&
            bind(api->lib, "cudaEventElapsedTime", &api->event_elapsed_time) &&
            bind(api->lib, "cudaDeviceGetAttribute", &api->device_get_attribute);
  if (!ok) {
    const std::string path = api->path;
    delete api;
    return fmt::format("{} lacks a CUDA runtime function crucible uses", path);
  }
  auto* rt = new CudaRuntime();
  rt->api_ = api;
  rt->device_ = device;
  auto fail = [&](const std::string& why) {
    delete rt;
    delete api;
    return why;
  };
  int count = 0;
  const int c = api->get_device_count(&count);
  if (c != kCudaSuccess || count == 0)
    return fail(c != kCudaSuccess ? rt->check(c, "no CUDA device is visible (cudaGetDeviceCount)")
                                  : std::string("no CUDA device is visible"));
  if (device < 0 || device >= count)
    return fail(fmt::format("CUDA device {} does not exist ({} visible)", device, count));
  std::string e = rt->check(api->set_device(device), "cudaSetDevice");
  if (e.empty()) e = rt->check(api->free(nullptr), "creating the CUDA context (cudaFree(0))");
  if (e.empty())
    e = rt->check(api->stream_create_with_flags(&rt->stream_, kStreamNonBlocking),
                  "cudaStreamCreateWithFlags");
  if (e.empty()) e = rt->check(api->event_create(&rt->ev_start_), "cudaEventCreate");
  if (e.empty()) e = rt->check(api->event_create(&rt->ev_stop_), "cudaEventCreate");
  int l2 = 0;
  if (e.empty())
    e = rt->check(api->device_get_attribute(&l2, kDevAttrL2CacheSize, device),
                  "cudaDeviceGetAttribute(cudaDevAttrL2CacheSize)");
  if (e.empty()) {
    rt->l2_bytes_ = static_cast<size_t>(l2 > 0 ? l2 : 0);
    // Twice the L2 (at least 8 MiB): every line the previous sample left is evicted.
    rt->flush_bytes_ = std::max<size_t>(size_t{8} << 20, 2 * rt->l2_bytes_);
    e = rt->check(api->malloc(&rt->flush_, rt->flush_bytes_), "allocating the L2 flush buffer");
  }
  if (e.empty()) e = rt->synchronize("starting CUDA");
  if (!e.empty()) return fail(e);
  g_runtime = rt;
  return "";
}

CudaRuntime* CudaRuntime::get() { return g_runtime; }

std::string CudaRuntime::malloc(void** p, size_t bytes, const char* what) {
  *p = nullptr;
  return check(api_->malloc(p, std::max<size_t>(bytes, 1)), what);
}

void CudaRuntime::free(void* p) {
  if (p) api_->free(p);
}

std::string CudaRuntime::to_device(void* dst, const void* src, size_t bytes, const char* what) {
  if (bytes == 0) return "";
  return check(api_->memcpy(dst, src, bytes, kMemcpyHostToDevice), what);
}

std::string CudaRuntime::to_host(void* dst, const void* src, size_t bytes, const char* what) {
  if (bytes == 0) return "";
  return check(api_->memcpy(dst, src, bytes, kMemcpyDeviceToHost), what);
}

std::string CudaRuntime::memset(void* dst, int value, size_t bytes, const char* what) {
  if (bytes == 0) return "";
  return check(api_->memset(dst, value, bytes), what);
}

std::string CudaRuntime::synchronize(const char* what) {
  std::string e = check(api_->device_synchronize(), what);
  if (!e.empty()) return e;
  return check(api_->get_last_error(), what);
}

std::string CudaRuntime::flush_l2() {
  flush_value_ = static_cast<uint8_t>(flush_value_ + 1);
  std::string e = check(api_->memset(flush_, flush_value_, flush_bytes_), "flushing the L2");
  if (!e.empty()) return e;
  return synchronize("flushing the L2");
}

std::string CudaRuntime::timed_start() {
  std::string e = synchronize("before the timed call");
  if (!e.empty()) return e;
  return check(api_->event_record(ev_start_, nullptr), "cudaEventRecord");
}

std::string CudaRuntime::timed_stop(uint64_t* ns) {
  *ns = 0;
  std::string e = synchronize("after the kernel's call (cudaDeviceSynchronize)");
  if (!e.empty()) return e;
  e = check(api_->event_record(ev_stop_, nullptr), "cudaEventRecord");
  if (e.empty()) e = check(api_->event_synchronize(ev_stop_), "cudaEventSynchronize");
  float ms = 0;
  if (e.empty())
    e = check(api_->event_elapsed_time(&ms, ev_start_, ev_stop_), "cudaEventElapsedTime");
  if (e.empty()) *ns = static_cast<uint64_t>(static_cast<double>(ms) * 1e6);
  return e;
}

}  // namespace crucible
