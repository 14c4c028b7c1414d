// index_select, index_add, masked_scatter.
//
// Reference semantics (PyTorch 2.x, CPU; TensorAdvancedIndexing.cpp):
//  - index_select: index 0-d or 1-d ("index_select(): Index is supposed to be a vector"), i32
//    or i64; indices are not wrapped: each in [0, size) else "index out of range in self"; the
//    result is self with dim's size replaced by index.numel(); a 0-d self takes one index and
//    gives a 0-d result.
//  - index_add: out = self; out[.., index[i], ..] += alpha * source[.., i, ..]; index 0-d/1-d
//    of i32/i64 with index.numel() == source.size(dim); source has self's dtype and shape
//    outside dim; duplicates accumulate (exact in int64 for integral dtypes; in double and
//    rounded once for floats: tol_scale = number of indices, as ATen adds one at a time in the
//    dtype).
//  - masked_scatter: self and mask broadcast to a common shape; mask must be bool (2.x removed
//    the deprecated u8 masks); source has self's dtype and at least as many elements as the
//    mask has true values; the k-th true position (row-major) takes source's k-th element.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/ops/destination.h"
#include "crucible/ops/rules/indexing.h"
#include "ops/families.h"
#include "ops/indexing_internal.h"
#include "ops/meta_fn.h"
#include "ops/samples.h"
#include "ops/util.h"

