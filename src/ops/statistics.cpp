// Statistics (selection reductions): aten.amin.default, aten.any.{default,dim,dims},
// aten.all.{default,dim,dims}, aten.argmax.default, aten.argmin.default, aten.max.dim,
// aten.min.dim, aten.max.default, aten.min.default. The moments (mean.default, prod, var, std,
// var_mean, std_mean, logsumexp) are in statistics_moments.cpp.
//
// Reference semantics (PyTorch 2.x, CPU; ReduceOps.cpp, TensorCompare.cpp):
//  - amin/max/min keep the input dtype (bool included); NaN propagates (any NaN in a row gives
//    NaN). The indices of max.dim/min.dim/argmax/argmin are the FIRST occurrence on the CPU (a
//    NaN counts as the extreme: its first index); since a backend may legitimately return any
//    index of a tie, they are judged by the value they select (judges.h).
//  - argmax/argmin: bool is not implemented ("argmax_cpu" not implemented for 'Bool'); dim=None
//    indexes the flattened input, keepdim then gives a shape of ones.
//  - empty inputs: max()/min()/argmax without dim raise ("Expected reduction dim to be specified
//    for input.numel() == 0"), a reduced dim of size 0 raises ("Expected reduction dim 0 to
//    have non-zero size."); reducing a non-empty dim of an empty tensor gives an empty result.
//  - any/all: NaN is true; the result is bool, except for a uint8 input, which gives uint8
//    (kept for backward compatibility); an empty reduction gives false (any) / true (all).
//    any.dims/all.dims (new in 2.2, not in 1.13): dim=None reduces every dim, while dim=[]
//    reduces none (allany_meta passes allow_empty_dims=true), unlike sum.
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/ops/destination.h"
#include "ops/families.h"
#include "ops/judges.h"
#include "ops/meta_fn.h"
#include "ops/statistics_internal.h"
#include "ops/statistics_samples.h"
#include "ops/util.h"

