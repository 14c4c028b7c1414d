// Indexing along a dim: gather, scatter (.src, .value, .reduce, .value_reduce), scatter_add,
// scatter_reduce.two. index_select/index_add/masked_scatter are in indexing_select.cpp,
// index.Tensor/index_put in indexing_advanced.cpp.
//
// Reference semantics (PyTorch 2.x, CPU; ScatterGatherChecks.h, TensorAdvancedIndexing.cpp):
//  - index is int64 only ("gather(): Expected dtype int64 for index", "scatter(): ...");
//    index, self (and src) have the same number of dims (0-d counts as 1-d of size 1);
//    index.size(d) <= self.size(d) for d != dim and index.size(d) <= src.size(d) for every d;
//    these checks are skipped when index is empty. Indices are not wrapped: each must be in
//    [0, self.size(dim)) ("index 5 is out of bounds for dimension 0 with size 3").
//  - gather: out[p] = self[p with p[dim] = index[p]]; shape of index, dtype of self.
//  - scatter: a clone of self with out[p with p[dim] = index[p]] = src[p] (or value, converted
//    to self's dtype first); src must have self's dtype. Duplicate targets make scatter.src
//    nondeterministic in ATen: its samples give index size 1 along dim, so every target is
//    written at most once (scatter.value writes the same value, duplicates are fine).
//  - scatter.reduce / value_reduce: reduce 'add' or 'multiply' (accumulating into self).
//  - scatter_add: accumulate src. scatter_reduce.two: 'sum', 'prod', 'mean', 'amax', 'amin';
//    include_self=False leaves self out of the reduction for positions that receive a value
//    (untouched positions keep self); mean divides by the number of contributions (+1 with
//    self), with floor division for integral dtypes; amax/amin propagate NaN.
//  Accumulation is computed in double (int64 exactly, wrapping to the dtype's width) and
//  rounded once; ATen accumulates in the dtype, so the tolerance grows with the number of
//  contributions per output (tol_scale = index.size(dim), linear to cover cancellation).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "crucible/core/error.h"
#include "crucible/ops/destination.h"
#include "crucible/ops/rules/indexing.h"
#include "ops/families.h"
#include "ops/indexing_internal.h"
#include "ops/meta_fn.h"
#include "ops/samples.h"