namespace crucible::indexing {

// ---- rules shared with the backends (crucible/ops/rules/indexing.h) ------------------------

void check_vector_index(const Tensor& index, const std::string& op) {
  if (index.dim() > 1) op_error(op + "(): Index is supposed to be a vector");
  if (index.dtype() != DType::Int64 && index.dtype() != DType::Int32)
    op_error(op + "(): Expected dtype int32 or int64 for index");
}

Shape index_select_shape(const Tensor& self, int64_t dim, const Tensor& index) {
  const int64_t wrapped = wrap_dim(dim, self.dim());
  check_vector_index(index, "index_select");
  if (self.dim() == 0) {
    if (index.numel() != 1)
      op_error("index_select(): Index to scalar can have only 1 value, got " +
               std::to_string(index.numel()) + " value(s)");
    return {};
  }
  Shape shape = self.shape();
  shape[wrapped] = index.numel();
  return shape;
}

int64_t check_index_add(const Tensor& self, int64_t dim, const Tensor& index,
                        const Tensor& source) {
  const int64_t wrapped = wrap_dim(dim, self.dim());
  check_vector_index(index, "index_add_");
  if (source.dtype() != self.dtype())
    op_error("index_add_(): self (" + scalar_type_name(self.dtype()) + ") and source (" +
             scalar_type_name(source.dtype()) + ") must have the same scalar type");
  const int64_t src_dim_size =
      source.dim() == 0 ? 1 : source.size(wrapped < source.dim() ? wrapped : 0);
  if (index.numel() != src_dim_size)
    op_error("index_add_(): Number of indices (" + std::to_string(index.numel()) +
             ") should be equal to source.size(dim) (" + std::to_string(src_dim_size) + ")");
  const bool same_rank = std::max<int64_t>(source.dim(), 1) == std::max<int64_t>(self.dim(), 1);
  bool shape_ok = same_rank;
  for (int64_t d = 0; shape_ok && d < self.dim(); ++d)
    if (d != wrapped && self.size(d) != source.size(d)) shape_ok = false;
  if (!shape_ok)
    op_error(
        "index_add_(): source tensor shape must match self tensor shape, excluding the "
        "specified dimension. Got self.shape = " +
        shape_str(self.shape()) + " source.shape = " + shape_str(source.shape()));
  return wrapped;
}

namespace {

using namespace samples;  // NOLINT(google-build-using-namespace)

constexpr DType f32 = DType::Float32;
constexpr DType f16 = DType::Float16;
constexpr DType i64 = DType::Int64;
constexpr DType i32 = DType::Int32;
constexpr DType b8 = DType::Bool;

int64_t checked_index(const Tensor& index, int64_t k, int64_t size) {
  const int64_t v = index.get_int(k);
  if (v < 0 || v >= size) op_error("index out of range in self");
  return v;
}

// index_select into its output (meta: index_select_shape).
void index_select_impl(const Args& a, const Values& outs) {
  const Tensor& self = a.tensor("self");
  const Tensor& index = a.tensor("index");
  const Tensor& out = outs.at(0).tensor();
  if (self.dim() == 0) {
    checked_index(index, 0, 1);
    out.copy_from(self);
    return;
  }
  const int64_t dim = wrap_dim(a.integer("dim"), self.dim());
  // Slice by slice along `dim` (the real-model gathers take 50k rows), every index checked
  // first.
  std::vector<int64_t> rows(static_cast<size_t>(index.numel()));
  for (int64_t k = 0; k < index.numel(); ++k)
    rows[static_cast<size_t>(k)] = checked_index(index, k, self.size(dim));
  for (int64_t k = 0; k < index.numel(); ++k)
    out.select(dim, k).copy_from(self.select(dim, rows[static_cast<size_t>(k)]));
}

// index_add into its output (meta: check_index_add, fresh_like(self)).
void index_add_impl(const Args& a, const Values& outs) {
  const Tensor& self = a.tensor("self");
  const Tensor& index = a.tensor("index");
  const Tensor& source = a.tensor("source");
  const int64_t dim = check_index_add(self, a.integer("dim"), index, source);
  const Value& alpha = a.value("alpha");
  const bool exact = !is_floating(self.dtype());
  const int64_t n = self.numel();
  opsutil::Doubles acc = exact ? opsutil::Doubles() : opsutil::read_doubles(self);
  std::vector<int64_t> iacc(exact ? static_cast<size_t>(n) : 0);
  if (exact)
    for (int64_t i = 0; i < n; ++i) iacc[i] = self.get_int(i);
  // alpha is converted to the dtype first (truncated for integral dtypes).
  const int64_t ialpha = alpha.kind() == ValueKind::Float
                             ? static_cast<int64_t>(std::trunc(alpha.to_double()))
                             : alpha.to_int();
  const double falpha = alpha.to_double();
  const int64_t self_size = self.dim() == 0 ? 1 : self.size(dim);
  std::vector<int64_t> target;
  int64_t k = 0;
  for_each_index(source.shape(), [&](std::span<const int64_t> p) {
    const int64_t pos = source.dim() == 0 ? 0 : p[dim];
    const int64_t v = checked_index(index, pos, self_size);
    target.assign(p.begin(), p.end());
    int64_t tg = 0;
    if (self.dim() > 0) {
      target[dim] = v;
      tg = logical_index(self, target);
    }
    if (exact)
      iacc[tg] = static_cast<int64_t>(static_cast<uint64_t>(iacc[tg]) +
                                      static_cast<uint64_t>(ialpha) *
                                          static_cast<uint64_t>(source.get_int(k)));
    else
      acc[tg] += falpha * source.get(k);
    ++k;
  });
  const Tensor& out = outs.at(0).tensor();
  if (exact)
    for (int64_t i = 0; i < n; ++i) out.set_int(i, iacc[i]);
  else
    opsutil::write_doubles(out, acc.data());
}

// masked_scatter's checks; returns the output's shape (the dtype is self's).
Shape masked_scatter_shape(const Args& a) {
  const Tensor& self = a.tensor("self");
  const Tensor& mask = a.tensor("mask");
  const Tensor& source = a.tensor("source");
  if (mask.dtype() != b8)
    op_error("masked_scatter_ only supports boolean masks, but got mask with dtype " +
             scalar_type_name(mask.dtype()));
  if (source.dtype() != self.dtype())
    op_error("masked_scatter_: expected self and source to have same dtypes but got " +
             scalar_type_name(self.dtype()) + " and " + scalar_type_name(source.dtype()));
  return broadcast_shapes(self.shape(), mask.shape());
}

// masked_scatter into its output (meta: masked_scatter_shape); a source shorter than the mask's
// true count raises (a check on the values).
void masked_scatter_impl(const Args& a, const Values& outs) {
  const Tensor& self = a.tensor("self");
  const Tensor& mask = a.tensor("mask");
  const Tensor& source = a.tensor("source");
  const Tensor& out = outs.at(0).tensor();
  const Tensor s = self.expand(out.shape());
  const Tensor m = mask.expand(out.shape());
  int64_t used = 0;
  for (int64_t i = 0; i < out.numel(); ++i) {
    if (m.get_int(i) != 0) {
      if (used >= source.numel()) op_error("Number of elements of source < number of ones in mask");
      copy_element(source, used++, out, i);
    } else {
      copy_element(s, i, out, i);
    }
  }
}

double nbytes(const Tensor& t) { return static_cast<double>(t.numel() * t.itemsize()); }

Cost index_select_cost(const Args& a, const Values& out) {
  Cost c;
  if (out.empty() || !out[0].is_tensor()) return c;
  c.bytes = nbytes(a.tensor("index")) + 2 * nbytes(out[0].tensor());
  return c;
}
Cost index_add_cost(const Args& a, const Values& out) {
  Cost c;
  if (out.empty() || !out[0].is_tensor()) return c;
  c.bytes =
      2 * nbytes(out[0].tensor()) + nbytes(a.tensor("index")) + 2 * nbytes(a.tensor("source"));
  c.flops = 2.0 * static_cast<double>(a.tensor("source").numel());
  return c;
}
Cost masked_scatter_cost(const Args& a, const Values& out) {
  Cost c;
  if (out.empty() || !out[0].is_tensor()) return c;
  c.bytes = 2 * nbytes(out[0].tensor()) + nbytes(a.tensor("mask")) + nbytes(a.tensor("source"));
  return c;
}

// The index role draws in [0, self.size(0)): cases along another dim keep self.size(0) <=
// self.size(dim).
std::vector<Sample> index_select_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    for (DType t : {f32, f16})
      out.push_back(make("rows of [32000, 1024] " + dtype_code_str(t),
                         {T({32000, 1024}, t), I(0), T({4096}, i64)}));
    return out;
  }
  for (DType t : all_numeric_dtypes())
    out.push_back(make("rows " + dtype_code_str(t), {T({5, 3}, t), I(0), T({7}, i64)}));
  out.push_back(make("columns, i32 index", {T({3, 6}, f32), I(1), T({4}, i32)}));
  out.push_back(make("dim -1, 3-d", {T({2, 3, 4}, f32), I(-1), T({5}, i64)}));
  out.push_back(make("0-d index", {T({4, 3}, f32), I(0), T({}, i64)}));
  out.push_back(make("0-d self", {T({}, f32), I(0), T({1}, i64)}));
  out.push_back(make("empty index", {T({4, 3}, f32), I(0), T({0}, i64)}));
  out.push_back(make("empty other dim", {T({4, 0}, f32), I(0), T({3}, i64)}));
  out.push_back(make("transposed self", {T_transposed(4, 6, f16), I(1), T({5}, i64)}));
  out.push_back(make("sliced index", {T({5, 3}, f32), I(0), T({4}, i64, {2})}));
  out.push_back(make("special values", {T_fill({6, 4}, f32, "special"), I(0), T({6}, i64)}));
  out.push_back(make("error: index out of range", {T({5, 3}, f32), I(0), T_fill({4}, i64, "oob")}));
  out.push_back(
      make("error: index out of range, i32", {T({5, 3}, f32), I(0), T_fill({4}, i32, "oob")}));
  out.push_back(make("error: 2-d index", {T({5, 3}, f32), I(0), T({2, 2}, i64)}));
  out.push_back(make("error: float index", {T({5, 3}, f32), I(0), T({2}, f32)}));
  out.push_back(make("error: dim out of range", {T({5, 3}, f32), I(2), T({2}, i64)}));
  out.push_back(make("error: 0-d self, two indices", {T({}, f32), I(0), T({2}, i64)}));
  return out;
}