namespace crucible {

void register_statistics_moment_ops(OpRegistry& r);  // statistics_moments.cpp

namespace stats {

Shape keep_shape(const Tensor& self, int64_t dim, bool keepdim) {
  Shape s = self.shape();
  if (self.dim() == 0) return s;
  if (keepdim)
    s[static_cast<size_t>(dim)] = 1;
  else
    s.erase(s.begin() + dim);
  return s;
}

void check_nonempty_dim(const char* name, const Tensor& self, int64_t dim_given, int64_t dim) {
  if (self.numel() == 0 && self.dim() > 0 && self.size(dim) == 0)
    op_error(std::string(name) + "(): Expected reduction dim " + std::to_string(dim_given) +
             " to have non-zero size.");
}

std::pair<std::optional<int64_t>, Shape> arg_plan(const Tensor& self, std::optional<int64_t> given,
                                                  bool keepdim, bool want_max) {
  const char* name = want_max ? "argmax" : "argmin";
  std::optional<int64_t> dim;
  if (given) dim = wrap_dim(*given, self.dim());
  if (self.dtype() == DType::Bool) not_implemented_for(std::string(name) + "_cpu", DType::Bool);
  if (self.numel() == 0) {
    if (!dim)
      op_error(std::string(name) +
               "(): Expected reduction dim to be specified for input.numel() == 0.");
    check_nonempty_dim(name, self, *given, *dim);
  }
  Shape shape;
  if (dim)
    shape = keep_shape(self, *dim, keepdim);
  else if (keepdim)
    shape.assign(self.shape().size(), 1);
  return {dim, shape};
}

}  // namespace stats

namespace {

using namespace samples;
using stats::dims_of;
using stats::Rows;

// The index of the extreme of each row (its first occurrence); NaN wins.
std::vector<int64_t> pick_rows(const Tensor& self, const Rows& rows, bool want_max) {
  std::vector<int64_t> idx(static_cast<size_t>(rows.count()), 0);
  const bool fl = is_floating(self.dtype());
  for (int64_t r = 0; r < rows.count(); ++r) {
    int64_t best = 0;
    for (int64_t k = 1; k < rows.len; ++k) {
      if (fl) {
        const double b = self.get(rows.at(r, best)), v = self.get(rows.at(r, k));
        if (std::isnan(b)) break;
        if (std::isnan(v) || (want_max ? v > b : v < b)) best = k;
      } else {
        const int64_t b = self.get_int(rows.at(r, best)), v = self.get_int(rows.at(r, k));
        if (want_max ? v > b : v < b) best = k;
      }
    }
    idx[static_cast<size_t>(r)] = best;
  }
  return idx;
}

// max.dim / min.dim: the checked dim and the output shape.
std::pair<int64_t, Shape> minmax_dim_plan(const Args& a, bool want_max) {
  const Tensor& self = a.tensor("self");
  const int64_t given = a.integer("dim");
  const int64_t dim = wrap_dim(given, self.dim());
  stats::check_nonempty_dim(want_max ? "max" : "min", self, given, dim);
  return {dim, stats::keep_shape(self, dim, a.flag("keepdim"))};
}

Values minmax_dim_meta(const Args& a, bool want_max) {
  const Shape shape = minmax_dim_plan(a, want_max).second;
  return {meta::fresh(shape, a.tensor("self").dtype()), meta::fresh(shape, DType::Int64)};
}

// max.dim / min.dim into (values, indices) (meta: minmax_dim_meta).
void minmax_dim_impl(const Args& a, const Values& out, bool want_max) {
  const Tensor& self = a.tensor("self");
  const int64_t dim = minmax_dim_plan(a, want_max).first;
  const Rows rows = stats::rows_of(self.shape(), dim);
  const Tensor& values = out.at(0).tensor();
  const Tensor& indices = out.at(1).tensor();
  const std::vector<int64_t> idx = pick_rows(self, rows, want_max);
  for (int64_t r = 0; r < rows.count(); ++r) {
    const int64_t at = rows.at(r, idx[static_cast<size_t>(r)]);
    if (is_floating(self.dtype()))
      values.set(r, self.get(at));
    else
      values.set_int(r, self.get_int(at));
    indices.set_int(r, idx[static_cast<size_t>(r)]);
  }
}

// max.default / min.default: an empty input raises.
void check_minmax_all(const Tensor& self, bool want_max) {
  if (self.numel() == 0)
    op_error(std::string(want_max ? "max" : "min") +
             "(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
             "reduction dim with the 'dim' argument.");
}

Values minmax_all_meta(const Args& a, bool want_max) {
  check_minmax_all(a.tensor("self"), want_max);
  return {meta::fresh({}, a.tensor("self").dtype())};
}

// max.default / min.default into its output (meta: minmax_all_meta).
void minmax_all_impl(const Args& a, const Values& out, bool want_max) {
  const Tensor& self = a.tensor("self");
  const Rows rows = stats::flat_rows(self.numel());
  const int64_t k = pick_rows(self, rows, want_max)[0];
  if (is_floating(self.dtype()))
    out.at(0).tensor().set(0, self.get(k));
  else
    out.at(0).tensor().set_int(0, self.get_int(k));
}

// amin's checks and reduction plan.
stats::ReducePlan amin_plan(const Args& a) {
  const Tensor& self = a.tensor("self");
  const std::vector<int64_t> dims = dims_of(a.value("dim"));
  if (self.numel() == 0) {
    if (dims.empty())
      op_error(
          "amin(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
          "reduction dim with the 'dim' argument.");
    for (int64_t d : dims) {
      if (self.dim() > 0 && self.size(wrap_dim(d, self.dim())) == 0)
        op_error("amin(): Expected reduction dim " + std::to_string(d) + " to have non-zero size.");
    }
  }
  return stats::plan_reduction(self, dims, a.flag("keepdim"));
}

Values amin_meta(const Args& a) {
  return {meta::fresh(amin_plan(a).out_shape, a.tensor("self").dtype())};
}

// amin into its output (meta: amin_meta).
void amin_impl(const Args& a, const Values& outs) {
  const Tensor& self = a.tensor("self");
  const stats::ReducePlan p = amin_plan(a);
  const Tensor& out = outs.at(0).tensor();
  const auto n = static_cast<size_t>(out.numel());
  if (is_floating(self.dtype())) {
    std::vector<double> best(n, std::numeric_limits<double>::infinity());
    stats::for_each_reduced(self, p, [&](int64_t o, int64_t i) {
      const double v = self.get(i);
      if (std::isnan(best[o])) return;
      if (std::isnan(v) || v < best[o]) best[o] = v;
    });
    opsutil::write_doubles(out, best.data());
  } else {
    std::vector<int64_t> best(n, std::numeric_limits<int64_t>::max());
    stats::for_each_reduced(
        self, p, [&](int64_t o, int64_t i) { best[o] = std::min(best[o], self.get_int(i)); });
    for (size_t o = 0; o < n; ++o) out.set_int(static_cast<int64_t>(o), best[o]);
  }
}

Values arg_meta(const Args& a, bool want_max) {
  return {meta::fresh(
      stats::arg_plan(a.tensor("self"), a.opt_integer("dim"), a.flag("keepdim"), want_max).second,
      DType::Int64)};
}

// argmax / argmin into its output (meta: arg_meta).
void arg_impl(const Args& a, const Values& outs, bool want_max) {
  const Tensor& self = a.tensor("self");
  const std::optional<int64_t> dim =
      stats::arg_plan(self, a.opt_integer("dim"), a.flag("keepdim"), want_max).first;
  const Rows rows = dim ? stats::rows_of(self.shape(), *dim) : stats::flat_rows(self.numel());
  const Tensor& out = outs.at(0).tensor();
  const std::vector<int64_t> idx = pick_rows(self, rows, want_max);
  for (int64_t r = 0; r < rows.count(); ++r) out.set_int(r, idx[static_cast<size_t>(r)]);
}

DType anyall_dtype(const Tensor& self) {
  return self.dtype() == DType::UInt8 ? DType::UInt8 : DType::Bool;
}

// any / all over a reduction plan, into `out` (zero-filled: all starts at 1).
void anyall(const Tensor& self, const stats::ReducePlan& p, bool is_any, const Tensor& out) {
  if (!is_any) out.fill(1.0);
  const bool fl = is_floating(self.dtype());
  stats::for_each_reduced(self, p, [&](int64_t o, int64_t i) {
    const bool v = fl ? self.get(i) != 0.0 : self.get_int(i) != 0;  // NaN != 0
    if (is_any && v) out.set_int(o, 1);
    if (!is_any && !v) out.set_int(o, 0);
  });
}

// The reduction plans of any/all's overloads.
stats::ReducePlan anyall_default_plan(const Args& a) {
  return stats::plan_reduction(a.tensor("self"), {}, false);
}
stats::ReducePlan anyall_dim_plan(const Args& a) {
  return stats::plan_reduction(a.tensor("self"), {a.integer("dim")}, a.flag("keepdim"));
}
stats::ReducePlan anyall_dims_plan(const Args& a) {
  const bool none = !a.given("dim");
  return stats::plan_reduction(a.tensor("self"), dims_of(a.value("dim")), a.flag("keepdim"),
                               /*allow_empty_dims=*/!none);
}

using AnyAllPlan = stats::ReducePlan (*)(const Args&);

ImplFn anyall_impl(AnyAllPlan plan, bool is_any) {
  return [plan, is_any](const Args& a, const Values& out) {
    anyall(a.tensor("self"), plan(a), is_any, out.at(0).tensor());
  };
}
MetaFn anyall_meta(AnyAllPlan plan) {
  return [plan](const Args& a) {
    return Values{meta::fresh(plan(a).out_shape, anyall_dtype(a.tensor("self")))};
  };
}

// ---- judges --------------------------------------------------------------------------------

int64_t wrapped_or_flat(const Args& in) {
  const Tensor& self = in.tensor("self");
  if (!in.given("dim")) return -1;
  return self.dim() == 0 ? -1 : wrap_dim(in.integer("dim"), self.dim());
}

// argmax/argmin: any index of the extreme value.
ComparePolicy arg_compare(Schema schema) {
  ComparePolicy c;
  c.kind = ComparePolicy::Kind::Custom;
  c.custom = [schema = std::move(schema)](const Values& inputs, const Values& ref,
                                          const Values& cand) {
    const Args in(inputs, schema);
    const Tensor& self = in.tensor("self");
    const int64_t dim = wrapped_or_flat(in);
    const Tensor& ri = ref.at(0).tensor();
    const Rows rows = dim < 0 ? stats::flat_rows(self.numel()) : stats::rows_of(self.shape(), dim);
    Tensor values = Tensor::empty(ri.shape(), self.dtype());
    for (int64_t r = 0; r < ri.numel(); ++r) {
      const int64_t at = rows.at(r, ri.get_int(r));
      is_floating(self.dtype()) ? values.set(r, self.get(at)) : values.set_int(r, self.get_int(at));
    }
    return std::vector<TensorCheck>{
        judges::selected_index_check(self, dim, values, ri, cand.at(0).tensor(), "output 0")};
  };
  return c;
}

// max.dim/min.dim: exact values, any index of a tie.
ComparePolicy minmax_dim_compare(Schema schema) {
  ComparePolicy c;
  c.kind = ComparePolicy::Kind::Custom;
  c.custom = [schema = std::move(schema)](const Values& inputs, const Values& ref,
                                          const Values& cand) {
    const Args in(inputs, schema);
    const Tensor& self = in.tensor("self");
    const int64_t dim = wrapped_or_flat(in);
    return std::vector<TensorCheck>{
        judges::exact_values_check(ref.at(0).tensor(), cand.at(0).tensor(), "output 0 (values)"),
        judges::selected_index_check(self, dim, ref.at(0).tensor(), ref.at(1).tensor(),
                                     cand.at(1).tensor(), "output 1 (indices)")};
  };
  return c;
}

// ---- samples -------------------------------------------------------------------------------

std::vector<DType> no_bool() {
  std::vector<DType> ts = all_numeric_dtypes();
  ts.erase(ts.begin());
  return ts;
}

stats::DimArgsFn single_dim() {
  return [](int64_t d, bool k) { return std::vector<Literal>{I(d), B(k)}; };
}
stats::DimArgsFn dim_list() {
  return [](int64_t d, bool k) { return std::vector<Literal>{L({d}), B(k)}; };
}

std::vector<Sample> minmax_dim_samples(const SampleContext& ctx, const char* name) {
  if (ctx.performance) return stats::reduction_perf_samples(floating_dtypes(), single_dim());
  std::vector<Sample> out = stats::dim_reduction_samples(all_numeric_dtypes(), single_dim());
  const DType f32 = DType::Float32;
  out.push_back(make("keepdim as keyword", {T({4, 5}, f32), I(0)}, {{"keepdim", B(true)}}));
  out.push_back(make("keepdim default", {T({4, 5}, DType::Int16), I(1)}));
  out.push_back(make("ties in i8", {T({12, 30}, DType::Int8), I(1)}));
  out.push_back(
      make("error: " + std::string(name) + " of an empty reduced dim", {T({0, 4}, f32), I(0)}));
  return out;
}

std::vector<Sample> arg_samples(const SampleContext& ctx) {
  auto opt_dim = [](int64_t d, bool k) { return std::vector<Literal>{I(d), B(k)}; };
  if (ctx.performance) return stats::reduction_perf_samples(floating_dtypes(), opt_dim);
  std::vector<Sample> out = stats::dim_reduction_samples(no_bool(), opt_dim);
  const DType f32 = DType::Float32;
  for (DType t : no_bool())
    out.push_back(make("dim=None (flattened) " + dtype_code_str(t), {T({4, 6}, t), None()}));
  out.push_back(make("dim=None, keepdim", {T({3, 4, 5}, f32), None(), B(true)}));
  out.push_back(make("default dim", {T({3, 4, 5}, DType::Float16)}));
  out.push_back(make("dim as keyword", {T({3, 4}, f32)}, {{"dim", I(1)}, {"keepdim", B(true)}}));
  out.push_back(make("0-d, dim=None", {T({}, f32)}));
  out.push_back(make("dim=None, transposed", {T_transposed(5, 4, f32), None()}));
  out.push_back(make("dim=None, special values", {T_fill({5, 9}, f32, "special"), None()}));
  out.push_back(make("ties in i8", {T({12, 30}, DType::Int8), I(1)}));
  out.push_back(make("error: bool input", {T({4, 5}, DType::Bool), I(1)}));
  out.push_back(make("error: empty input, dim=None", {T({0, 3}, f32), None()}));
  out.push_back(make("error: empty reduced dim", {T({0, 3}, f32), I(0)}));
  return out;
}

std::vector<Sample> minmax_all_samples(const SampleContext& ctx) {
  if (ctx.performance) {
    std::vector<Sample> out;
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16})
      out.push_back(make("[4096, 4096] " + dtype_code_str(t), {T({4096, 4096}, t)}));
    return out;
  }
  std::vector<Sample> out = stats::full_reduction_samples(all_numeric_dtypes(), false);
  out.push_back(make("error: empty input", {T({0, 3}, DType::Float32)}));
  out.push_back(make("error: empty 1-d i64", {T({0}, DType::Int64)}));
  return out;
}