namespace crucible {
namespace indexing {

// ---- rules shared with the backends (crucible/ops/rules/indexing.h) ------------------------

void check_gather_shapes(const Tensor& self, int64_t dim, const Tensor& index, const char* op,
                         const Tensor* src) {
  if (index.dtype() != DType::Int64)
    op_error(std::string(op) + "(): Expected dtype int64 for index");
  if (index.numel() == 0) return;
  if (ndim_or_1(index) != ndim_or_1(self))
    op_error(std::string("Index tensor must have the same number of dimensions as ") +
             (src ? "self" : "input") + " tensor");
  if (src && ndim_or_1(index) != ndim_or_1(*src))
    op_error("Index tensor must have the same number of dimensions as src tensor");
  for (int64_t d = 0; d < ndim_or_1(self); ++d) {
    const bool bad_self = d != dim && size_or_1(index, d) > size_or_1(self, d);
    const bool bad_src = src && size_or_1(index, d) > size_or_1(*src, d);
    if (!bad_self && !bad_src) continue;
    if (src)
      op_error("Expected index " + shape_str(index.shape()) + " to be smaller than self " +
               shape_str(self.shape()) + " apart from dimension " + std::to_string(dim) +
               " and to be smaller size than src " + shape_str(src->shape()));
    op_error("Size does not match at dimension " + std::to_string(d) + " expected index " +
             shape_str(index.shape()) + " to be smaller than self " + shape_str(self.shape()) +
             " apart from dimension " + std::to_string(dim));
  }
}

int64_t check_scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor* src,
                      const char* op) {
  const int64_t wrapped = wrap_dim(dim, self.dim());
  check_gather_shapes(self, wrapped, index, op, src);
  if (src && src->dtype() != self.dtype())
    op_error(std::string(op) + "(): Expected self.dtype to be equal to src.dtype");
  return wrapped;
}

namespace {

using namespace samples;  // NOLINT(google-build-using-namespace)

constexpr DType f32 = DType::Float32;
constexpr DType f16 = DType::Float16;
constexpr DType i64 = DType::Int64;
constexpr DType i32 = DType::Int32;
constexpr DType f64 = DType::Float64;

// Calls fn(position in index (logical), target logical index in self) for every index element.
template <typename Fn>
void for_each_target(const Tensor& self, int64_t dim, const Tensor& index, Fn fn) {
  const int64_t bound = size_or_1(self, dim);
  int64_t k = 0;
  std::vector<int64_t> target;
  for_each_index(index.shape(), [&](std::span<const int64_t> p) {
    const int64_t v = index.get_int(k);
    if (v < 0 || v >= bound)
      op_error("index " + std::to_string(v) + " is out of bounds for dimension " +
               std::to_string(dim) + " with size " + std::to_string(bound));
    target.assign(p.begin(), p.end());
    if (self.dim() > 0) target[static_cast<size_t>(dim)] = v;
    fn(k, p, self.dim() == 0 ? 0 : logical_index(self, target));
    ++k;
  });
}

// gather's checks; returns the wrapped dim.
int64_t check_gather(const Args& a) {
  const Tensor& self = a.tensor("self");
  const int64_t dim = wrap_dim(a.integer("dim"), self.dim());
  check_gather_shapes(self, dim, a.tensor("index"), "gather", nullptr);
  return dim;
}

Values gather_meta(const Args& a) {
  check_gather(a);
  return {meta::fresh(a.tensor("index").shape(), a.tensor("self").dtype())};
}

void gather_impl(const Args& a, const Values& outputs) {
  const Tensor& self = a.tensor("self");
  const int64_t dim = check_gather(a);  // the wrapped dim (the index's range is checked below)
  const Tensor& out = outputs.at(0).tensor();
  for_each_target(
      self, dim, a.tensor("index"),
      [&](int64_t k, std::span<const int64_t>, int64_t t) { copy_element(self, t, out, k); });
}

enum class Reduce { None, Sum, Prod, Mean, Amax, Amin };

Reduce parse_reduce(const std::string& s, bool two) {
  if (two) {
    if (s == "sum") return Reduce::Sum;
    if (s == "prod") return Reduce::Prod;
    if (s == "mean") return Reduce::Mean;
    if (s == "amax") return Reduce::Amax;
    if (s == "amin") return Reduce::Amin;
    op_error("reduce argument must be either sum, prod, mean, amax or amin, got " + s);
  }
  if (s == "add") return Reduce::Sum;
  if (s == "multiply") return Reduce::Prod;
  op_error("reduce argument must be either add or multiply.");
}

// The general scatter: src (a tensor, or a value as a 0-d tensor of self's dtype when
// src_is_value), reduced into a clone of self.
// A scatter into `out` (contiguous, shaped like self): self's values, then src's (or the value's)
// written or reduced at the index's targets (whose range is checked here: a value check).
void scatter_into(const Tensor& self, int64_t dim_arg, const Tensor& index, const Tensor& src,
                  bool src_is_value, Reduce reduce, bool include_self, const char* op,
                  const Tensor& out) {
  const int64_t dim = check_scatter(self, dim_arg, index, src_is_value ? nullptr : &src, op);
  const DType t = self.dtype();
  const bool exact = !is_floating(t);
  const int64_t n = self.numel();
  out.copy_from(self);
  std::vector<double> acc(static_cast<size_t>(n));
  std::vector<int64_t> iacc(static_cast<size_t>(n));
  std::vector<int64_t> count(static_cast<size_t>(n), 0);
  for (int64_t i = 0; i < n; ++i) {
    if (exact)
      iacc[i] = self.get_int(i);
    else
      acc[i] = self.get(i);
  }
  auto src_at = [&](std::span<const int64_t> p) {
    return src_is_value ? int64_t{0} : logical_index(src, p);
  };
  for_each_target(self, dim, index, [&](int64_t, std::span<const int64_t> p, int64_t tg) {
    const int64_t s = src_at(p);
    const auto u = static_cast<size_t>(tg);
    if (reduce == Reduce::None) {
      copy_element(src, s, out, tg);
      return;
    }
    const bool first = count[u]++ == 0 && !include_self;
    if (exact) {
      const int64_t v = src.get_int(s);
      int64_t& x = iacc[u];
      if (first) {
        x = v;
        return;
      }
      switch (reduce) {
        case Reduce::Sum:
        case Reduce::Mean:
          x = static_cast<int64_t>(static_cast<uint64_t>(x) + static_cast<uint64_t>(v));
          break;
        case Reduce::Prod:
          x = static_cast<int64_t>(static_cast<uint64_t>(x) * static_cast<uint64_t>(v));
          break;
        case Reduce::Amax:
          x = std::max(x, v);
          break;
        case Reduce::Amin:
          x = std::min(x, v);
          break;
        case Reduce::None:
          break;
      }
    } else {
      const double v = src.get(s);
      double& x = acc[u];
      if (first) {
        x = v;
        return;
      }
      switch (reduce) {
        case Reduce::Sum:
        case Reduce::Mean:
          x += v;
          break;
        case Reduce::Prod:
          x *= v;
          break;
        case Reduce::Amax:
          x = (std::isnan(x) || std::isnan(v)) ? std::numeric_limits<double>::quiet_NaN()
                                               : std::max(x, v);
          break;
        case Reduce::Amin:
          x = (std::isnan(x) || std::isnan(v)) ? std::numeric_limits<double>::quiet_NaN()
                                               : std::min(x, v);
          break;
        case Reduce::None:
          break;
      }
    }
  });
  if (reduce == Reduce::None) return;
  for (int64_t i = 0; i < n; ++i) {
    const auto u = static_cast<size_t>(i);
    if (count[u] == 0) continue;  // untouched: keeps self
    const int64_t c = count[u] + (include_self ? 1 : 0);
    if (exact) {
      int64_t x = iacc[u];
      if (reduce == Reduce::Mean) {
        // Floor division, as ATen's div_(count, rounding_mode='floor') for integers. The sum is
        // taken at int64 width first (ATen sums in the dtype: the same value mod 2^width).
        int64_t q = x / c;
        if ((x % c != 0) && ((x < 0) != (c < 0))) --q;
        x = q;
      }
      out.set_int(i, x);
    } else {
      out.set(i, reduce == Reduce::Mean ? acc[u] / static_cast<double>(c) : acc[u]);
    }
  }
}

// A Scalar value as a 0-d tensor of self's dtype (converted as fill_ converts).
Tensor value_tensor(const Value& v, DType t) {
  Tensor out = Tensor::empty({}, t);
  if (v.kind() == ValueKind::Float)
    out.set(0, v.to_double());
  else
    out.set_int(0, v.to_int());
  return out;
}

// The scatters' implementations: `src_is_value` (a Scalar `value`, else a tensor `src`),
// `reduces` (a `reduce` argument; `two`: scatter_reduce.two's spelling and include_self), else
// `fixed` (scatter: none; scatter_add: a sum).
ImplFn scatter_impl(bool src_is_value, bool reduces, bool two, const char* op,
                    Reduce fixed = Reduce::None) {
  return [=](const Args& a, const Values& outputs) {
    const Tensor& self = a.tensor("self");
    const Reduce reduce = reduces ? parse_reduce(a.str("reduce"), two) : fixed;
    const Tensor src =
        src_is_value ? value_tensor(a.value("value"), self.dtype()) : a.tensor("src");
    scatter_into(self, a.integer("dim"), a.tensor("index"), src, src_is_value, reduce,
                 two ? a.flag("include_self") : true, op, outputs.at(0).tensor());
  };
}

// The meta of a scatter: `reduces` whether it has a reduce argument (`two`: the
// scatter_reduce.two spelling), `src_is_value` whether it scatters a Scalar `value` (else a
// tensor `src`).
MetaFn scatter_meta(bool src_is_value, bool reduces, bool two, const char* op) {
  return [=](const Args& a) {
    if (reduces) parse_reduce(a.str("reduce"), two);
    const Tensor& self = a.tensor("self");
    check_scatter(self, a.integer("dim"), a.tensor("index"),
                  src_is_value ? nullptr : &a.tensor("src"), op);
    return Values{meta::fresh_like(self)};
  };
}

double nbytes(const Tensor& t) { return static_cast<double>(t.numel() * t.itemsize()); }

// gather: index and gathered values read, output written. scatter: self copied (read and
// written), index and src read; one flop per accumulated element.
Cost gather_cost(const Args& a, const Values& out) {
  Cost c;
  if (out.empty() || !out[0].is_tensor()) return c;
  c.bytes = nbytes(a.tensor("index")) + 2 * nbytes(out[0].tensor());
  return c;
}
Cost scatter_cost(const Args& a, const Values& out) {
  Cost c;
  if (out.empty() || !out[0].is_tensor()) return c;
  const Tensor& index = a.tensor("index");
  c.bytes = 2 * nbytes(out[0].tensor()) + nbytes(index) +
            static_cast<double>(index.numel() * out[0].tensor().itemsize());
  c.flops = static_cast<double>(index.numel());
  return c;
}

double scatter_tol(const Args& a) {
  const Tensor& self = a.tensor("self");
  const Tensor& index = a.tensor("index");
  if (index.dim() == 0 || self.dim() == 0) return 1;
  const int64_t dim = wrap_dim(a.integer("dim"), self.dim());
  return static_cast<double>(std::max<int64_t>(1, index.size(dim)));
}

// ---- samples -------------------------------------------------------------------------------
// The index role draws in [0, self.size(0)): cases along another dim keep self.size(0) <=
// self.size(dim); out-of-range cases index along dim 0.

std::vector<Sample> gather_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    for (DType t : {f32, f16})
      out.push_back(make("[2048, 2048] dim 1 " + dtype_code_str(t),
                         {T({2048, 2048}, t), I(1), T({2048, 1024}, i64)}));
    return out;
  }
  for (DType t : all_numeric_dtypes())
    out.push_back(make("dim 0 " + dtype_code_str(t), {T({4, 5}, t), I(0), T({6, 5}, i64)}));
  out.push_back(make("dim 1", {T({3, 5}, f32), I(1), T({3, 7}, i64)}));
  out.push_back(make("dim -1, smaller index", {T({3, 4, 5}, f32), I(-1), T({2, 3, 2}, i64)}));
  out.push_back(make("0-d", {T({}, f32), I(0), T({}, i64)}));
  out.push_back(make("1-d", {T({6}, f64), I(0), T({9}, i64)}));
  out.push_back(make("empty index", {T({3, 4}, f32), I(0), T({0, 4}, i64)}));
  out.push_back(make("empty index, other shape", {T({3, 4}, f32), I(1), T({0}, i64)}));
  out.push_back(make("transposed self", {T_transposed(4, 6, f32), I(1), T({4, 3}, i64)}));
  out.push_back(make("expanded index", {T({4, 5}, f32), I(0), T({3, 5}, i64, {0, 1})}));
  out.push_back(make("sparse_grad keyword", {T({4, 5}, f16), I(0), T({2, 5}, i64)},
                     {{"sparse_grad", B(true)}}));
  out.push_back(make("special values", {T_fill({4, 6}, f32, "special"), I(0), T({8, 6}, i64)}));
  out.push_back(
      make("error: index out of range", {T({4, 5}, f32), I(0), T_fill({3, 5}, i64, "oob")}));
  out.push_back(make("error: i32 index", {T({4, 5}, f32), I(0), T({3, 5}, i32)}));
  out.push_back(make("error: index dims differ", {T({4, 5}, f32), I(0), T({3}, i64)}));
  out.push_back(make("error: index larger outside dim", {T({4, 5}, f32), I(0), T({2, 6}, i64)}));
  out.push_back(make("error: dim out of range", {T({4, 5}, f32), I(2), T({2, 5}, i64)}));
  return out;
}

