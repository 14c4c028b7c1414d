// The cpu backend's repeat, flip, roll, tril and triu: each writes a new contiguous tensor in
// one pass of the byte movers (shape_copy.h).
//  - repeat is the copy of a view with stride 0 over the repeats: out viewed as
//    [r0, s0, r1, s1, ...] is self with strides [0, st0, 0, st1, ...].
//  - flip is the copy of the view with negated strides along the flipped dims.
//  - roll along one dim is a row of two pieces (the tail, then the head); several dims roll
//    one after another.
//  - tril/triu write each row of the last two dims as the kept run of self and zeros.
//
// Destination-passing: the meta functions (ops/join.cpp: ATen's TensorShape.cpp,
// TensorTransformations.cpp and TriangularOps.cpp rules: repeat needs at least self.dim()
// repeats and no negative result size; flip's dims may not repeat; roll's shifts and dims pair
// up; tril/triu need >= 2 dims) checked the call and sized the contiguous output. Roll without
// dims shifts the flattened tensor; shifts of one dim add.
#include <algorithm>
#include <string>
#include <vector>

#include "backends/cpu/shape_copy.h"
#include "backends/cpu/shape_kernels.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"

namespace crucible::cpu {

namespace {

void repeat(const OpDef&, const Args& a, const Values& outputs) {
  const Tensor& self = a.tensor("self");
  const Tensor& out = outputs[0].tensor();
  if (out.numel() == 0) return;
  const std::vector<int64_t> reps = a.ints("repeats");
  const auto nr = static_cast<int64_t>(reps.size());
  const int64_t lead = nr - self.dim();
  Shape tiled, tiled_strides;  // [r0, s0, r1, s1, ...] and [0, st0, 0, st1, ...]
  for (int64_t i = 0; i < nr; ++i) {
    tiled.insert(tiled.end(), {reps[i], i < lead ? 1 : self.shape()[i - lead]});
    tiled_strides.insert(tiled_strides.end(), {0, i < lead ? 0 : self.strides()[i - lead]});
  }
  copy_into(Tensor::from_storage(self.storage(), self.offset(), tiled, tiled_strides, self.dtype()),
            out.view(tiled));
}

void flip(const OpDef&, const Args& a, const Values& outputs) {
  const Tensor& self = a.tensor("self");
  const Tensor& out = outputs[0].tensor();
  if (out.numel() == 0) return;
  int64_t offset = self.offset();
  Shape strides = self.strides();
  // A 0-d self takes dim 0 or -1 (wrapped as for one dim); there is nothing to flip.
  std::vector<bool> flipped(static_cast<size_t>(std::max<int64_t>(self.dim(), 1)), false);
  for (int64_t d : a.ints("dims")) flipped[static_cast<size_t>(wrap_dim(d, self.dim()))] = true;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (!flipped[static_cast<size_t>(d)]) continue;
    offset += (self.shape()[d] - 1) * strides[d];
    strides[d] = -strides[d];
  }
  // A view with negative strides: only the byte movers read it (Tensor::as_strided refuses it).
  copy_into(Tensor::from_storage(self.storage(), offset, self.shape(), strides, self.dtype()), out);
}

int64_t pos_mod(int64_t x, int64_t n) { return ((x % n) + n) % n; }

// x rolled by `shift` along dim d, written into the contiguous `out` of x's shape.
void roll_dim(const Tensor& x, int64_t d, int64_t shift, const Tensor& out) {
  const int64_t n = x.shape()[d];
  const int64_t s = pos_mod(shift, n);
  int64_t outer = 1;
  for (int64_t k = 0; k < d; ++k) outer *= x.shape()[k];
  std::vector<Piece> pieces;
  if (s > 0) pieces.push_back(copy_piece(x.slice(d, n - s, n), outer));
  if (s < n) pieces.push_back(copy_piece(x.slice(d, 0, n - s), outer));
  write_rows(out, outer, pieces);
}

void roll(const OpDef&, const Args& a, const Values& outputs) {
  const Tensor& self = a.tensor("self");
  const Tensor& out = outputs[0].tensor();
  if (out.numel() == 0) return;
  const std::vector<int64_t> shifts = a.ints("shifts");
  const std::vector<int64_t> dims = a.ints("dims");
  if (dims.empty()) {
    roll_dim(contiguous_copy(self).view({-1}), 0, shifts[0], out.view({-1}));
    return;
  }
  std::vector<int64_t> shift(static_cast<size_t>(self.dim()), 0);
  for (size_t i = 0; i < dims.size(); ++i)
    shift[static_cast<size_t>(wrap_dim(dims[i], self.dim()))] += shifts[i];
  std::vector<int64_t> rolled;  // the dims that move, each rolled in turn
  for (int64_t d = 0; d < self.dim(); ++d)
    if (pos_mod(shift[static_cast<size_t>(d)], self.shape()[d]) != 0) rolled.push_back(d);
  if (rolled.empty()) return copy_into(self, out);
  // Every roll but the last goes through a scratch tensor; the last writes the output.
  Tensor from = self;
  for (size_t k = 0; k < rolled.size(); ++k) {
    const int64_t d = rolled[k];
    const Tensor to =
        k + 1 == rolled.size() ? out : Tensor::uninitialized(self.shape(), self.dtype());
    roll_dim(from, d, shift[static_cast<size_t>(d)], to);
    from = to;
  }
}

// tril (lower) keeps j - i <= diagonal, triu keeps j - i >= diagonal; zeros elsewhere.
void tri(const Args& a, bool lower, const Tensor& out) {
  const Tensor& self = a.tensor("self");
  const int64_t diag = a.integer("diagonal");
  if (out.numel() == 0) return;
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
}

void tril(const OpDef&, const Args& a, const Values& o) { tri(a, true, o[0].tensor()); }
void triu(const OpDef&, const Args& a, const Values& o) { tri(a, false, o[0].tensor()); }

}  // namespace

void register_tile_kernels(KernelTable& t) {
  const std::vector<DType> all = shape_dtypes();
  for (auto [name, fn] : {std::pair{"aten.repeat.default", &repeat},
                          {"aten.flip.default", &flip},
                          {"aten.roll.default", &roll},
                          {"aten.tril.default", &tril},
                          {"aten.triu.default", &triu}})
    t.add(name, {.supports = &shape_supports, .dtypes = all, .run_into = fn});
}

}  // namespace crucible::cpu
