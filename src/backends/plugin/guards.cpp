// Guard zones, poison and the element checks of the kernel ABI backend.
#include "backends/plugin/guards.h"

#include <cstring>

#include <fmt/format.h>

#include "crucible/core/error.h"

namespace crucible {

namespace {

char* storage_bytes(const Tensor& t) { return static_cast<char*>(t.storage()->data()); }

const char* element_ptr(const Tensor& t, int64_t i) {
  return storage_bytes(t) + t.storage_index(i) * static_cast<int64_t>(t.itemsize());
}

}  // namespace

GuardedOutput allocate_guarded(const Shape& shape, const Shape& strides, DType dtype,
                               uint8_t poison) {
  const size_t item = itemsize(dtype);
  int64_t extent = numel_of(shape) > 0 ? 1 : 0;
  if (extent > 0)
    for (size_t d = 0; d < shape.size(); ++d) {
      if (strides[d] < 0) internal_error("allocate_guarded: negative stride");
      extent += (shape[d] - 1) * strides[d];
    }
  GuardedOutput g;
  g.body_bytes = static_cast<size_t>(extent) * item;
  auto storage = Storage::allocate_cpu(2 * kGuardBytes + g.body_bytes);
  char* p = static_cast<char*>(storage->data());
  std::memset(p, kGuardByte, kGuardBytes);
  std::memset(p + kGuardBytes, poison, g.body_bytes);
  std::memset(p + kGuardBytes + g.body_bytes, kGuardByte, kGuardBytes);
  g.tensor = Tensor::from_storage(storage, static_cast<int64_t>(kGuardBytes / item), shape, strides,
                                  dtype);
  return g;
}

std::string check_guard_zones(const GuardedOutput& g, const std::string& what) {
  const unsigned char* p = static_cast<const unsigned char*>(g.tensor.storage()->data());
  // In front: how many bytes changed, and how far the nearest is from the first element.
  int64_t changed = 0, gap = -1;
  for (size_t i = 0; i < kGuardBytes; ++i)
    if (p[i] != kGuardByte) {
      ++changed;
      gap = static_cast<int64_t>(kGuardBytes - 1 - i);
    }
  if (changed > 0)
    return fmt::format(
        "wrote before the start of {}: {} byte(s) of the guard zone in front of it "
        "changed, {}",
        what, changed,
        gap == 0 ? "up to its first element"
                 : fmt::format("the nearest {} byte(s) before its first element", gap));
  const unsigned char* after = p + kGuardBytes + g.body_bytes;
  int64_t first = -1;
  for (size_t i = 0; i < kGuardBytes; ++i)
    if (after[i] != kGuardByte) {
      ++changed;
      if (first < 0) first = static_cast<int64_t>(i);
    }
  if (changed > 0)
    return fmt::format(
        "wrote past the end of {}: {} byte(s) of the guard zone after it changed, {}", what,
        changed,
        first == 0 ? "from right after its last element"
                   : fmt::format("the first {} byte(s) after its last element", first));
  return "";
}

bool element_poisoned(const Tensor& t, int64_t i, uint8_t poison) {
  const unsigned char* e = reinterpret_cast<const unsigned char*>(element_ptr(t, i));
  for (size_t b = 0; b < t.itemsize(); ++b)
    if (e[b] != poison) return false;
  return true;
}

int64_t count_poisoned(const Tensor& t, uint8_t poison, int64_t* first) {
  int64_t n = 0;
  *first = -1;
  if (t.is_contiguous()) {
    const unsigned char* p = static_cast<const unsigned char*>(t.data_ptr());
    const size_t item = t.itemsize();
    for (int64_t i = 0; i < t.numel(); ++i, p += item) {
      size_t b = 0;
      while (b < item && p[b] == poison) ++b;
      if (b == item && n++ == 0) *first = i;
    }
    return n;
  }
  for (int64_t i = 0; i < t.numel(); ++i)
    if (element_poisoned(t, i, poison)) {
      if (n++ == 0) *first = i;
    }
  return n;
}

void reverse_elements(const Tensor& t) {
  const int64_t n = t.numel();
  const size_t item = t.itemsize();
  char tmp[16];
  for (int64_t i = 0, j = n - 1; i < j; ++i, --j) {
    char* a = const_cast<char*>(element_ptr(t, i));
    char* b = const_cast<char*>(element_ptr(t, j));
    std::memcpy(tmp, a, item);
    std::memcpy(a, b, item);
    std::memcpy(b, tmp, item);
  }
}

bool same_elements(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  if (a.is_contiguous() && b.is_contiguous())
    return a.numel() == 0 || std::memcmp(a.data_ptr(), b.data_ptr(),
                                         static_cast<size_t>(a.numel()) * a.itemsize()) == 0;
  for (int64_t i = 0; i < a.numel(); ++i)
    if (std::memcmp(element_ptr(a, i), element_ptr(b, i), a.itemsize()) != 0) return false;
  return true;
}

}  // namespace crucible
