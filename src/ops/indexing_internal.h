// Private helpers of the indexing family (indexing.cpp, indexing_advanced.cpp). Internal to
// libcrucible.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "crucible/ops/op.h"

namespace crucible::indexing {

// The logical (row-major) index of multi-index `idx` in `t` (0 for a 0-d tensor).
inline int64_t logical_index(const Tensor& t, std::span<const int64_t> idx) {
  int64_t li = 0;
  for (int64_t d = 0; d < t.dim(); ++d) li = li * t.size(d) + idx[static_cast<size_t>(d)];
  return li;
}

// Exact element copies: integers and bool through int64, floats through double.
inline void copy_element(const Tensor& from, int64_t from_li, const Tensor& to, int64_t to_li) {
  if (is_floating(to.dtype()) && is_floating(from.dtype()))
    to.set(to_li, from.get(from_li));
  else if (!is_floating(from.dtype()))
    to.set_int(to_li, from.get_int(from_li));
  else
    to.set(to_li, from.get(from_li));
}

// Registration of the parts.
void register_gather_scatter_ops(OpRegistry& r);  // indexing.cpp
void register_index_ops(OpRegistry& r);           // indexing_advanced.cpp
void register_index_select_ops(OpRegistry& r);    // indexing_select.cpp

}  // namespace crucible::indexing
