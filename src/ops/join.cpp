// Joining, tiling and rearranging: cat, stack, repeat, flip, roll, tril, triu, constant_pad_nd.
//
// Reference semantics (PyTorch 2.x, CPU; TensorShape.cpp, TensorTransformations.cpp,
// TriangularOps.cpp, PadNd.cpp):
//  - cat: a non-empty list; the result dtype is result_type over every tensor (the skipped ones
//    included: cat([f64 [0], f32 [2, 3]]) is f64); 1-d tensors of size 0 are skipped (legacy
//    behaviour) and the dim is wrapped against the first tensor that is not skipped (none: the
//    result is [0] and the dim is not checked); 0-d tensors raise; the others need the same
//    number of dims and equal sizes outside dim.
//  - stack: a non-empty list of equal shapes; dim wrapped against dim()+1; result_type
//    promotion as cat (stack is cat of the unsqueezed tensors).
//  - repeat: at least self.dim() repeats; self is viewed with leading unit dims, then tiled;
//    negative repeats raise.
//  - flip: dims wrapped, repeats raise; no dims copies.
//  - roll: without dims, one shift over the flattened tensor; else shifts and dims pair up;
//    out[(i + shift) mod n] = in[i].
//  - tril/triu: >= 2 dims; keep (i, j) of the last two dims where j - i <= diagonal (tril) or
//    j - i >= diagonal (triu), zero elsewhere; batched over leading dims; every dtype.
//  - constant_pad_nd: pad = (left, right) pairs starting at the last dim; even length of at
//    most 2*dim(); negative pads crop; a negative result size raises; the fill value is
//    converted to self's dtype as fill_ does (truncation for integers, != 0 for bool).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "crucible/core/error.h"
#include "crucible/ops/destination.h"
#include "crucible/ops/rules/join.h"
#include "ops/families.h"
#include "ops/meta_fn.h"
#include "ops/samples.h"
#include "ops/util.h"

