// The cpu backend's constant_pad_nd. Negative pads crop: the part of self that lands inside the
// output is a view (self sliced), placed at per-dim offsets in a contiguous output whose other
// elements are the fill value. Dims after the innermost padded one travel with it, so the
// output is rows (one per index of the dims before it) of [value | self's row | value], or all
// value where an outer padded dim is outside self; rows are produced in parallel chunks
// (shape_copy.h). Without padding (crops only) it is a copy of the view.
//
// Destination-passing: the meta function checked the call (ATen's PadNd.cpp rules,
// crucible/ops/rules/join.h: pad holds (left, right) pairs from the last dim backwards, an even
// number of at most 2 * dim(); a negative output size raises) and sized the contiguous output.
// The value is converted to self's dtype as fill_ does (a float truncated for integers, != 0 for
// bool).
#include <algorithm>
#include <vector>

#include "backends/cpu/shape_copy.h"
#include "backends/cpu/shape_kernels.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"

namespace crucible::cpu {

namespace {

void constant_pad_nd(const OpDef&, const Args& a, const Values& outputs) {
  const Tensor& self = a.tensor("self");
  const Tensor& out = outputs[0].tensor();
  if (out.numel() == 0) return;
  const Shape& shape = out.shape();
  const int64_t nd = self.dim();
  const std::vector<int64_t> pad = a.ints("pad");
  std::vector<int64_t> lo(static_cast<size_t>(nd), 0);  // padding before each dim of self
  for (size_t p = 0; 2 * p < pad.size(); ++p) lo[static_cast<size_t>(nd) - 1 - p] = pad[2 * p];
  const Value& v = a.value("value");
  const Pattern value = v.kind() == ValueKind::Float
                            ? pattern_of_double(v.to_double(), self.dtype())
                            : pattern_of_int(v.to_int(), self.dtype());

  // The part of self inside the output: output indices [at[d], at[d] + inner_sz[d]) of each dim.
  Tensor part = self;
  std::vector<int64_t> at(static_cast<size_t>(nd), 0);
  int64_t innermost = -1;  // the innermost dim with value on either side
  for (int64_t d = 0; d < nd; ++d) {
    const int64_t n = shape[d], size = self.shape()[d];
    const int64_t o_lo = std::clamp<int64_t>(lo[d], 0, n);
    const int64_t o_hi = std::clamp<int64_t>(lo[d] + size, o_lo, n);
    if (o_lo != 0 || o_hi - o_lo != size) part = part.slice(d, o_lo - lo[d], o_hi - lo[d]);
    at[d] = o_lo;
    if (o_lo > 0 || o_hi < n) innermost = d;
  }
  if (innermost < 0) return copy_into(part, out);
  const int64_t p = innermost;
  int64_t inner = 1;
  for (int64_t d = p + 1; d < nd; ++d) inner *= shape[d];
  const int64_t row = shape[p] * inner;         // output row length
  const int64_t left = at[p] * inner;           // value elements before self's row
  const int64_t mid = part.shape()[p] * inner;  // self's row length
  const Walk w = walk_of(part);
  const int64_t is = w.isize;
  produce_bytes(static_cast<char*>(out.data_ptr()), out.numel() * is,
                [&](int64_t lo_b, int64_t hi_b, char* dst) {
                  const int64_t e1 = hi_b / is;
                  int64_t e = lo_b / is;
                  int64_t r = e / row, j = e % row;
                  std::vector<int64_t> idx(static_cast<size_t>(std::max<int64_t>(p, 1)), 0);
                  for (int64_t d = p - 1, rem = r; d >= 0; --d) {
                    idx[d] = rem % shape[d];
                    rem /= shape[d];
                  }
                  // Whether this row meets self, and which of part's rows it is.
                  bool inside = false;
                  int64_t src_row = 0;
                  auto locate = [&] {
                    inside = true;
                    src_row = 0;
                    for (int64_t d = 0; d < p; ++d) {
                      const int64_t s = idx[d] - at[d];
                      if (s < 0 || s >= part.shape()[d]) {
                        inside = false;
                        return;
                      }
                      src_row = src_row * part.shape()[d] + s;
                    }
                  };
                  locate();
                  while (e < e1) {
                    const int64_t j1 = std::min(row, j + (e1 - e));
                    if (!inside || mid == 0) {
                      fill_run(dst, value, j1 - j);
                    } else {
                      const int64_t m0 = std::clamp(left, j, j1);
                      const int64_t m1 = std::clamp(left + mid, m0, j1);
                      fill_run(dst, value, m0 - j);
                      gather(w, src_row * mid + (m0 - left), src_row * mid + (m1 - left),
                             dst + (m0 - j) * is);
                      fill_run(dst + (m1 - j) * is, value, j1 - m1);
                    }
                    dst += (j1 - j) * is;
                    e += j1 - j;
                    j = j1;
                    if (j == row) {
                      j = 0;
                      for (int64_t d = p - 1; d >= 0; --d) {
                        if (++idx[d] < shape[d]) break;
                        idx[d] = 0;
                      }
                      locate();
                    }
                  }
                });
}

}  // namespace

void register_pad_kernels(KernelTable& t) {
  t.add("aten.constant_pad_nd.default",
        {.supports = &shape_supports, .dtypes = shape_dtypes(), .run_into = &constant_pad_nd});
}

}  // namespace crucible::cpu