// Samples shared by the src forms of scatter. `unique` keeps index size 1 along dim.
std::vector<Sample> scatter_src_like(const SampleContext& ctx, bool unique,
                                     std::vector<std::pair<std::string, Literal>> kw,
                                     bool all_dtypes = true) {
  std::vector<Sample> out;
  const int64_t r = unique ? 1 : 3;
  if (ctx.performance) {
    for (DType t : {f32, f16})
      out.push_back(make("[2048, 2048] dim 0 " + dtype_code_str(t),
                         {T({2048, 2048}, t), I(0), T({r, 2048}, i64), T({r, 2048}, t)}, kw));
    return out;
  }
  if (all_dtypes)
    for (DType t : all_numeric_dtypes())
      out.push_back(make("dim 0 " + dtype_code_str(t),
                         {T({4, 5}, t), I(0), T({r, 5}, i64), T({r, 5}, t)}, kw));
  else
    for (DType t : {f32, f16, DType::BFloat16, DType::Float64, i64, i32})
      out.push_back(make("dim 0 " + dtype_code_str(t),
                         {T({4, 5}, t), I(0), T({r, 5}, i64), T({r, 5}, t)}, kw));
  out.push_back(make("dim 1", {T({3, 6}, f32), I(1), T({3, r}, i64), T({3, 4}, f32)}, kw));
  out.push_back(make("dim -1, 3-d, index smaller than src",
                     {T({2, 3, 4}, f32), I(-1), T({2, 2, r}, i64), T({2, 3, 4}, f32)}, kw));
  out.push_back(make("0-d", {T({}, f32), I(0), T({}, i64), T({}, f32)}, kw));
  out.push_back(make("1-d", {T({5}, f64), I(0), T({r}, i64), T({4}, f64)}, kw));
  out.push_back(make("empty index", {T({3, 4}, f32), I(0), T({0}, i64), T({0}, f32)}, kw));
  out.push_back(
      make("transposed self", {T_transposed(4, 6, f32), I(1), T({4, r}, i64), T({4, 3}, f32)}, kw));
  out.push_back(
      make("expanded src", {T({4, 5}, f32), I(0), T({r, 5}, i64), T({r, 5}, f32, {0, 1})}, kw));
  out.push_back(make(
      "special values",
      {T_fill({4, 6}, f32, "special"), I(0), T({r, 6}, i64), T_fill({r, 6}, f32, "special")}, kw));
  out.push_back(make("error: index out of range",
                     {T({4, 5}, f32), I(0), T_fill({1, 5}, i64, "oob"), T({1, 5}, f32)}, kw));
  out.push_back(
      make("error: src dtype differs", {T({4, 5}, f32), I(0), T({1, 5}, i64), T({1, 5}, f64)}, kw));
  out.push_back(
      make("error: i32 index", {T({4, 5}, f32), I(0), T({1, 5}, i32), T({1, 5}, f32)}, kw));
  out.push_back(make("error: index larger than src",
                     {T({4, 5}, f32), I(0), T({1, 5}, i64), T({1, 3}, f32)}, kw));
  out.push_back(
      make("error: index dims differ", {T({4, 5}, f32), I(0), T({5}, i64), T({1, 5}, f32)}, kw));
  return out;
}

