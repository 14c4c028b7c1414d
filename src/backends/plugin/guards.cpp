// Decoys, equality and unwritten elements for the kernel ABI backend.
#include "backends/plugin/guards.h"

#include <cstring>
#include <vector>

namespace crucible {

namespace {

const char* element_ptr(const Tensor& t, int64_t i) {
  return static_cast<const char*>(t.storage()->data()) +
         t.storage_index(i) * static_cast<int64_t>(t.itemsize());
}

}  // namespace

void permute_elements(const Tensor& t, std::mt19937_64& rng, int64_t keep) {
  const int64_t n = t.numel();
  const size_t item = t.itemsize();
  char tmp[16];
  // Keeping the leading elements only makes sense where enough remain to permute: with a few
  // left, the permutation is too often the identity.
  if (n - keep < 3 * keep) keep = 0;
  // Fisher-Yates over the logical elements from `keep` on.
  for (int64_t i = n - 1; i > keep; --i) {
    const int64_t j = keep + static_cast<int64_t>(rng() % static_cast<uint64_t>(i - keep + 1));
    if (i == j) continue;
    char* a = const_cast<char*>(element_ptr(t, i));
    char* b = const_cast<char*>(element_ptr(t, j));
    if (a == b) continue;  // a zero stride: one element seen twice
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

int64_t count_unwritten(const Tensor& a, const Tensor& pa, const Tensor& b, const Tensor& pb,
                        int64_t* first) {
  *first = -1;
  int64_t n = 0;
  const size_t item = a.itemsize();
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (std::memcmp(element_ptr(a, i), element_ptr(pa, i), item) != 0) continue;
    if (std::memcmp(element_ptr(b, i), element_ptr(pb, i), item) != 0) continue;
    if (std::memcmp(element_ptr(pa, i), element_ptr(pb, i), item) == 0) continue;  // undecided
    if (n++ == 0) *first = i;
  }
  return n;
}

}  // namespace crucible
