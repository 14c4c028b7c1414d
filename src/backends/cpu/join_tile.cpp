// The cpu backend's repeat, flip, roll, tril and triu: each writes a new contiguous tensor in
// one pass of the byte movers (shape_copy.h).
//  - repeat is the copy of a view with stride 0 over the repeats: out viewed as
//    [r0, s0, r1, s1, ...] is self with strides [0, st0, 0, st1, ...].
//  - flip is the copy of the view with negated strides along the flipped dims.
//  - roll along one dim is a row of two pieces (the tail, then the head); several dims roll
//    one after another.
//  - tril/triu write each row of the last two dims as the kept run of self and zeros.
//
// ATen's rules (TensorShape.cpp, TensorTransformations.cpp, TriangularOps.cpp): repeat needs
// at least self.dim() repeats, a negative result size raises; flip's dims are wrapped and may
// not repeat; roll without dims shifts the flattened tensor (one shift only), else shifts and
// dims pair up and shifts of one dim add; tril/triu need >= 2 dims.
#include <algorithm>
#include <string>
#include <vector>

#include "backends/cpu/shape_copy.h"
#include "backends/cpu/shape_kernels.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"

namespace crucible::cpu {

namespace {

Values repeat(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  const Tensor& self = a.tensor("self");
  const std::vector<int64_t> reps = a.ints("repeats");
  const auto nr = static_cast<int64_t>(reps.size());
  CRUCIBLE_CHECK(nr >= self.dim(),
                 "Number of dimensions of repeat dims can not be smaller than number of "
                 "dimensions of tensor");
  const int64_t lead = nr - self.dim();
  Shape shape(static_cast<size_t>(nr));
  Shape tiled, tiled_strides;  // [r0, s0, r1, s1, ...] and [0, st0, 0, st1, ...]
  for (int64_t i = 0; i < nr; ++i) {
    const int64_t s = i < lead ? 1 : self.shape()[i - lead];
    shape[i] = s * reps[i];
    tiled.insert(tiled.end(), {reps[i], s});
    tiled_strides.insert(tiled_strides.end(), {0, i < lead ? 0 : self.strides()[i - lead]});
  }
  for (int64_t s : shape)
    if (s < 0)
      op_error("Trying to create tensor with negative dimension " + std::to_string(s) + ": " +
               shape_str(shape));
  Tensor out = Tensor::uninitialized(shape, self.dtype());
  if (out.numel() == 0) return {Value(out)};
  copy_into(Tensor::from_storage(self.storage(), self.offset(), tiled, tiled_strides, self.dtype()),
            out.view(tiled));
  return {Value(out)};
}

std::vector<bool> dim_mask(const std::vector<int64_t>& dims, int64_t ndim) {
  std::vector<bool> m(static_cast<size_t>(std::max<int64_t>(ndim, 1)), false);
  for (int64_t d : dims) {
    const auto w = static_cast<size_t>(wrap_dim(d, ndim));
    if (m[w]) op_error("dim " + std::to_string(w) + " appears multiple times in the list of dims");
    m[w] = true;
  }
  return m;
}

Values flip(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  const Tensor& self = a.tensor("self");
  const std::vector<bool> m = dim_mask(a.ints("dims"), self.dim());
  Tensor out = Tensor::uninitialized(self.shape(), self.dtype());
  if (out.numel() == 0) return {Value(out)};
  int64_t offset = self.offset();
  Shape strides = self.strides();
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (!m[static_cast<size_t>(d)]) continue;
    offset += (self.shape()[d] - 1) * strides[d];
    strides[d] = -strides[d];
  }
  // A view with negative strides: only the byte movers read it (Tensor::as_strided refuses it).
  copy_into(Tensor::from_storage(self.storage(), offset, self.shape(), strides, self.dtype()), out);
  return {Value(out)};
}

int64_t pos_mod(int64_t x, int64_t n) { return ((x % n) + n) % n; }

// x rolled by `shift` along dim d, as a new contiguous tensor.
Tensor roll_dim(const Tensor& x, int64_t d, int64_t shift) {
  Tensor out = Tensor::uninitialized(x.shape(), x.dtype());
  if (out.numel() == 0) return out;
  const int64_t n = x.shape()[d];
  const int64_t s = pos_mod(shift, n);
  int64_t outer = 1;
  for (int64_t k = 0; k < d; ++k) outer *= x.shape()[k];
  std::vector<Piece> pieces;
  if (s > 0) pieces.push_back(copy_piece(x.slice(d, n - s, n), outer));
  if (s < n) pieces.push_back(copy_piece(x.slice(d, 0, n - s), outer));
  write_rows(out, outer, pieces);
  return out;
}

Values roll(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  const Tensor& self = a.tensor("self");
  const std::vector<int64_t> shifts = a.ints("shifts");
  const std::vector<int64_t> dims = a.ints("dims");
  if (dims.empty()) {
    if (shifts.size() != 1)
      op_error("shifts and dimensions must align. shifts: " + std::to_string(shifts.size()) +
               ", dims:0");
    const Tensor flat = contiguous_copy(self).view({-1});
    return {Value(roll_dim(flat, 0, flat.numel() > 0 ? shifts[0] : 0).view(self.shape()))};
  }
  if (shifts.size() != dims.size())
    op_error("shifts and dimensions must align. shifts: " + std::to_string(shifts.size()) +
             ", dims:" + std::to_string(dims.size()));
  CRUCIBLE_CHECK(self.dim() > 0, "Dimension specified as 0 but tensor has no dimensions");
  std::vector<int64_t> shift(static_cast<size_t>(self.dim()), 0);
  for (size_t i = 0; i < dims.size(); ++i)
    shift[static_cast<size_t>(wrap_dim(dims[i], self.dim()))] += shifts[i];
  Tensor out;
  for (int64_t d = 0; d < self.dim(); ++d) {
    const int64_t n = self.shape()[d];
    if (n == 0 || pos_mod(shift[static_cast<size_t>(d)], n) == 0) continue;
    out = roll_dim(out.defined() ? out : self, d, shift[static_cast<size_t>(d)]);
  }
  return {Value(out.defined() ? out : contiguous_copy(self))};
}

// tril (lower) keeps j - i <= diagonal, triu keeps j - i >= diagonal; zeros elsewhere.
Values tri(const Args& a, bool lower) {
  const Tensor& self = a.tensor("self");
  const int64_t diag = a.integer("diagonal");
  if (self.dim() < 2)
    op_error(std::string(lower ? "tril" : "triu") +
             ": input tensor must have at least 2 dimensions");
  Tensor out = Tensor::uninitialized(self.shape(), self.dtype());
  if (out.numel() == 0) return {Value(out)};
  const int64_t rows = self.shape()[self.dim() - 2], cols = self.shape()[self.dim() - 1];
  const Walk w = walk_of(self);
  const int64_t is = w.isize;
  const Pattern zero = pattern_of_int(0, self.dtype());
  // Row i keeps columns [keep_lo, keep_hi).
  auto keep = [&](int64_t i, int64_t& lo, int64_t& hi) {
    if (lower) {
      lo = 0;
      hi = std::clamp<int64_t>(i + diag + 1, 0, cols);
    } else {
      lo = std::clamp<int64_t>(i + diag, 0, cols);
      hi = cols;
    }
  };
  produce_bytes(static_cast<char*>(out.data_ptr()), out.numel() * is,
                [&](int64_t lo_b, int64_t hi_b, char* dst) {
                  const int64_t e1 = hi_b / is;
                  int64_t e = lo_b / is;
                  while (e < e1) {
                    const int64_t r = e / cols, j0 = e % cols;
                    const int64_t j1 = std::min(cols, j0 + (e1 - e));
                    int64_t klo, khi;
                    keep(r % rows, klo, khi);
                    // [j0, j1) split into zeros before klo, kept [klo, khi), zeros after khi.
                    const int64_t z1 = std::clamp(klo, j0, j1);
                    const int64_t k1 = std::clamp(khi, z1, j1);
                    fill_run(dst, zero, z1 - j0);
                    gather(w, r * cols + z1, r * cols + k1, dst + (z1 - j0) * is);
                    fill_run(dst + (k1 - j0) * is, zero, j1 - k1);
                    dst += (j1 - j0) * is;
                    e += j1 - j0;
                  }
                });
  return {Value(out)};
}

Values tril(const OpDef& op, const Values& a) { return tri(Args(a, op.schema), true); }
Values triu(const OpDef& op, const Values& a) { return tri(Args(a, op.schema), false); }

}  // namespace

void register_tile_kernels(KernelTable& t) {
  const std::vector<DType> all = shape_dtypes();
  t.add("aten.repeat.default", {&repeat, &shape_supports, all});
  t.add("aten.flip.default", {&flip, &shape_supports, all});
  t.add("aten.roll.default", {&roll, &shape_supports, all});
  t.add("aten.tril.default", {&tril, &shape_supports, all});
  t.add("aten.triu.default", {&triu, &shape_supports, all});
}

}  // namespace crucible::cpu