std::vector<Sample> scatter_value_samples(const SampleContext& ctx,
                                          std::vector<std::pair<std::string, Literal>> kw) {
  std::vector<Sample> out;
  if (ctx.performance) {
    for (DType t : {f32, f16})
      out.push_back(make("[2048, 2048] dim 1 " + dtype_code_str(t),
                         {T({2048, 2048}, t), I(1), T({2048, 64}, i64), F(1.5)}, kw));
    return out;
  }
  for (DType t : all_numeric_dtypes())
    out.push_back(
        make("dim 0 " + dtype_code_str(t), {T({4, 5}, t), I(0), T({3, 5}, i64), F(2.5)}, kw));
  out.push_back(make("int value", {T({3, 6}, f32), I(1), T({3, 4}, i64), I(-3)}, kw));
  out.push_back(make("int value on i64", {T({3, 6}, i64), I(1), T({3, 4}, i64), I(7)}, kw));
  out.push_back(make("bool value", {T({3, 6}, DType::Bool), I(1), T({3, 4}, i64), B(true)}, kw));
  out.push_back(make("0-d", {T({}, f32), I(0), T({}, i64), F(-1.0)}, kw));
  out.push_back(make("empty index", {T({3, 4}, f32), I(0), T({0, 4}, i64), F(1.0)}, kw));
  out.push_back(
      make("transposed self", {T_transposed(4, 6, f16), I(1), T({4, 2}, i64), F(0.25)}, kw));
  out.push_back(make("nan value", {T({4, 4}, f32), I(0), T({2, 4}, i64), F(NAN)}, kw));
  out.push_back(make("error: index out of range",
                     {T({4, 5}, f32), I(0), T_fill({2, 5}, i64, "oob"), F(1.0)}, kw));
  out.push_back(
      make("error: index larger outside dim", {T({4, 5}, f32), I(0), T({2, 6}, i64), F(1.0)}, kw));
  return out;
}