std::vector<Sample> index_add_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    for (DType t : {f32, f16})
      out.push_back(make("rows of [32000, 1024] " + dtype_code_str(t),
                         {T({32000, 1024}, t), I(0), T({4096}, i64), T({4096, 1024}, t)}));
    return out;
  }
  for (DType t : all_numeric_dtypes())
    out.push_back(
        make("rows " + dtype_code_str(t), {T({4, 3}, t), I(0), T({6}, i64), T({6, 3}, t)}));
  out.push_back(make("alpha float", {T({4, 3}, f32), I(0), T({5}, i64), T({5, 3}, f32)},
                     {{"alpha", F(-0.5)}}));
  out.push_back(make("alpha int on i64", {T({4, 3}, i64), I(0), T({5}, i32), T({5, 3}, i64)},
                     {{"alpha", I(3)}}));
  out.push_back(make("columns, i32 index", {T({3, 6}, f32), I(1), T({4}, i32), T({3, 4}, f32)}));
  out.push_back(make("dim -1, 3-d", {T({2, 3, 4}, f32), I(-1), T({5}, i64), T({2, 3, 5}, f32)}));
  out.push_back(make("0-d index", {T({4, 3}, f32), I(0), T({}, i64), T({1, 3}, f32)}));
  out.push_back(make("0-d self", {T({}, f32), I(0), T({1}, i64), T({}, f32)}));
  out.push_back(make("empty index", {T({4, 3}, f32), I(0), T({0}, i64), T({0, 3}, f32)}));
  out.push_back(
      make("transposed self", {T_transposed(4, 6, f16), I(1), T({5}, i64), T({4, 5}, f16)}));
  out.push_back(
      make("expanded source", {T({4, 3}, f32), I(0), T({5}, i64), T({5, 3}, f32, {0, 1})}));
  out.push_back(make("special values", {T_fill({6, 4}, f32, "special"), I(0), T({6}, i64),
                                        T_fill({6, 4}, f32, "special")}));
  out.push_back(make("error: index out of range",
                     {T({4, 3}, f32), I(0), T_fill({2}, i64, "oob"), T({2, 3}, f32)}));
  out.push_back(
      make("error: source dtype differs", {T({4, 3}, f32), I(0), T({2}, i64), T({2, 3}, i64)}));
  out.push_back(
      make("error: index count differs", {T({4, 3}, f32), I(0), T({3}, i64), T({2, 3}, f32)}));
  out.push_back(
      make("error: source shape differs", {T({4, 3}, f32), I(0), T({2}, i64), T({2, 4}, f32)}));
  out.push_back(make("error: float index", {T({4, 3}, f32), I(0), T({2}, f32), T({2, 3}, f32)}));
  return out;
}