std::vector<Sample> amin_samples(const SampleContext& ctx) {
  if (ctx.performance) return stats::reduction_perf_samples(floating_dtypes(), dim_list());
  std::vector<Sample> out = stats::dim_reduction_samples(all_numeric_dtypes(), dim_list());
  const DType f32 = DType::Float32;
  out.push_back(make("default dim (all)", {T({3, 4}, f32)}));
  out.push_back(make("dim=[] reduces all, keepdim", {T({4, 5, 6}, DType::Int32), L({}), B(true)}));
  out.push_back(make("two dims", {T({4, 5, 6}, f32), L({0, 2})}));
  out.push_back(
      make("keepdim as keyword", {T({4, 5}, f32)}, {{"dim", L({0})}, {"keepdim", B(true)}}));
  out.push_back(make("error: empty reduced dim", {T({0, 4}, f32), L({0})}));
  out.push_back(make("error: empty, no dim", {T({3, 0}, f32)}));
  out.push_back(make("error: dim repeated", {T({3, 4}, f32), L({0, -2})}));
  return out;
}

std::vector<Sample> anyall_default_samples(const SampleContext& ctx) {
  if (ctx.performance) {
    return {make("[4096, 4096] b8", {T({4096, 4096}, DType::Bool)}),
            make("[4096, 4096] f32", {T({4096, 4096}, DType::Float32)})};
  }
  std::vector<Sample> out = stats::full_reduction_samples(all_numeric_dtypes(), true);
  out.push_back(make("uniform u8 (uint8 result)", {T_fill({5, 5}, DType::UInt8, "uniform")}));
  out.push_back(make("mostly zero f32", {T_fill({5, 5}, DType::Float32, "uniform")}));
  return out;
}