std::vector<Sample> scatter_reduce_two_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    for (DType t : {f32, f16})
      out.push_back(
          make("sum [4096, 256] into [512, 256] " + dtype_code_str(t),
               {T({512, 256}, t), I(0), T({4096, 256}, i64), T({4096, 256}, t), S("sum")}));
    return out;
  }
  for (const char* red : {"sum", "prod", "mean", "amax", "amin"}) {
    const std::string rs = red;
    for (DType t : {f32, f16, DType::BFloat16, DType::Float64, i64, i32, DType::UInt8, DType::Int8})
      out.push_back(make(rs + " " + dtype_code_str(t),
                         {T({3, 4}, t), I(0), T({6, 4}, i64), T({6, 4}, t), S(rs)}));
    out.push_back(make(rs + " exclude self",
                       {T({3, 4}, f32), I(0), T({5, 4}, i64), T({5, 4}, f32), S(rs)},
                       {{"include_self", B(false)}}));
    out.push_back(make(rs + " exclude self i64",
                       {T({3, 4}, i64), I(1), T({3, 5}, i64), T({3, 5}, i64), S(rs)},
                       {{"include_self", B(false)}}));
    out.push_back(make(rs + " special values",
                       {T_fill({4, 6}, f32, "special"), I(0), T({8, 6}, i64),
                        T_fill({8, 6}, f32, "special"), S(rs)},
                       {{"include_self", B(false)}}));
  }
  out.push_back(make("sum 0-d", {T({}, f32), I(0), T({}, i64), T({}, f32), S("sum")}));
  out.push_back(
      make("mean empty index", {T({3, 4}, f32), I(0), T({0, 4}, i64), T({0, 4}, f32), S("mean")}));
  out.push_back(make("amax transposed self",
                     {T_transposed(4, 6, f32), I(1), T({4, 8}, i64), T({4, 8}, f32), S("amax")}));
  out.push_back(make("prod bool", {T({3, 4}, DType::Bool), I(0), T({5, 4}, i64),
                                   T({5, 4}, DType::Bool), S("prod")}));
  out.push_back(make("error: unknown reduce",
                     {T({3, 4}, f32), I(0), T({2, 4}, i64), T({2, 4}, f32), S("max")}));
  out.push_back(make("error: index out of range",
                     {T({3, 4}, f32), I(0), T_fill({2, 4}, i64, "oob"), T({2, 4}, f32), S("sum")}));
  out.push_back(make("error: src dtype differs",
                     {T({3, 4}, f32), I(0), T({2, 4}, i64), T({2, 4}, f16), S("sum")}));
  return out;
}