namespace crucible {

// ---- rules shared with the backends (crucible/ops/rules/join.h) ----------------------------

namespace join {

CatSpec cat_spec(const std::vector<Tensor>& ts, int64_t dim) {
  CRUCIBLE_CHECK(!ts.empty(), "torch.cat(): expected a non-empty list of Tensors");
  std::vector<Value> vs(ts.begin(), ts.end());
  const DType out_t = opsutil::result_type(vs);
  for (size_t i = 0; i < ts.size(); ++i)
    if (ts[i].dim() == 0)
      op_error("zero-dimensional tensor (at position " + std::to_string(i) +
               ") cannot be concatenated");
  const Tensor* first = nullptr;
  for (const Tensor& t : ts)
    if (!cat_skipped(t)) {
      first = &t;
      break;
    }
  if (!first) return {{0}, out_t, -1};
  const int64_t d = wrap_dim(dim, first->dim());
  Shape shape = first->shape();
  shape[d] = 0;
  for (size_t i = 0; i < ts.size(); ++i) {
    const Tensor& t = ts[i];
    if (cat_skipped(t)) continue;
    if (t.dim() != first->dim())
      op_error("Tensors must have same number of dimensions: got " + std::to_string(first->dim()) +
               " and " + std::to_string(t.dim()));
    for (int64_t k = 0; k < t.dim(); ++k) {
      if (k == d || t.size(k) == first->size(k)) continue;
      op_error("Sizes of tensors must match except in dimension " + std::to_string(d) +
               ". Expected size " + std::to_string(first->size(k)) + " but got size " +
               std::to_string(t.size(k)) + " for tensor number " + std::to_string(i) +
               " in the list.");
    }
    shape[d] += t.size(d);
  }
  return {shape, out_t, d};
}

std::vector<Tensor> stack_inputs(const std::vector<Tensor>& ts, int64_t dim, int64_t& wrapped) {
  CRUCIBLE_CHECK(!ts.empty(), "stack expects a non-empty TensorList");
  wrapped = wrap_dim(dim, ts[0].dim() + 1);
  std::vector<Tensor> us;
  us.reserve(ts.size());
  for (size_t i = 0; i < ts.size(); ++i) {
    if (ts[i].shape() != ts[0].shape())
      op_error("stack expects each tensor to be equal size, but got " + shape_str(ts[0].shape()) +
               " at entry 0 and " + shape_str(ts[i].shape()) + " at entry " + std::to_string(i));
    us.push_back(ts[i].unsqueeze(wrapped));
  }
  return us;
}

Shape constant_pad_shape(const Tensor& self, const std::vector<int64_t>& pad,
                         std::vector<int64_t>& before) {
  const auto np = static_cast<int64_t>(pad.size());
  if (np % 2 != 0)
    op_error("Length of pad must be even but instead it equals " + std::to_string(np));
  if (np / 2 > self.dim())
    op_error(
        "Length of pad should be no more than twice the number of dimensions of the input. "
        "Pad length is " +
        std::to_string(np) + "while the input has " + std::to_string(self.dim()) + "dimensions.");
  const int64_t nd = self.dim();
  Shape shape = self.shape();
  before.assign(static_cast<size_t>(nd), 0);
  for (int64_t p = 0; p < np / 2; ++p) {
    const int64_t d = nd - 1 - p;
    const int64_t lo = pad[2 * p], hi = pad[2 * p + 1];
    const int64_t n = self.size(d) + lo + hi;
    if (n < 0)
      op_error("The input size " + std::to_string(self.size(d)) + ", plus negative padding " +
               std::to_string(lo) + " and " + std::to_string(hi) +
               " resulted in a negative output size, which is invalid. Check dimension " +
               std::to_string(d) + " of your input.");
    shape[d] = n;
    before[d] = lo;
  }
  return shape;
}

}  // namespace join

namespace {

using namespace samples;  // NOLINT(google-build-using-namespace)

constexpr DType f32 = DType::Float32;
constexpr DType f16 = DType::Float16;
constexpr DType f64 = DType::Float64;
constexpr DType i64 = DType::Int64;

// ---- references ----------------------------------------------------------------------------

// cat into `out` (of cat_spec's shape and dtype): each input not skipped, in turn along the
// dim cat_spec wraps.
void cat_into(const std::vector<Tensor>& ts, int64_t dim, const Tensor& out) {
  const join::CatSpec spec = join::cat_spec(ts, dim);
  if (spec.dim < 0) return;
  const int64_t d = spec.dim;
  int64_t at = 0;
  for (const Tensor& t : ts) {
    if (join::cat_skipped(t)) continue;
    out.slice(d, at, at + t.size(d)).copy_from(t);
    at += t.size(d);
  }
}

void cat_impl(const Args& a, const Values& outputs) {
  cat_into(a.tensors("tensors"), a.integer("dim"), outputs.at(0).tensor());
}

Values cat_meta(const Args& a) {
  const join::CatSpec spec = join::cat_spec(a.tensors("tensors"), a.integer("dim"));
  return {meta::fresh(spec.shape, spec.dtype)};
}

void stack_impl(const Args& a, const Values& outputs) {
  int64_t d = 0;
  const std::vector<Tensor> us = join::stack_inputs(a.tensors("tensors"), a.integer("dim"), d);
  cat_into(us, d, outputs.at(0).tensor());
}

Values stack_meta(const Args& a) {
  int64_t d = 0;
  const std::vector<Tensor> us = join::stack_inputs(a.tensors("tensors"), a.integer("dim"), d);
  const join::CatSpec spec = join::cat_spec(us, d);
  return {meta::fresh(spec.shape, spec.dtype)};
}

// Copies element by element with an index map: out[idx] = in[src(idx)].
void gather_map(const Tensor& in, const Tensor& out,
                const std::function<void(std::span<const int64_t>, Shape&)>& src_of) {
  Shape src(static_cast<size_t>(in.dim()));
  int64_t k = 0;
  const bool exact = !is_floating(in.dtype()) || !is_floating(out.dtype());
  for_each_index(out.shape(), [&](std::span<const int64_t> idx) {
    src_of(idx, src);
    int64_t li = 0;
    for (int64_t d = 0; d < in.dim(); ++d) li = li * in.size(d) + src[d];
    if (exact)
      out.set_int(k, in.get_int(li));
    else
      out.set(k, in.get(li));
    ++k;
  });
}

// repeat's checks; returns the output's shape (the dtype is self's).
Shape repeat_shape(const Args& a) {
  const Tensor& self = a.tensor("self");
  const auto reps = a.ints("repeats");
  const auto nr = static_cast<int64_t>(reps.size());
  CRUCIBLE_CHECK(nr >= self.dim(),
                 "Number of dimensions of repeat dims can not be smaller than number of "
                 "dimensions of tensor");
  Shape padded(static_cast<size_t>(nr - self.dim()), 1);
  padded.insert(padded.end(), self.shape().begin(), self.shape().end());
  Shape shape(static_cast<size_t>(nr));
  for (int64_t i = 0; i < nr; ++i) shape[i] = padded[i] * reps[i];
  for (int64_t s : shape)
    if (s < 0)
      op_error("Trying to create tensor with negative dimension " + std::to_string(s) + ": " +
               shape_str(shape));
  return shape;
}

void repeat_impl(const Args& a, const Values& outputs) {
  const Tensor& self = a.tensor("self");
  const auto nr = static_cast<int64_t>(a.ints("repeats").size());
  const int64_t lead = nr - self.dim();
  gather_map(self, outputs.at(0).tensor(), [&](std::span<const int64_t> idx, Shape& src) {
    for (int64_t d = 0; d < self.dim(); ++d) src[d] = idx[lead + d] % self.size(d);
  });
}

std::vector<bool> dim_mask(const std::vector<int64_t>& dims, int64_t ndim) {
  std::vector<bool> m(static_cast<size_t>(std::max<int64_t>(ndim, 1)), false);
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, ndim);
    if (m[w]) op_error("dim " + std::to_string(w) + " appears multiple times in the list of dims");
    m[w] = true;
  }
  return m;
}