std::vector<Sample> masked_scatter_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    for (DType t : {f32, f16})
      out.push_back(make("[2048, 2048] " + dtype_code_str(t),
                         {T({2048, 2048}, t), T({2048, 2048}, b8), T({2048, 2048}, t)}));
    return out;
  }
  for (DType t : all_numeric_dtypes())
    out.push_back(
        make("same shape " + dtype_code_str(t), {T({3, 4}, t), T({3, 4}, b8), T({3, 4}, t)}));
  out.push_back(make("larger source", {T({3, 4}, f32), T({3, 4}, b8), T({20}, f32)}));
  out.push_back(make("mask broadcast", {T({3, 4}, f32), T({4}, b8), T({12}, f32)}));
  out.push_back(make("self broadcast", {T({4}, f32), T({3, 4}, b8), T({3, 4}, f32)}));
  out.push_back(make("0-d", {T({}, f32), T({}, b8), T({1}, f32)}));
  out.push_back(make("empty", {T({0, 4}, f32), T({0, 4}, b8), T({0}, f32)}));
  out.push_back(make("transposed self", {T_transposed(4, 5, f16), T({4, 5}, b8), T({20}, f16)}));
  out.push_back(make("expanded mask", {T({3, 4}, f32), T({3, 4}, b8, {0, 1}), T({12}, f32)}));
  out.push_back(make("all true", {T({2, 3}, f32), T_fill({2, 3}, b8, "positive"), T({6}, f32)}));
  out.push_back(make("special values", {T_fill({4, 4}, f32, "special"), T({4, 4}, b8),
                                        T_fill({16}, f32, "special")}));
  out.push_back(make("error: too few source elements",
                     {T({3, 4}, f32), T_fill({3, 4}, b8, "positive"), T({11}, f32)}));
  out.push_back(make("error: u8 mask", {T({3, 4}, f32), T({3, 4}, DType::UInt8), T({12}, f32)}));
  out.push_back(make("error: source dtype differs", {T({3, 4}, f32), T({3, 4}, b8), T({12}, f16)}));
  out.push_back(make("error: shapes do not broadcast", {T({3, 4}, f32), T({3}, b8), T({12}, f32)}));
  return out;
}

}  // namespace

void register_index_select_ops(OpRegistry& r) {
  {
    OpDef op = OpDef::from_schema(
        "aten::index_select(Tensor self, int dim, Tensor index) -> Tensor", "indexing");
    op.dtypes = all_numeric_dtypes();
    op.meta = [](const Args& a) {
      const Tensor& self = a.tensor("self");
      return Values{
          meta::fresh(index_select_shape(self, a.integer("dim"), a.tensor("index")), self.dtype())};
    };
    op.value_checks = true;  // indices out of range
    op.ref = structured_ref(op.meta, index_select_impl);
    op.samples = index_select_samples;
    op.roles["index"] = ArgRole::index_into("self", 0);
    op.cost = index_select_cost;
    r.add(std::move(op));
  }
  {
    OpDef op = OpDef::from_schema(
        "aten::index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) "
        "-> Tensor",
        "indexing");
    op.dtypes = all_numeric_dtypes();
    op.meta = [](const Args& a) {
      const Tensor& self = a.tensor("self");
      check_index_add(self, a.integer("dim"), a.tensor("index"), a.tensor("source"));
      return Values{meta::fresh_like(self)};
    };
    op.value_checks = true;  // indices out of range
    op.ref = structured_ref(op.meta, index_add_impl);
    op.samples = index_add_samples;
    op.roles["index"] = ArgRole::index_into("self", 0);
    op.cost = index_add_cost;
    op.compare.tol_scale = [schema = op.schema](const Values& a) {
      return static_cast<double>(std::max<int64_t>(1, Args(a, schema).tensor("index").numel()));
    };
    r.add(std::move(op));
  }
  {
    OpDef op = OpDef::from_schema(
        "aten::masked_scatter(Tensor self, Tensor mask, Tensor source) -> Tensor", "indexing");
    op.dtypes = all_numeric_dtypes();
    op.meta = [](const Args& a) {
      return Values{meta::fresh(masked_scatter_shape(a), a.tensor("self").dtype())};
    };
    op.value_checks = true;  // source shorter than the mask's true count
    op.ref = structured_ref(op.meta, masked_scatter_impl);
    op.samples = masked_scatter_samples;
    op.cost = masked_scatter_cost;
    r.add(std::move(op));
  }
}

}  // namespace crucible::indexing