std::vector<Sample> anyall_dim_samples(const SampleContext& ctx) {
  if (ctx.performance) return stats::reduction_perf_samples({DType::Float32}, single_dim());
  std::vector<Sample> out = stats::dim_reduction_samples(all_numeric_dtypes(), single_dim());
  out.push_back(make("empty reduced dim", {T({0, 4}, DType::Float32), I(0)}));
  out.push_back(make("keepdim as keyword", {T({4, 5}, DType::Bool), I(0)}, {{"keepdim", B(true)}}));
  out.push_back(make("uniform bool rows", {T_fill({6, 3}, DType::Bool, "uniform"), I(1)}));
  return out;
}

std::vector<Sample> anyall_dims_samples(const SampleContext& ctx) {
  if (ctx.performance) return stats::reduction_perf_samples({DType::Float32}, dim_list());
  std::vector<Sample> out = stats::dim_reduction_samples(all_numeric_dtypes(), dim_list());
  const DType f32 = DType::Float32;
  out.push_back(make("dim=None reduces all", {T({3, 4}, DType::Bool), None()}));
  out.push_back(make("default dim", {T({3, 4}, DType::UInt8)}));
  out.push_back(make("dim=[] reduces none", {T({3, 4}, f32), L({})}));
  out.push_back(make("two dims, keepdim", {T({3, 4, 5}, DType::Int32), L({0, 2}), B(true)}));
  out.push_back(make("empty reduced dim", {T({0, 4}, f32), L({0})}));
  out.push_back(make("error: dim repeated", {T({3, 4}, f32), L({1, -1})}));
  return out;
}