void flip_impl(const Args& a, const Values& outputs) {
  const Tensor& self = a.tensor("self");
  const auto m = dim_mask(a.ints("dims"), self.dim());
  gather_map(self, outputs.at(0).tensor(), [&](std::span<const int64_t> idx, Shape& src) {
    for (int64_t d = 0; d < self.dim(); ++d) src[d] = m[d] ? self.size(d) - 1 - idx[d] : idx[d];
  });
}

int64_t pos_mod(int64_t a, int64_t n) { return ((a % n) + n) % n; }

// roll's checks; returns the shift of every dim (empty: one shift of the flattened tensor).
std::vector<int64_t> roll_shifts(const Args& a) {
  const Tensor& self = a.tensor("self");
  const auto shifts = a.ints("shifts");
  const auto dims = a.ints("dims");
  if (dims.empty()) {
    if (shifts.size() != 1)
      op_error("shifts and dimensions must align. shifts: " + std::to_string(shifts.size()) +
               ", dims:0");
    return {};
  }
  if (shifts.size() != dims.size())
    op_error("shifts and dimensions must align. shifts: " + std::to_string(shifts.size()) +
             ", dims:" + std::to_string(dims.size()));
  CRUCIBLE_CHECK(self.dim() > 0, "Dimension specified as 0 but tensor has no dimensions");
  std::vector<int64_t> shift(static_cast<size_t>(self.dim()), 0);
  for (size_t i = 0; i < dims.size(); ++i) shift[wrap_dim(dims[i], self.dim())] += shifts[i];
  return shift;
}

