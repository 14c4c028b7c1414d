// Sorting and selection: aten.sort.default, aten.sort.stable, aten.topk.default,
// aten.nonzero.default, aten._local_scalar_dense.default.
//
// Reference semantics (PyTorch 2.x, CPU; Sorting.cpp, TensorCompare.cpp):
//  - sort: NaN sorts as the largest value (last ascending, first descending); -0 and +0 tie.
//    Indices are i64. Every dtype including bool. dim wraps; a 0-d input gives itself and
//    index 0. The reference sorts stably; sort.default and stable=False/None may order ties
//    in any way (judged by the values the indices select), stable=True must keep the input
//    order of ties (judged exactly).
//  - topk: k must satisfy 0 <= k <= size(dim) (1 for a 0-d input), else "selected index k out
//    of range"; bool is not implemented ("topk_cpu" not implemented for 'Bool'; f16 is
//    implemented in 2.x, not in 1.13). NaN is the largest value. A 0-d input returns itself
//    and index 0 whatever k (0 or 1). sorted=False may return the k values in any order: they
//    are compared as sets.
//  - nonzero: [n, ndim] i64 indices in row-major order; NaN is nonzero, -0 is zero; a 0-d input
//    gives [n, 0].
//  - _local_scalar_dense: the first element as a Python number (bool, int or float, by dtype).
//    2.x does not check numel (item() does): a multi-element tensor gives its first element.
//    An empty tensor has no element to read; the reference raises.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "crucible/compare/compare.h"
#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/ops/destination.h"
#include "ops/families.h"
#include "ops/judges.h"
#include "ops/meta_fn.h"
#include "ops/samples.h"
#include "ops/statistics_internal.h"