OpDef make_op(const char* schema, MetaFn meta, ImplFn impl, SampleFn samples, bool accumulates) {
  OpDef op = OpDef::from_schema(schema, "indexing");
  op.dtypes = all_numeric_dtypes();
  op.meta = std::move(meta);
  op.value_checks = true;  // indices out of range
  op.ref = structured_ref(op.meta, std::move(impl));
  op.samples = std::move(samples);
  op.roles["index"] = ArgRole::index_into("self", 0);
  op.cost = scatter_cost;
  if (accumulates) {
    op.compare.tol_scale = [schema = op.schema](const Values& a) {
      return scatter_tol(Args(a, schema));
    };
  }
  return op;
}

}  // namespace

void register_gather_scatter_ops(OpRegistry& r) {
  {
    OpDef op = make_op(
        "aten::gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor",
        gather_meta, gather_impl, gather_samples, false);
    op.cost = gather_cost;
    r.add(std::move(op));
  }
  r.add(make_op(
      "aten::scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor",
      scatter_meta(false, false, false, "scatter"), scatter_impl(false, false, false, "scatter"),
      [](const SampleContext& c) { return scatter_src_like(c, true, {}); }, false));
  r.add(make_op(
      "aten::scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor",
      scatter_meta(true, false, false, "scatter"), scatter_impl(true, false, false, "scatter"),
      [](const SampleContext& c) { return scatter_value_samples(c, {}); }, false));
  r.add(make_op(
      "aten::scatter.reduce(Tensor self, int dim, Tensor index, Tensor src, *, str reduce) -> "
      "Tensor",
      scatter_meta(false, true, false, "scatter"), scatter_impl(false, true, false, "scatter"),
      [](const SampleContext& c) {
        auto s = scatter_src_like(c, false, {{"reduce", S("add")}});
        auto m = scatter_src_like(c, false, {{"reduce", S("multiply")}}, false);
        s.insert(s.end(), m.begin(), m.end());
        if (!c.performance)
          s.push_back(make("error: unknown reduce",
                           {T({3, 4}, f32), I(0), T({2, 4}, i64), T({2, 4}, f32)},
                           {{"reduce", S("sum")}}));
        return s;
      },
      true));
  r.add(make_op(
      "aten::scatter.value_reduce(Tensor self, int dim, Tensor index, Scalar value, *, str "
      "reduce) -> Tensor",
      scatter_meta(true, true, false, "scatter"), scatter_impl(true, true, false, "scatter"),
      [](const SampleContext& c) {
        auto s = scatter_value_samples(c, {{"reduce", S("add")}});
        auto m = scatter_value_samples(c, {{"reduce", S("multiply")}});
        s.insert(s.end(), m.begin(), m.end());
        return s;
      },
      true));
  r.add(make_op(
      "aten::scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor",
      scatter_meta(false, false, false, "scatter_add"),
      scatter_impl(false, false, false, "scatter_add", Reduce::Sum),
      [](const SampleContext& c) { return scatter_src_like(c, false, {}); }, true));
  r.add(make_op(
      "aten::scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, "
      "bool include_self=True) -> Tensor",
      scatter_meta(false, true, true, "scatter_reduce"),
      scatter_impl(false, true, true, "scatter_reduce"), scatter_reduce_two_samples, true));
}

}  // namespace indexing

void register_indexing_ops(OpRegistry& r) {
  indexing::register_gather_scatter_ops(r);
  indexing::register_index_select_ops(r);
  indexing::register_index_ops(r);
}

}  // namespace crucible