void roll_impl(const Args& a, const Values& outputs) {
  const Tensor& self = a.tensor("self");
  const Tensor& out = outputs.at(0).tensor();  // contiguous, shaped like self
  const auto shifts = a.ints("shifts");
  const std::vector<int64_t> shift = roll_shifts(a);
  if (shift.empty()) {
    const Tensor flat = self.contiguous().view({-1});
    if (flat.numel() > 0)
      gather_map(flat, out.view({-1}), [&](std::span<const int64_t> idx, Shape& src) {
        src[0] = pos_mod(idx[0] - shifts[0], flat.numel());
      });
    return;
  }
  if (self.numel() > 0)
    gather_map(self, out, [&](std::span<const int64_t> idx, Shape& src) {
      for (int64_t d = 0; d < self.dim(); ++d) src[d] = pos_mod(idx[d] - shift[d], self.size(d));
    });
}

void check_tri(const Tensor& self, bool lower) {
  if (self.dim() < 2)
    op_error(std::string(lower ? "tril" : "triu") +
             ": input tensor must have at least 2 dimensions");
}

// tril / triu into `out`, zero-filled (structured_ref's outputs are).
void tri_impl(const Args& a, const Values& outputs, bool lower) {
  const Tensor& self = a.tensor("self");
  const int64_t diag = a.integer("diagonal");
  const Tensor& out = outputs.at(0).tensor();
  const int64_t nd = self.dim();
  int64_t k = 0;
  const bool exact = !is_floating(self.dtype());
  for_each_index(self.shape(), [&](std::span<const int64_t> idx) {
    const int64_t j_minus_i = idx[nd - 1] - idx[nd - 2];
    const bool keep = lower ? j_minus_i <= diag : j_minus_i >= diag;
    if (keep) {
      if (exact)
        out.set_int(k, self.get_int(k));
      else
        out.set(k, self.get(k));
    }
    ++k;
  });
}

void constant_pad_impl(const Args& a, const Values& outputs) {
  const Tensor& self = a.tensor("self");
  std::vector<int64_t> before;
  const Shape shape = join::constant_pad_shape(self, a.ints("pad"), before);
  const int64_t nd = self.dim();
  const Tensor& out = outputs.at(0).tensor();
  const Value& v = a.value("value");
  if (v.kind() == ValueKind::Float)
    out.fill(v.to_double());
  else
    for (int64_t k = 0; k < out.numel(); ++k) out.set_int(k, v.to_int());
  // The part of self that lands inside the output (a negative pad crops), copied as a block.
  Tensor dst = out, src = self;
  for (int64_t d = 0; d < nd; ++d) {
    const int64_t lo = std::max<int64_t>(0, before[d]);
    const int64_t hi = std::min<int64_t>(shape[d], before[d] + self.size(d));
    if (hi <= lo) return;
    dst = dst.slice(d, lo, hi);
    src = src.slice(d, lo - before[d], hi - before[d]);
  }
  dst.copy_from(src);
}

// ---- cost ----------------------------------------------------------------------------------

double tensor_bytes(const Value& v) {
  double b = 0;
  if (v.is_tensor()) return static_cast<double>(v.tensor().numel() * v.tensor().itemsize());
  if (v.kind() == ValueKind::TensorList)
    for (const Tensor& t : v.tensors()) b += static_cast<double>(t.numel() * t.itemsize());
  return b;
}

// Data movement only: every input element read once, every output element written once.
// The input is `tensors` (cat, stack) or `self` (the others).
Cost move_cost(const Args& a, const Values& out) {
  Cost c;
  c.bytes = tensor_bytes(a.value(a.has("tensors") ? "tensors" : "self")) +
            (out.empty() ? 0 : tensor_bytes(out[0]));
  return c;
}

// ---- samples -------------------------------------------------------------------------------

Literal TL(std::vector<Literal> ts) { return Literal::list(std::move(ts)); }