namespace crucible {
namespace {

using namespace samples;

// The shape of keeping the first `k` (k < 0: all) of each row along `dim`.
Shape kept_shape(const Tensor& self, int64_t dim, int64_t k) {
  Shape shape = self.shape();
  if (!shape.empty() && k >= 0) shape[static_cast<size_t>(dim)] = k;
  return shape;
}

// Sort and topk's outputs (values, indices) as meta tensors.
Values sort_rows_meta(const Tensor& self, int64_t dim, int64_t k) {
  const Shape shape = kept_shape(self, dim, k);
  return {meta::fresh(shape, self.dtype()), meta::fresh(shape, DType::Int64)};
}

// Sorts each row along `dim` stably (NaN largest) into `out` (values, indices; sort_rows_meta's
// shapes), keeping as many of each row as they hold (topk's k).
void sort_rows(const Tensor& self, int64_t dim, bool descending, const Values& out) {
  const stats::Rows rows = stats::rows_of(self.shape(), dim);
  const Tensor& values = out.at(0).tensor();
  const Tensor& indices = out.at(1).tensor();
  const stats::Rows out_rows = stats::rows_of(values.shape(), dim);
  const bool fl = is_floating(self.dtype());
  std::vector<int64_t> order(static_cast<size_t>(rows.len));
  for (int64_t r = 0; r < rows.count(); ++r) {
    std::iota(order.begin(), order.end(), 0);
    auto less = [&](int64_t a, int64_t b) {
      const int64_t ia = rows.at(r, a), ib = rows.at(r, b);
      if (fl) {
        const double x = self.get(ia), y = self.get(ib);
        if (descending) return !std::isnan(y) && (std::isnan(x) || x > y);
        return !std::isnan(x) && (std::isnan(y) || x < y);
      }
      const int64_t x = self.get_int(ia), y = self.get_int(ib);
      return descending ? x > y : x < y;
    };
    std::stable_sort(order.begin(), order.end(), less);
    for (int64_t j = 0; j < out_rows.len; ++j) {
      const int64_t src = rows.at(r, order[static_cast<size_t>(j)]);
      const int64_t dst = out_rows.at(r, j);
      fl ? values.set(dst, self.get(src)) : values.set_int(dst, self.get_int(src));
      indices.set_int(dst, order[static_cast<size_t>(j)]);
    }
  }
}

int64_t sort_dim(const Tensor& self, int64_t dim) {
  const int64_t w = wrap_dim(dim, self.dim());
  return self.dim() == 0 ? 0 : w;
}

// sort and sort.stable(self, *, stable, dim, descending) into their outputs (meta: sort_meta).
void sort_impl(const Args& a, const Values& out) {
  const Tensor& self = a.tensor("self");
  sort_rows(self, sort_dim(self, a.integer("dim")), a.flag("descending"), out);
}

Values sort_meta(const Args& a) {
  const Tensor& self = a.tensor("self");
  return sort_rows_meta(self, sort_dim(self, a.integer("dim")), -1);
}

Values sort_stable_meta(const Args& a) {
  const Tensor& self = a.tensor("self");
  return sort_rows_meta(self, sort_dim(self, a.integer("dim")), -1);
}

// topk's checks; returns the wrapped dim.
int64_t topk_dim(const Args& a) {
  const Tensor& self = a.tensor("self");
  const int64_t k = a.integer("k");
  const int64_t dim = sort_dim(self, a.integer("dim"));
  const int64_t size = self.dim() > 0 ? self.size(dim) : 1;
  if (k < 0 || k > size) op_error("selected index k out of range");
  if (self.dtype() == DType::Bool || self.dtype() == DType::Float8E4M3FN ||
      self.dtype() == DType::Float8E5M2)
    not_implemented_for("topk_cpu", self.dtype());
  return dim;
}

Values topk_meta(const Args& a) {
  const Tensor& self = a.tensor("self");
  const int64_t dim = topk_dim(a);
  if (self.dim() == 0) return {meta::fresh({}, self.dtype()), meta::fresh({}, DType::Int64)};
  return sort_rows_meta(self, dim, a.integer("k"));
}

// topk into (values, indices) (meta: topk_meta; a 0-d self is its own top 1, index 0).
void topk_impl(const Args& a, const Values& out) {
  const Tensor& self = a.tensor("self");
  if (self.dim() == 0) {
    out.at(0).tensor().copy_from(self);
    return;
  }
  sort_rows(self, sort_dim(self, a.integer("dim")), /*descending=*/a.flag("largest"), out);
}

Values nonzero_ref(const Args& a) {
  const Tensor& self = a.tensor("self");
  std::vector<std::vector<int64_t>> hits;
  int64_t i = 0;
  const bool fl = is_floating(self.dtype());
  for_each_index(self.shape(), [&](std::span<const int64_t> idx) {
    const bool nz = fl ? self.get(i) != 0.0 : self.get_int(i) != 0;
    ++i;
    if (nz) hits.emplace_back(idx.begin(), idx.end());
  });
  const int64_t nd = self.dim();
  Tensor out = Tensor::empty({static_cast<int64_t>(hits.size()), nd}, DType::Int64);
  for (size_t h = 0; h < hits.size(); ++h)
    for (int64_t d = 0; d < nd; ++d)
      out.set_int(static_cast<int64_t>(h) * nd + d, hits[h][static_cast<size_t>(d)]);
  return {out};
}

// nonzero: at most one row per element.
Values nonzero_meta(const Args& a) {
  const Tensor& self = a.tensor("self");
  return {meta::fresh({self.numel(), self.dim()}, DType::Int64)};
}

void check_local_scalar(const Tensor& self) {
  if (self.numel() == 0) op_error("a Tensor with 0 elements cannot be converted to Scalar");
}

// The number's kind (bool, int or float, by dtype); its value is the data's.
Values local_scalar_meta(const Args& a) {
  const Tensor& self = a.tensor("self");
  check_local_scalar(self);
  if (self.dtype() == DType::Bool) return {Value(false)};
  if (is_floating(self.dtype())) return {Value(0.0)};
  return {Value(int64_t{0})};
}

Values local_scalar_ref(const Args& a) {
  const Tensor& self = a.tensor("self");
  check_local_scalar(self);
  if (self.dtype() == DType::Bool) return {Value(self.get_int(0) != 0)};
  if (is_floating(self.dtype())) return {Value(self.get(0))};
  return {Value(self.get_int(0))};
}

// ---- judges ----------------------------------------------------------------------------------

// Sort and topk: values exactly; indices by what they select (ties in any order), or exactly
// (`exact_indices`, for stable sorts); unsorted topk values as sets.
ComparePolicy sort_compare(Schema schema) {
  ComparePolicy c;
  c.kind = ComparePolicy::Kind::Custom;
  c.custom = [schema = std::move(schema)](const Values& values, const Values& ref,
                                          const Values& cand) {
    const Args in(values, schema);
    const Tensor& self = in.tensor("self");
    const int64_t dim = sort_dim(self, in.integer("dim"));
    const bool exact_indices = in.has("stable") && in.given("stable") && in.flag("stable");
    const bool as_set = in.has("sorted") && !in.flag("sorted");
    const Tensor& rv = ref.at(0).tensor();
    const Tensor& cv = cand.at(0).tensor();
    std::vector<TensorCheck> checks;
    checks.push_back(as_set ? judges::same_multiset_check(rv, cv, dim, "output 0 (values)")
                            : judges::exact_values_check(rv, cv, "output 0 (values)"));
    if (exact_indices) {
      checks.push_back(
          compare_tensors(ref.at(1).tensor(), cand.at(1).tensor(), 1.0, "output 1 (indices)"));
    } else if (checks[0].passed) {
      checks.push_back(judges::gathered_index_check(self, dim, cv, ref.at(1).tensor(),
                                                    cand.at(1).tensor(), "output 1 (indices)"));
    }
    return checks;
  };
  return c;
}

// ---- samples ---------------------------------------------------------------------------------

// n log2 n comparisons; read the input, write values and indices.
Cost sort_cost(const Args& a, const Values& out) {
  Cost c = stats::read_write_cost(a, "self", out, 0);
  if (a.size() > 0 && a.value("self").is_tensor()) {
    const double n = static_cast<double>(a.tensor("self").numel());
    c.flops = n * std::max(1.0, std::log2(std::max(n, 2.0)));
  }
  return c;
}

// Sort cases; `call` builds the arguments from (self, dim, descending).
template <typename Call>
std::vector<Sample> sort_cases(const Call& call) {
  std::vector<Sample> out;
  const DType f32 = DType::Float32;
  for (DType t : all_numeric_dtypes()) {
    out.push_back(make("rows " + dtype_code_str(t), call(T({5, 9}, t), -1, false)));
    out.push_back(
        make("3-d dim 0, descending " + dtype_code_str(t), call(T({6, 3, 4}, t), 0, true)));
  }
  for (DType t : {f32, DType::BFloat16, DType::Int32}) {
    const std::string d = " " + dtype_code_str(t);
    out.push_back(make("transposed" + d, call(T_transposed(9, 7, t), 1, false)));
    out.push_back(make("sliced with a step" + d, call(T({3, 5}, t, {10, 2}), 1, true)));
    out.push_back(
        make("expanded along the sorted dim: all ties" + d, call(T({4, 6}, t, {1, 0}), 1, false)));
  }
  out.push_back(make("long row", call(T({600}, f32), 0, false)));
  out.push_back(make("many ties i8", call(T({8, 40}, DType::Int8), -1, true)));
  out.push_back(make("0-d", call(T({}, f32), 0, false)));
  out.push_back(make("0-d, dim -1, descending", call(T({}, DType::Int64), -1, true)));
  out.push_back(make("empty sorted dim", call(T({3, 0}, f32), 1, false)));
  out.push_back(make("empty other dim", call(T({0, 4}, f32), 1, true)));
  for (DType t : floating_dtypes()) {
    out.push_back(make("special values (NaN largest, +-0 tie) " + dtype_code_str(t),
                       call(T_fill({6, 16}, t, "special"), 1, false)));
    out.push_back(make("special values, descending " + dtype_code_str(t),
                       call(T_fill({6, 16}, t, "special"), 1, true)));
  }
  out.push_back(make("error: dim out of range", call(T({3, 4}, f32), 2, false)));
  out.push_back(make("error: negative dim out of range", call(T({3, 4}, f32), -3, false)));
  out.push_back(make("error: 0-d dim out of range", call(T({}, f32), 1, false)));
  return out;
}

std::vector<Sample> sort_perf() {
  std::vector<Sample> out;
  for (DType t : {DType::Float32, DType::Float16, DType::BFloat16})
    out.push_back(make("rows of [4096, 1024] " + dtype_code_str(t), {T({4096, 1024}, t)}));
  out.push_back(make("1-d 2^22 f32", {T({1 << 22}, DType::Float32)}));
  return out;
}

std::vector<Sample> sort_samples(const SampleContext& ctx) {
  if (ctx.performance) return sort_perf();
  std::vector<Sample> out = sort_cases([](Literal self, int64_t dim, bool desc) {
    return std::vector<Literal>{std::move(self), I(dim), B(desc)};
  });
  out.push_back(make("defaults", {T({4, 7}, DType::Float64)}));
  out.push_back(
      make("descending as keyword", {T({4, 7}, DType::Float32)}, {{"descending", B(true)}}));
  return out;
}

std::vector<Sample> sort_stable_samples(const SampleContext& ctx) {
  if (ctx.performance) {
    std::vector<Sample> out;
    for (DType t : {DType::Float32, DType::BFloat16})
      out.push_back(make("rows of [4096, 1024] stable " + dtype_code_str(t), {T({4096, 1024}, t)},
                         {{"stable", B(true)}}));
    return out;
  }
  std::vector<Sample> out;
  // The stable overload takes every argument after self by keyword.
  const DType f32 = DType::Float32;
  auto kw = [](bool stable, int64_t dim, bool desc) {
    return std::vector<std::pair<std::string, Literal>>{
        {"stable", B(stable)}, {"dim", I(dim)}, {"descending", B(desc)}};
  };
  for (DType t : all_numeric_dtypes()) {
    out.push_back(make("stable, rows " + dtype_code_str(t), {T({5, 9}, t)}, kw(true, -1, false)));
    out.push_back(
        make("stable, descending, dim 0 " + dtype_code_str(t), {T({6, 4}, t)}, kw(true, 0, true)));
  }
  out.push_back(make("stable, many ties i8", {T({8, 40}, DType::Int8)}, kw(true, 1, false)));
  out.push_back(
      make("stable, many ties bool, descending", {T({8, 40}, DType::Bool)}, kw(true, 1, true)));
  out.push_back(make("stable, expanded: all ties", {T({4, 6}, f32, {1, 0})}, kw(true, 1, false)));
  out.push_back(make("stable, transposed", {T_transposed(9, 7, DType::Int16)}, kw(true, 0, true)));
  for (DType t : floating_dtypes()) {
    out.push_back(make("stable, special values " + dtype_code_str(t),
                       {T_fill({6, 16}, t, "special")}, kw(true, 1, false)));
    out.push_back(make("stable, special values, descending " + dtype_code_str(t),
                       {T_fill({6, 16}, t, "special")}, kw(true, 1, true)));
  }
  out.push_back(make("stable=False, ties i8", {T({8, 40}, DType::Int8)}, kw(false, 1, false)));
  out.push_back(make("stable=None", {T({8, 40}, DType::Int32)}, {{"stable", None()}}));
  out.push_back(make("stable, 0-d", {T({}, f32)}, kw(true, 0, false)));
  out.push_back(make("stable, empty", {T({3, 0}, f32)}, kw(true, 1, false)));
  out.push_back(make("stable, dim default", {T({3, 5}, DType::UInt8)}, {{"stable", B(true)}}));
  out.push_back(make("error: dim out of range", {T({3, 4}, f32)}, kw(true, 2, false)));
  out.push_back(make("error: 0-d dim out of range", {T({}, f32)}, kw(true, -2, false)));
  return out;
}

std::vector<DType> topk_dtypes() {
  std::vector<DType> ts = all_numeric_dtypes();
  ts.erase(ts.begin());  // no bool
  return ts;
}

std::vector<Sample> topk_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  const DType f32 = DType::Float32;
  if (ctx.performance) {
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16})
      out.push_back(
          make("top 50 of [512, 30522] " + dtype_code_str(t), {T({512, 30522}, t), I(50)}));
    out.push_back(make("top 1000 of 2^22 f32", {T({1 << 22}, f32), I(1000)}));
    return out;
  }
  for (DType t : topk_dtypes()) {
    out.push_back(make("top 3 of rows " + dtype_code_str(t), {T({5, 9}, t), I(3)}));
    out.push_back(
        make("bottom 2 of dim 0 " + dtype_code_str(t), {T({6, 4}, t), I(2), I(0), B(false)}));
  }
  for (DType t : {f32, DType::BFloat16, DType::Int64}) {
    const std::string d = " " + dtype_code_str(t);
    out.push_back(make("transposed" + d, {T_transposed(9, 7, t), I(4), I(0)}));
    out.push_back(make("sliced with a step" + d, {T({3, 5}, t, {10, 2}), I(2), I(1)}));
    out.push_back(make("expanded: all ties" + d, {T({4, 6}, t, {1, 0}), I(3), I(1)}));
    out.push_back(make("unsorted" + d, {T({5, 12}, t), I(5), I(1), B(true), B(false)}));
  }
  out.push_back(make("unsorted, smallest", {T({5, 12}, f32), I(4), I(-1), B(false), B(false)}));
  out.push_back(make("k = size", {T({4, 7}, f32), I(7)}));
  out.push_back(make("k = 0", {T({4, 7}, f32), I(0)}));
  out.push_back(make("k = 1 of a long row", {T({700}, f32), I(1)}));
  out.push_back(make("many ties i8", {T({8, 40}, DType::Int8), I(10)}));
  out.push_back(make("0-d, k = 1", {T({}, f32), I(1)}));
  out.push_back(make("0-d, k = 0", {T({}, DType::Int32), I(0)}));
  out.push_back(make("empty other dim", {T({0, 5}, f32), I(2)}));
  out.push_back(make("empty dim, k = 0", {T({3, 0}, f32), I(0)}));
  out.push_back(make("keywords", {T({4, 9}, f32), I(3)},
                     {{"dim", I(0)}, {"largest", B(false)}, {"sorted", B(true)}}));
  for (DType t : floating_dtypes()) {
    out.push_back(make("special values (NaN largest) " + dtype_code_str(t),
                       {T_fill({6, 16}, t, "special"), I(5)}));
    out.push_back(make("special values, smallest " + dtype_code_str(t),
                       {T_fill({6, 16}, t, "special"), I(5), I(1), B(false)}));
  }
  out.push_back(make("error: k > size", {T({4, 7}, f32), I(8)}));
  out.push_back(make("error: k < 0", {T({4, 7}, f32), I(-1)}));
  out.push_back(make("error: 0-d, k = 2", {T({}, f32), I(2)}));
  out.push_back(make("error: bool input", {T({4, 7}, DType::Bool), I(2)}));
  out.push_back(make("error: dim out of range", {T({4, 7}, f32), I(2), I(2)}));
  return out;
}

