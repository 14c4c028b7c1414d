// CPU storage allocation (64-byte aligned, zero-filled) and the process-wide allocation limit.
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "crucible/core/error.h"
#include "crucible/core/tensor.h"

namespace crucible {

namespace {

std::atomic<size_t> g_limit{0};
std::atomic<size_t> g_allocated{0};

constexpr size_t kAlignment = 64;

[[noreturn]] void memory_error(size_t nbytes, size_t limit) {
  throw Error(ErrorKind::Memory, "allocation of " + std::to_string(nbytes) +
                                     " bytes exceeds the memory limit of " + std::to_string(limit) +
                                     " bytes");
}

}  // namespace

Storage::Storage(void* data, size_t nbytes, Device device, std::function<void(void*)> deleter)
    : data_(data), nbytes_(nbytes), device_(device), deleter_(std::move(deleter)) {}

Storage::~Storage() {
  if (deleter_) deleter_(data_);
}

std::shared_ptr<Storage> Storage::allocate_cpu(size_t nbytes) {
  const size_t limit = g_limit.load();
  size_t before = g_allocated.fetch_add(nbytes);
  if (limit != 0 && (before + nbytes > limit || before + nbytes < before)) {
    g_allocated.fetch_sub(nbytes);
    memory_error(nbytes, limit);
  }
  // Zero-size storage still gets a distinct, aligned pointer. Memory is zero-filled so that
  // a result never depends on what an earlier allocation left behind.
  const size_t rounded =
      nbytes == 0 ? kAlignment : (nbytes + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded < nbytes) {
    g_allocated.fetch_sub(nbytes);
    memory_error(nbytes, limit);
  }
  void* p = std::aligned_alloc(kAlignment, rounded);
  if (p == nullptr) {
    g_allocated.fetch_sub(nbytes);
    throw Error(ErrorKind::Memory,
                "allocation of " + std::to_string(nbytes) + " bytes failed (out of memory)");
  }
  std::memset(p, 0, rounded);
  return std::make_shared<Storage>(p, nbytes, Device::cpu(), [nbytes](void* q) {
    std::free(q);
    g_allocated.fetch_sub(nbytes);
  });
}

void set_allocation_limit(size_t bytes) { g_limit.store(bytes); }
size_t allocation_limit() { return g_limit.load(); }
size_t bytes_allocated() { return g_allocated.load(); }

}  // namespace crucible