std::vector<Sample> cat_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    for (DType t : {f32, f16}) {
      out.push_back(make("two halves [2048, 1024] dim 0 " + dtype_code_str(t),
                         {TL({T({2048, 1024}, t), T({2048, 1024}, t)}), I(0)}));
      out.push_back(
          make("features [64, 128, 768] x3 dim -1 " + dtype_code_str(t),
               {TL({T({64, 128, 768}, t), T({64, 128, 768}, t), T({64, 128, 768}, t)}), I(-1)}));
    }
    return out;
  }
  for (DType t : all_numeric_dtypes())
    out.push_back(make("dim 0 " + dtype_code_str(t), {TL({T({2, 3}, t), T({4, 3}, t)})}));
  out.push_back(make("dim 1", {TL({T({2, 3}, f32), T({2, 1}, f32), T({2, 4}, f32)}), I(1)}));
  out.push_back(make("dim -1, 3-d", {TL({T({2, 3, 2}, f32), T({2, 3, 5}, f32)}), I(-1)}));
  out.push_back(make("dim keyword", {TL({T({2, 3}, f32), T({2, 2}, f32)})}, {{"dim", I(1)}}));
  out.push_back(make("single tensor", {TL({T({3, 4}, f16)}), I(1)}));
  out.push_back(make("1-d", {TL({T({3}, i64), T({5}, i64)})}));
  out.push_back(make("promotion i32 with f16", {TL({T({2, 3}, DType::Int32), T({1, 3}, f16)})}));
  out.push_back(make("promotion bool, u8, i8", {TL({T({2, 3}, DType::Bool), T({1, 3}, DType::UInt8),
                                                    T({1, 3}, DType::Int8)})}));
  out.push_back(
      make("promotion f16 with bf16", {TL({T({2, 2}, f16), T({2, 2}, DType::BFloat16)}), I(1)}));
  out.push_back(
      make("legacy empty [0] skipped", {TL({T({0}, f32), T({2, 3}, f32), T({0}, f32)}), I(1)}));
  out.push_back(
      make("legacy empty f64 [0] still promotes", {TL({T({0}, f64), T({2, 3}, f32)}), I(-1)}));
  out.push_back(make("all legacy empty", {TL({T({0}, DType::Int8), T({0}, f16)}), I(3)}));
  out.push_back(make("empty along dim", {TL({T({2, 0}, f32), T({2, 3}, f32)}), I(1)}));
  out.push_back(make("empty other dim", {TL({T({0, 3}, f32), T({0, 3}, f32)}), I(1)}));
  out.push_back(make("transposed inputs", {TL({T_transposed(3, 4, f32), T({2, 4}, f32)})}));
  out.push_back(
      make("expanded and sliced", {TL({T({3, 4}, f32, {0, 1}), T({3, 2}, f32, {6, 3})}), I(1)}));
  out.push_back(
      make("special values", {TL({T_fill({8}, f32, "special"), T_fill({8}, f16, "special")})}));
  out.push_back(make("error: sizes differ outside dim", {TL({T({2, 3}, f32), T({2, 4}, f32)})}));
  out.push_back(make("error: dims differ", {TL({T({2, 3}, f32), T({2, 3, 1}, f32)})}));
  out.push_back(make("error: 0-d", {TL({T({}, f32), T({2}, f32)})}));
  out.push_back(make("error: empty list", {L({})}));
  out.push_back(make("error: dim out of range", {TL({T({2, 3}, f32)}), I(2)}));
  return out;
}

std::vector<Sample> stack_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    for (DType t : {f32, f16})
      out.push_back(make(
          "4 x [1024, 1024] dim 0 " + dtype_code_str(t),
          {TL({T({1024, 1024}, t), T({1024, 1024}, t), T({1024, 1024}, t), T({1024, 1024}, t)})}));
    return out;
  }
  for (DType t : all_numeric_dtypes())
    out.push_back(make("dim 0 " + dtype_code_str(t), {TL({T({2, 3}, t), T({2, 3}, t)})}));
  out.push_back(make("dim 1", {TL({T({2, 3}, f32), T({2, 3}, f32), T({2, 3}, f32)}), I(1)}));
  out.push_back(make("dim -1 (new last dim)", {TL({T({2, 3}, f32), T({2, 3}, f32)}), I(-1)}));
  out.push_back(
      make("dim 2 (end) keyword", {TL({T({2, 3}, f32), T({2, 3}, f32)})}, {{"dim", I(2)}}));
  out.push_back(make("0-d tensors", {TL({T({}, f32), T({}, f32), T({}, f32)})}));
  out.push_back(make("legacy [0] tensors are stacked", {TL({T({0}, f32), T({0}, f32)})}));
  out.push_back(
      make("promotion i32 with f16", {TL({T({2, 3}, DType::Int32), T({2, 3}, f16)}), I(-1)}));
  out.push_back(
      make("non-contiguous", {TL({T_transposed(3, 4, f32), T({3, 4}, f32, {0, 1})}), I(1)}));
  out.push_back(make("single", {TL({T({4}, i64)})}));
  out.push_back(make("error: shapes differ", {TL({T({2, 3}, f32), T({2, 4}, f32)})}));
  out.push_back(make("error: empty list", {L({})}));
  out.push_back(make("error: dim out of range", {TL({T({2, 3}, f32)}), I(3)}));
  return out;
}