std::vector<Sample> nonzero_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  const DType f32 = DType::Float32;
  if (ctx.performance) {
    out.push_back(make("[2048, 2048] b8", {T({2048, 2048}, DType::Bool)}));
    out.push_back(make("[2048, 2048] f32", {T_fill({2048, 2048}, f32, "uniform")}));
    return out;
  }
  for (DType t : all_numeric_dtypes()) {
    out.push_back(make("2-d " + dtype_code_str(t), {T({5, 7}, t)}));
    out.push_back(make("0-d " + dtype_code_str(t), {T({}, t)}));
  }
  out.push_back(make("3-d bool", {T({3, 4, 5}, DType::Bool)}));
  out.push_back(make("1-d i64", {T({40}, DType::Int64)}));
  out.push_back(make("4-d u8", {T({2, 3, 2, 3}, DType::UInt8)}));
  out.push_back(make("transposed bool", {T_transposed(9, 7, DType::Bool)}));
  out.push_back(make("sliced with a step", {T({3, 5}, DType::Int32, {10, 2})}));
  out.push_back(make("expanded (stride 0)", {T({4, 6}, DType::Bool, {0, 1})}));
  out.push_back(make("empty", {T({0, 3}, f32)}));
  out.push_back(make("empty 1-d bool", {T({0}, DType::Bool)}));
  out.push_back(make("mostly zero (uniform bool)", {T_fill({6, 6}, DType::Bool, "uniform")}));
  for (DType t : floating_dtypes())
    out.push_back(make("special values (NaN nonzero, -0 zero) " + dtype_code_str(t),
                       {T_fill({6, 8}, t, "special")}));
  return out;
}