Cost select_cost(const Args& a, const Values& out) { return stats::read_write_cost(a, out); }

}  // namespace

void register_statistics_ops(OpRegistry& r) {
  const std::vector<DType> all = all_numeric_dtypes();
  auto add = [&](const char* schema, std::vector<DType> dtypes, MetaFn meta, ImplFn impl,
                 SampleFn samples, ComparePolicy (*compare)(Schema) = nullptr) {
    OpDef op = OpDef::from_schema(schema, "reduction");
    op.dtypes = std::move(dtypes);
    op.meta = std::move(meta);
    op.ref = structured_ref(op.meta, std::move(impl));
    op.samples = std::move(samples);
    op.cost = select_cost;
    if (compare) op.compare = compare(op.schema);
    r.add(std::move(op));
  };
  add("aten::amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", all, amin_meta,
      amin_impl, amin_samples);
  for (bool is_any : {true, false}) {
    const std::string n = is_any ? "any" : "all";
    add(("aten::" + n + "(Tensor self) -> Tensor").c_str(), all, anyall_meta(anyall_default_plan),
        anyall_impl(anyall_default_plan, is_any), anyall_default_samples);
    add(("aten::" + n + ".dim(Tensor self, int dim, bool keepdim=False) -> Tensor").c_str(), all,
        anyall_meta(anyall_dim_plan), anyall_impl(anyall_dim_plan, is_any), anyall_dim_samples);
    add(("aten::" + n + ".dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor")
            .c_str(),
        all, anyall_meta(anyall_dims_plan), anyall_impl(anyall_dims_plan, is_any),
        anyall_dims_samples);
  }
  for (bool want_max : {true, false}) {
    const std::string n = want_max ? "max" : "min";
    add(("aten::arg" + n + "(Tensor self, int? dim=None, bool keepdim=False) -> Tensor").c_str(),
        no_bool(), [want_max](const Args& a) { return arg_meta(a, want_max); },
        [want_max](const Args& a, const Values& out) { arg_impl(a, out, want_max); }, arg_samples,
        arg_compare);
    add(("aten::" + n +
         ".dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)")
            .c_str(),
        all, [want_max](const Args& a) { return minmax_dim_meta(a, want_max); },
        [want_max](const Args& a, const Values& out) { minmax_dim_impl(a, out, want_max); },
        [want_max](const SampleContext& ctx) {
          return minmax_dim_samples(ctx, want_max ? "max" : "min");
        },
        minmax_dim_compare);
    add(("aten::" + n + "(Tensor self) -> Tensor").c_str(), all,
        [want_max](const Args& a) { return minmax_all_meta(a, want_max); },
        [want_max](const Args& a, const Values& out) { minmax_all_impl(a, out, want_max); },
        minmax_all_samples);
  }
  register_statistics_moment_ops(r);
}

}  // namespace crucible