std::vector<Sample> repeat_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    for (DType t : {f32, f16})
      out.push_back(
          make("[1024, 1024] x [2, 2] " + dtype_code_str(t), {T({1024, 1024}, t), L({2, 2})}));
    return out;
  }
  for (DType t : all_numeric_dtypes())
    out.push_back(make("2-d " + dtype_code_str(t), {T({2, 3}, t), L({2, 2})}));
  out.push_back(make("new leading dims", {T({2, 3}, f32), L({2, 1, 2})}));
  out.push_back(make("ones", {T({2, 3}, f32), L({1, 1})}));
  out.push_back(make("zero repeat", {T({2, 3}, f32), L({2, 0})}));
  out.push_back(make("0-d", {T({}, f32), L({3, 2})}));
  out.push_back(make("0-d, no repeats", {T({}, DType::Bool), L({})}));
  out.push_back(make("empty input", {T({0, 3}, f32), L({2, 2})}));
  out.push_back(make("transposed", {T_transposed(3, 4, f32), L({1, 2})}));
  out.push_back(make("expanded", {T({3, 4}, f16, {0, 1}), L({2, 1, 1})}));
  out.push_back(make("error: fewer repeats than dims", {T({2, 3}, f32), L({2})}));
  out.push_back(make("error: negative repeat", {T({2, 3}, f32), L({2, -1})}));
  return out;
}

std::vector<Sample> flip_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    for (DType t : {f32, f16})
      out.push_back(
          make("[2048, 2048] dim -1 " + dtype_code_str(t), {T({2048, 2048}, t), L({-1})}));
    return out;
  }
  for (DType t : all_numeric_dtypes())
    out.push_back(make("dim 0 " + dtype_code_str(t), {T({3, 4}, t), L({0})}));
  out.push_back(make("both dims", {T({3, 4}, f32), L({0, 1})}));
  out.push_back(make("negative dim, 3-d", {T({2, 3, 4}, f32), L({-1})}));
  out.push_back(make("no dims (copy)", {T({3, 4}, f32), L({})}));
  out.push_back(make("0-d", {T({}, f32), L({0})}));
  out.push_back(make("empty", {T({0, 4}, f32), L({0, 1})}));
  out.push_back(make("transposed", {T_transposed(3, 5, f32), L({1})}));
  out.push_back(make("expanded", {T({3, 4}, f16, {0, 1}), L({0, 1})}));
  out.push_back(make("sliced", {T({3, 4}, f32, {8, 2}), L({1})}));
  out.push_back(make("special values", {T_fill({24}, f32, "special"), L({0})}));
  out.push_back(make("error: repeated dim", {T({3, 4}, f32), L({0, -2})}));
  out.push_back(make("error: dim out of range", {T({3, 4}, f32), L({2})}));
  return out;
}

