// The cpu backend's reductions see their input as [outer, red, inner]: `red` is the reduced
// extent, in the input's row-major order over the reduced dims (the order the reference
// visits them, so order-dependent results such as first indices and sequential sums agree).
// A contiguous input whose reduced dims form one block is used in place, and so is an input
// whose permutation with the reduced dims last (kept in order) is contiguous; any other input
// is permuted so and copied once in the compute dtype.
#pragma once

#include <algorithm>
#include <vector>

#include "backends/cpu/parallel.h"
#include "backends/cpu/pointwise_engine.h"
#include "crucible/core/tensor.h"

namespace crucible::cpu {

struct RowsView {
  Tensor src;  // contiguous, compute dtype
  int64_t outer = 1, red = 1, inner = 1;
};

// `reduced[d]`: whether input dim d is folded. `ct`: f32, f64 or i64.
inline RowsView reduce_rows(const Tensor& x, const std::vector<bool>& reduced, DType ct) {
  RowsView v;
  const int64_t nd = x.dim();
  int64_t first = -1, last = -1;
  bool block = true;
  for (int64_t d = 0; d < nd; ++d) {
    if (!reduced[static_cast<size_t>(d)] || x.size(d) == 1) continue;
    if (first < 0) first = d;
    if (last >= 0 && last != d - 1) {
      // a kept dim of size > 1 between two reduced ones?
      for (int64_t e = last + 1; e < d; ++e)
        if (!reduced[static_cast<size_t>(e)] && x.size(e) != 1) block = false;
    }
    last = d;
  }
  if (x.is_contiguous() && x.dtype() == ct && block) {
    v.src = x;
    if (first < 0) {
      v.outer = x.numel();
    } else {
      for (int64_t d = 0; d < nd; ++d) {
        const bool red = reduced[static_cast<size_t>(d)];
        if (d < first)
          v.outer *= x.size(d);
        else if (d > last)
          v.inner *= x.size(d);
        else if (red)
          v.red *= x.size(d);
        else
          v.outer *= x.size(d);  // size-1 kept dims inside the block
      }
    }
    return v;
  }
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < nd; ++d)
    if (!reduced[static_cast<size_t>(d)]) {
      perm.push_back(d);
      v.outer *= x.size(d);
    }
  for (int64_t d = 0; d < nd; ++d)
    if (reduced[static_cast<size_t>(d)]) {
      perm.push_back(d);
      v.red *= x.size(d);
    }
  Tensor p = nd > 0 ? x.permute(perm) : x;
  if (p.is_contiguous() && p.dtype() == ct) {
    // Already laid out as [kept..., reduced...] (the column sum of a transposed matrix): used
    // in place, as rows.
    v.src = p;
    return v;
  }
  v.src = Tensor::uninitialized(p.shape(), ct);
  if (p.numel() > 0) {
    const Tensor ins[] = {p};
    pw_run(PwOp::Identity, ins, v.src, compute_for(p.dtype()), PwParams{});
  }
  return v;
}

// The dims of a contiguous tensor as alternating groups of kept and reduced dims (size-1 dims
// dropped, neighbours of the same kind merged: they are one block in memory).
struct DimGroup {
  int64_t size = 1;
  bool reduced = false;
};
inline std::vector<DimGroup> dim_groups(const Tensor& x, const std::vector<bool>& reduced) {
  std::vector<DimGroup> g;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (x.size(d) == 1) continue;
    const bool r = reduced[static_cast<size_t>(d)];
    if (!g.empty() && g.back().reduced == r)
      g.back().size *= x.size(d);
    else
      g.push_back({x.size(d), r});
  }
  return g;
}

// `x` as a contiguous tensor of dtype `ct` (x itself when it already is one; otherwise one
// pass of the elementwise engine, which converts while it copies).
inline Tensor contiguous_as(const Tensor& x, DType ct) {
  if (x.is_contiguous() && x.dtype() == ct) return x;
  Tensor c = Tensor::uninitialized(x.shape(), ct);
  if (x.numel() > 0) {
    const Tensor ins[] = {x};
    pw_run(PwOp::Identity, ins, c, compute_for(x.dtype()), PwParams{});
  }
  return c;
}

// The columns of one task when columns (inner > 1) are spread over the pool: enough tasks for
// every thread, each a multiple of 16 columns, at most 1024 (their f64 accumulators stay in L1).
inline int64_t column_chunk(int64_t outer, int64_t inner) {
  const int64_t tasks = std::max<int64_t>(1, 2 * num_threads() / std::max<int64_t>(outer, 1));
  const int64_t c = (inner + tasks - 1) / tasks;
  return std::clamp<int64_t>((c + 15) / 16 * 16, 16, 1024);
}

// The compute dtype of a reduction over `t`: f64 for f64, f32 for the other floating dtypes,
// i64 for integers and bool.
inline DType reduce_compute_dtype(DType t) {
  if (t == DType::Float64) return DType::Float64;
  return is_floating(t) ? DType::Float32 : DType::Int64;
}

}  // namespace crucible::cpu