std::vector<Sample> local_scalar_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    out.push_back(make("0-d f32", {T({}, DType::Float32)}));
    return out;
  }
  for (DType t : all_numeric_dtypes()) {
    out.push_back(make("0-d " + dtype_code_str(t), {T({}, t)}));
    out.push_back(make("[1] " + dtype_code_str(t), {T({1}, t)}));
  }
  out.push_back(make("[1, 1] f64", {T({1, 1}, DType::Float64)}));
  out.push_back(make("special value i64 (min)", {T_fill({1}, DType::Int64, "special")}));
  out.push_back(make("special value u8", {T_fill({}, DType::UInt8, "special")}));
  out.push_back(make("multi-element: the first element", {T({3, 2}, DType::Float32)}));
  out.push_back(make("expanded [1, 1] (stride 0)", {T({1, 1}, DType::Int32, {0, 0})}));
  return out;
}

}  // namespace

void register_sort_ops(OpRegistry& r) {
  {
    OpDef op = OpDef::from_schema(
        "aten::sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor "
        "indices)",
        "sort");
    op.dtypes = all_numeric_dtypes();
    op.meta = sort_meta;
    op.ref = structured_ref(op.meta, sort_impl);
    op.samples = sort_samples;
    op.cost = sort_cost;
    op.compare = sort_compare(op.schema);
    r.add(std::move(op));
  }
  {
    OpDef op = OpDef::from_schema(
        "aten::sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> "
        "(Tensor values, Tensor indices)",
        "sort");
    op.dtypes = all_numeric_dtypes();
    op.meta = sort_stable_meta;
    op.ref = structured_ref(op.meta, sort_impl);
    op.samples = sort_stable_samples;
    op.cost = sort_cost;
    op.compare = sort_compare(op.schema);
    r.add(std::move(op));
  }
  {
    OpDef op = OpDef::from_schema(
        "aten::topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> "
        "(Tensor values, Tensor indices)",
        "sort");
    op.dtypes = topk_dtypes();
    op.meta = topk_meta;
    op.ref = structured_ref(op.meta, topk_impl);
    op.samples = topk_samples;
    op.cost = sort_cost;
    op.compare = sort_compare(op.schema);
    r.add(std::move(op));
  }
  {
    OpDef op = OpDef::from_schema("aten::nonzero(Tensor self) -> Tensor", "sort");
    op.dtypes = all_numeric_dtypes();
    op.meta = nonzero_meta;
    op.data_dependent = true;
    op.ref = nonzero_ref;
    op.samples = nonzero_samples;
    op.cost = [](const Args& a, const Values& o) { return stats::read_write_cost(a, "self", o); };
    r.add(std::move(op));
  }
  {
    OpDef op = OpDef::from_schema("aten::_local_scalar_dense(Tensor self) -> Scalar", "sort");
    op.dtypes = all_numeric_dtypes();
    op.meta = local_scalar_meta;
    op.data_dependent = true;
    op.ref = local_scalar_ref;
    op.samples = local_scalar_samples;
    op.cost = [](const Args& a, const Values&) {
      Cost c;
      if (a.size() > 0 && a.value("self").is_tensor())
        c.bytes = static_cast<double>(a.tensor("self").itemsize());
      return c;
    };
    r.add(std::move(op));
  }
}

}  // namespace crucible