std::vector<Sample> roll_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    for (DType t : {f32, f16})
      out.push_back(make("shifted windows [64, 56, 56, 128] " + dtype_code_str(t),
                         {T({64, 56, 56, 128}, t), L({-3, -3}), L({1, 2})}));
    return out;
  }
  for (DType t : all_numeric_dtypes())
    out.push_back(make("flattened " + dtype_code_str(t), {T({2, 3}, t), L({2})}));
  out.push_back(make("negative shift, flattened", {T({2, 3}, f32), L({-1})}));
  out.push_back(make("one dim", {T({3, 4}, f32), L({1}), L({1})}));
  out.push_back(make("two dims", {T({3, 4}, f32), L({1, -5}), L({0, 1})}));
  out.push_back(make("same dim twice (shifts add)", {T({5}, f32), L({2, 4}), L({0, -1})}));
  out.push_back(make("shift larger than size", {T({3, 4}, f32), L({7}), L({-1})}));
  out.push_back(make("0-d", {T({}, f32), L({1})}));
  out.push_back(make("empty", {T({0, 3}, f32), L({1}), L({0})}));
  out.push_back(make("transposed", {T_transposed(3, 5, f32), L({2}), L({0})}));
  out.push_back(make("expanded", {T({3, 4}, f16, {0, 1}), L({1, 1}), L({0, 1})}));
  out.push_back(make("dims keyword", {T({3, 4}, f32), L({1})}, {{"dims", L({0})}}));
  out.push_back(make("error: two shifts without dims", {T({3, 4}, f32), L({1, 2})}));
  out.push_back(make("error: shifts and dims differ", {T({3, 4}, f32), L({1, 2}), L({0})}));
  out.push_back(make("error: dim out of range", {T({3, 4}, f32), L({1}), L({2})}));
  return out;
}

std::vector<Sample> tri_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    for (DType t : {f32, f16})
      out.push_back(make("attention mask [2048, 2048] " + dtype_code_str(t), {T({2048, 2048}, t)}));
    return out;
  }
  for (DType t : all_numeric_dtypes())
    out.push_back(make("square " + dtype_code_str(t), {T({4, 4}, t)}));
  out.push_back(make("wide, diagonal 1", {T({3, 5}, f32), I(1)}));
  out.push_back(make("tall, diagonal -1", {T({5, 3}, f32), I(-1)}));
  out.push_back(make("diagonal keyword -2", {T({4, 4}, f32)}, {{"diagonal", I(-2)}}));
  out.push_back(make("diagonal past the end", {T({3, 4}, f32), I(10)}));
  out.push_back(make("diagonal before the start", {T({3, 4}, f32), I(-10)}));
  out.push_back(make("batched", {T({2, 3, 4}, f32), I(0)}));
  out.push_back(make("empty", {T({0, 3}, f32)}));
  out.push_back(make("empty batch", {T({0, 3, 3}, f32)}));
  out.push_back(make("transposed", {T_transposed(4, 5, f32)}));
  out.push_back(make("expanded", {T({2, 3, 4}, f16, {0, 4, 1})}));
  out.push_back(make("special values", {T_fill({6, 6}, f32, "special")}));
  out.push_back(make("error: 1-d", {T({4}, f32)}));
  out.push_back(make("error: 0-d", {T({}, f32)}));
  return out;
}

std::vector<Sample> pad_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    for (DType t : {f32, f16})
      out.push_back(make("pad H, W [64, 64, 56, 56] " + dtype_code_str(t),
                         {T({64, 64, 56, 56}, t), L({1, 1, 1, 1})}));
    return out;
  }
  for (DType t : all_numeric_dtypes())
    out.push_back(make("last dim " + dtype_code_str(t), {T({2, 3}, t), L({1, 2})}));
  out.push_back(make("two dims", {T({2, 3}, f32), L({1, 0, 2, 1})}));
  out.push_back(make("all dims of 3-d", {T({2, 2, 2}, f32), L({1, 1, 0, 1, 1, 0}), F(0.5)}));
  out.push_back(make("value positional", {T({3, 3}, f32), L({1, 1}), F(-2.5)}));
  out.push_back(make("value keyword", {T({3, 3}, f16), L({0, 2})}, {{"value", F(7.0)}}));
  out.push_back(make("int value on float", {T({3}, f32), L({1, 1}), I(3)}));
  out.push_back(make("float value on int (truncated)", {T({2, 3}, i64), L({-1, 1}), F(2.7)}));
  out.push_back(make("float value on bool", {T({2, 3}, DType::Bool), L({1, 1}), F(0.5)}));
  out.push_back(make("infinite value", {T({2, 3}, f32), L({1, 1}), F(-INFINITY)}));
  out.push_back(make("negative pads crop", {T({4, 5}, f32), L({-1, -2, 1, -1})}));
  out.push_back(make("crop to empty", {T({2, 3}, f32), L({-2, -1})}));
  out.push_back(make("no pads", {T({2, 3}, f32), L({})}));
  out.push_back(make("0-d, no pads", {T({}, f32), L({})}));
  out.push_back(make("empty input padded", {T({0, 3}, f32), L({1, 1, 2, 0})}));
  out.push_back(make("transposed", {T_transposed(3, 4, f32), L({2, 1})}));
  out.push_back(make("expanded", {T({3, 4}, f16, {0, 1}), L({1, 1, 1, 1})}));
  out.push_back(make("special values", {T_fill({12}, f32, "special"), L({2, 2})}));
  out.push_back(make("error: odd pad length", {T({2, 3}, f32), L({1, 2, 3})}));
  out.push_back(make("error: too many pads", {T({2, 3}, f32), L({1, 1, 1, 1, 1, 1})}));
  out.push_back(make("error: negative result size", {T({2, 3}, f32), L({-2, -2})}));
  return out;
}

void add(OpRegistry& r, const char* schema, MetaFn meta, ImplFn impl, SampleFn samples) {
  OpDef op = OpDef::from_schema(schema, "join");
  op.dtypes = all_numeric_dtypes();
  op.meta = std::move(meta);
  op.ref = structured_ref(op.meta, std::move(impl));
  op.samples = std::move(samples);
  op.cost = move_cost;
  r.add(std::move(op));
}

}  // namespace

void register_join_ops(OpRegistry& r) {
  // The meta of an op whose output is a fresh tensor shaped like self, after `check`.
  auto like_self = [](std::function<void(const Args&)> check) -> MetaFn {
    return [check = std::move(check)](const Args& a) {
      check(a);
      return Values{meta::fresh_like(a.tensor("self"))};
    };
  };
  add(r, "aten::cat(Tensor[] tensors, int dim=0) -> Tensor", cat_meta, cat_impl, cat_samples);
  add(r, "aten::stack(Tensor[] tensors, int dim=0) -> Tensor", stack_meta, stack_impl,
      stack_samples);
  add(
      r, "aten::repeat(Tensor self, SymInt[] repeats) -> Tensor",
      [](const Args& a) { return Values{meta::fresh(repeat_shape(a), a.tensor("self").dtype())}; },
      repeat_impl, repeat_samples);
  add(r, "aten::flip(Tensor self, int[] dims) -> Tensor",
      like_self([](const Args& a) { dim_mask(a.ints("dims"), a.tensor("self").dim()); }), flip_impl,
      flip_samples);
  add(r, "aten::roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor",
      like_self([](const Args& a) { roll_shifts(a); }), roll_impl, roll_samples);
  add(
      r, "aten::tril(Tensor self, SymInt diagonal=0) -> Tensor",
      like_self([](const Args& a) { check_tri(a.tensor("self"), true); }),
      [](const Args& a, const Values& o) { tri_impl(a, o, true); }, tri_samples);
  add(
      r, "aten::triu(Tensor self, SymInt diagonal=0) -> Tensor",
      like_self([](const Args& a) { check_tri(a.tensor("self"), false); }),
      [](const Args& a, const Values& o) { tri_impl(a, o, false); }, tri_samples);
  add(
      r, "aten::constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor",
      [](const Args& a) {
        const Tensor& self = a.tensor("self");
        std::vector<int64_t> before;
        return Values{
            meta::fresh(join::constant_pad_shape(self, a.ints("pad"), before), self.dtype())};
      },
      constant_pad_impl, pad_samples);
}

}  // namespace crucible
