// Statistics (moments): aten.mean.default, aten.prod.default, aten.prod.dim_int,
// aten.var.correction, aten.var.dim, aten.std.correction, aten.var_mean.correction,
// aten.std_mean.correction, aten.logsumexp.default. Registered from statistics.cpp.
//
// Reference semantics (PyTorch 2.x, CPU; ReduceOps.cpp):
//  - mean: the input (or dtype=) must be floating ("mean(): could not infer output dtype...");
//    an empty input gives NaN.
//  - prod: bool and integer inputs give i64 unless dtype= is given; with dtype= the input is
//    converted first (1.5 * 2.5 with dtype=i64 is 1 * 2 = 2); integer products wrap in the
//    output width; an empty product is 1.
//  - var/std: floating inputs only ("std and var only support floating point and complex
//    dtypes"); result dtype = input dtype. dim=None and dim=[] reduce every dim. The divisor is
//    max(0, N - correction) (correction defaults to 1, may be fractional): N <= correction gives
//    x/0 (inf, or NaN when the sum of squares is 0). 1.13 types correction as int?; 2.x as
//    Scalar?. A NaN or inf gives NaN. var_mean/std_mean return (var or std, mean).
//  - logsumexp: bool and integer inputs are converted to the default dtype (f32) first. The
//    row maximum m is subtracted, except that an infinite m is replaced by 0, so a row of -inf
//    gives -inf, a row holding +inf gives +inf; NaN propagates. An empty reduction gives -inf.
//    dim=[] reduces every dim; with keepdim=False and ndim >= 1 ATen 2.x raises there (its
//    add_ of the kept maximum does not broadcast), which we do not sample.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/ops/destination.h"
#include "ops/families.h"
#include "ops/meta_fn.h"
#include "ops/statistics_internal.h"
#include "ops/statistics_samples.h"

namespace crucible {

void register_statistics_moment_ops(OpRegistry& r);

namespace {

using namespace samples;
using stats::dims_of;

constexpr double kInf = std::numeric_limits<double>::infinity();

bool is_fp8(DType t) { return t == DType::Float8E4M3FN || t == DType::Float8E5M2; }

// ---- mean.default ------------------------------------------------------------------------

// mean's computation dtype (dtype= or the input's), checked to be floating.
DType mean_dtype(const Args& a) {
  const Tensor& self = a.tensor("self");
  const std::optional<DType> dtype = a.opt_dtype("dtype");
  const DType dt = dtype ? *dtype : self.dtype();
  if (!is_floating(dt) || is_fp8(dt)) {
    op_error(
        std::string("mean(): could not infer output dtype. ") + (dtype ? "Optional" : "Input") +
        " dtype must be either a floating point or complex dtype. Got: " + scalar_type_name(dt));
  }
  return dt;
}

Values mean_meta(const Args& a) { return {meta::fresh({}, mean_dtype(a))}; }

void mean_impl(const Args& a, const Values& out) {
  const Tensor& self = a.tensor("self");
  const DType dt = out.at(0).tensor().dtype();
  const bool convert = dt != self.dtype();
  double s = 0;
  for (int64_t i = 0; i < self.numel(); ++i) {
    const double v = stats::element(self, i);
    s += convert ? stats::round_to(v, dt) : v;
  }
  out.at(0).tensor().set(0, s / static_cast<double>(self.numel()));
}

// ---- prod ----------------------------------------------------------------------------------

int64_t as_int(const Tensor& t, int64_t i) {
  if (!is_floating(t.dtype())) return t.get_int(i);
  alignas(8) unsigned char buf[8] = {};
  store_from_double(buf, DType::Int64, t.get(i));  // ATen's float -> integer conversion
  return load_as_int(buf, DType::Int64);
}

// The product of self over the plan's dims into `out` (the plan's shape, the result dtype).
void prod_into(const Tensor& self, const stats::ReducePlan& p, const Tensor& out) {
  const DType out_dt = out.dtype();
  const auto n = static_cast<size_t>(out.numel());
  if (is_integral(out_dt, /*include_bool=*/true)) {
    std::vector<uint64_t> acc(n, 1);  // wraps like the output does
    stats::for_each_reduced(
        self, p, [&](int64_t o, int64_t i) { acc[o] *= static_cast<uint64_t>(as_int(self, i)); });
    for (size_t o = 0; o < n; ++o)
      out.set_int(static_cast<int64_t>(o), static_cast<int64_t>(acc[o]));
    return;
  }
  const bool convert = self.dtype() != out_dt;
  std::vector<double> acc(n, 1.0);
  stats::for_each_reduced(self, p, [&](int64_t o, int64_t i) {
    const double v = stats::element(self, i);
    acc[o] *= convert ? stats::round_to(v, out_dt) : v;
  });
  for (size_t o = 0; o < n; ++o) out.set(static_cast<int64_t>(o), acc[o]);
}

DType prod_dtype(const Tensor& self, const Value& dtype) {
  if (is_fp8(self.dtype())) not_implemented_for("prod_cpu", self.dtype());
  if (auto d = dtype.opt_dtype()) return *d;
  return is_integral(self.dtype(), /*include_bool=*/true) ? DType::Int64 : self.dtype();
}

void prod_impl(const Args& a, const Values& out) {
  const Tensor& self = a.tensor("self");
  prod_into(self, stats::plan_reduction(self, {}, false), out.at(0).tensor());
}

Values prod_meta(const Args& a) {
  return {meta::fresh({}, prod_dtype(a.tensor("self"), a.value("dtype")))};
}

Values prod_dim_meta(const Args& a) {
  const Tensor& self = a.tensor("self");
  const DType dt = prod_dtype(self, a.value("dtype"));
  return {meta::fresh(stats::plan_reduction(self, {a.integer("dim")}, a.flag("keepdim")).out_shape,
                      dt)};
}

void prod_dim_impl(const Args& a, const Values& out) {
  const Tensor& self = a.tensor("self");
  prod_into(self, stats::plan_reduction(self, {a.integer("dim")}, a.flag("keepdim")),
            out.at(0).tensor());
}

// ---- var / std -----------------------------------------------------------------------------

// Mean and variance of every output element, in double.
struct Moments {
  Shape shape;
  std::vector<double> var, mean;
};

// var/std's checks and reduction plan.
stats::ReducePlan moments_plan(const Tensor& self, const Value& dim, bool keepdim) {
  if (!is_floating(self.dtype()) || is_fp8(self.dtype()))
    op_error("std and var only support floating point and complex dtypes");
  return stats::plan_reduction(self, dims_of(dim), keepdim);
}

Moments moments(const Tensor& self, const Value& dim, double correction, bool keepdim) {
  const stats::ReducePlan p = moments_plan(self, dim, keepdim);
  const auto n = static_cast<size_t>(numel_of(p.out_shape));
  std::vector<double> sum(n, 0.0), m2(n, 0.0);
  stats::for_each_reduced(self, p, [&](int64_t o, int64_t i) { sum[o] += self.get(i); });
  const double count = static_cast<double>(p.count);
  stats::for_each_reduced(self, p, [&](int64_t o, int64_t i) {
    const double d = self.get(i) - sum[o] / count;
    m2[o] += d * d;
  });
  Moments m{p.out_shape, std::vector<double>(n), std::vector<double>(n)};
  const double divisor = std::max(0.0, count - correction);
  for (size_t o = 0; o < n; ++o) {
    m.mean[o] = sum[o] / count;
    m.var[o] = m2[o] / divisor;
  }
  return m;
}

double correction_of(const Value& v) { return v.is_none() ? 1.0 : v.to_double(); }

// `vals` (or their square roots) rounded once to `t`.
Tensor tensor_of(const Shape& shape, const std::vector<double>& vals, DType t, bool root) {
  Tensor out = Tensor::empty(shape, t);
  for (size_t i = 0; i < vals.size(); ++i)
    out.set(static_cast<int64_t>(i), root ? std::sqrt(vals[i]) : vals[i]);
  return out;
}

// var / std (.correction, .dim) and var_mean / std_mean.
Values var_family(const Args& a, double correction, bool keepdim, bool root, bool with_mean) {
  const Tensor& self = a.tensor("self");
  const Moments m = moments(self, a.value("dim"), correction, keepdim);
  Values out{tensor_of(m.shape, m.var, self.dtype(), root)};
  if (with_mean) out.emplace_back(tensor_of(m.shape, m.mean, self.dtype(), false));
  return out;
}

Values var_family_meta(const Args& a, bool keepdim, bool with_mean) {
  const Tensor& self = a.tensor("self");
  const Shape shape = moments_plan(self, a.value("dim"), keepdim).out_shape;
  Values out{meta::fresh(shape, self.dtype())};
  if (with_mean) out.push_back(meta::fresh(shape, self.dtype()));
  return out;
}

// ---- logsumexp -----------------------------------------------------------------------------

// logsumexp's computation dtype: integral inputs are converted to f32 first.
DType logsumexp_dtype(const Tensor& self) {
  if (is_fp8(self.dtype())) not_implemented_for("logsumexp", self.dtype());
  return is_integral(self.dtype(), /*include_bool=*/true) ? DType::Float32 : self.dtype();
}

Values logsumexp_meta(const Args& a) {
  const Tensor& self = a.tensor("self");
  const DType dt = logsumexp_dtype(self);
  const stats::ReducePlan p =
      stats::plan_reduction(self, dims_of(a.value("dim")), a.flag("keepdim"));
  return {meta::fresh(p.out_shape, dt)};
}

void logsumexp_impl(const Args& a, const Values& outputs) {
  Tensor self = a.tensor("self");
  if (logsumexp_dtype(self) != self.dtype()) self = self.to(DType::Float32);
  const stats::ReducePlan p =
      stats::plan_reduction(self, dims_of(a.value("dim")), a.flag("keepdim"));
  const auto n = static_cast<size_t>(numel_of(p.out_shape));
  std::vector<double> mx(n, -kInf), sum(n, 0.0);
  stats::for_each_reduced(self, p, [&](int64_t o, int64_t i) {
    const double v = self.get(i);
    if (std::isnan(mx[o])) return;
    if (std::isnan(v) || v > mx[o]) mx[o] = v;
  });
  for (double& m : mx)
    if (std::isinf(m)) m = 0;
  stats::for_each_reduced(self, p,
                          [&](int64_t o, int64_t i) { sum[o] += std::exp(self.get(i) - mx[o]); });
  const Tensor& out = outputs.at(0).tensor();
  for (size_t o = 0; o < n; ++o) out.set(static_cast<int64_t>(o), std::log(sum[o]) + mx[o]);
}

// ---- samples -------------------------------------------------------------------------------

std::vector<Sample> mean_samples(const SampleContext& ctx) {
  if (ctx.performance) {
    std::vector<Sample> out;
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16})
      out.push_back(make("[4096, 4096] " + dtype_code_str(t), {T({4096, 4096}, t)}));
    return out;
  }
  std::vector<Sample> out = stats::full_reduction_samples(floating_dtypes(), true);
  const DType f32 = DType::Float32;
  out.push_back(make("dtype=f32 from i64", {T({5, 6}, DType::Int64)}, {{"dtype", DT(f32)}}));
  out.push_back(
      make("dtype=f64 from f16", {T({5, 64}, DType::Float16)}, {{"dtype", DT(DType::Float64)}}));
  out.push_back(make("dtype=f32 from bf16", {T({300}, DType::BFloat16)}, {{"dtype", DT(f32)}}));
  out.push_back(make("dtype=f16 from f32", {T({300}, f32)}, {{"dtype", DT(DType::Float16)}}));
  for (DType t : integral_dtypes(/*include_bool=*/true))
    out.push_back(make("error: integral input " + dtype_code_str(t), {T({4, 5}, t)}));
  out.push_back(make("error: integral dtype=", {T({4, 5}, f32)}, {{"dtype", DT(DType::Int64)}}));
  return out;
}

std::vector<Sample> prod_samples(const SampleContext& ctx) {
  if (ctx.performance) {
    std::vector<Sample> out;
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16})
      out.push_back(
          make("[4096, 4096] " + dtype_code_str(t), {T_fill({4096, 4096}, t, "positive")}));
    return out;
  }
  std::vector<Sample> out = stats::full_reduction_samples(all_numeric_dtypes(), true);
  const DType f32 = DType::Float32;
  out.push_back(make("positive values f32", {T_fill({40}, f32, "positive")}));
  out.push_back(make("dtype=f64 from f32", {T({5, 6}, f32)}, {{"dtype", DT(DType::Float64)}}));
  out.push_back(make("dtype=i64 from f32 (truncates first)", {T({3, 3}, f32)},
                     {{"dtype", DT(DType::Int64)}}));
  out.push_back(
      make("dtype=i8 from i8 (wraps)", {T({20}, DType::Int8)}, {{"dtype", DT(DType::Int8)}}));
  out.push_back(make("dtype=f32 from i32", {T({6}, DType::Int32)}, {{"dtype", DT(f32)}}));
  out.push_back(make("i64 wraps", {T({40}, DType::Int64)}));
  return out;
}

std::vector<Sample> prod_dim_samples(const SampleContext& ctx) {
  auto args = [](int64_t d, bool k) { return std::vector<Literal>{I(d), B(k)}; };
  if (ctx.performance) {
    std::vector<Sample> out;
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16})
      out.push_back(make("rows of [4096, 4096] " + dtype_code_str(t),
                         {T_fill({4096, 4096}, t, "positive"), I(-1)}));
    return out;
  }
  std::vector<Sample> out = stats::dim_reduction_samples(all_numeric_dtypes(), args);
  const DType f32 = DType::Float32;
  out.push_back(make("empty reduced dim gives 1", {T({0, 4}, f32), I(0)}));
  out.push_back(make("keepdim as keyword", {T({4, 5}, f32), I(0)}, {{"keepdim", B(true)}}));
  out.push_back(make("dtype=f64 from f16", {T({4, 9}, DType::Float16), I(1)},
                     {{"dtype", DT(DType::Float64)}}));
  out.push_back(
      make("dtype=i32 from bool", {T({4, 9}, DType::Bool), I(0)}, {{"dtype", DT(DType::Int32)}}));
  out.push_back(make("dtype=i64 from f32 (truncates first)", {T({4, 3}, f32), I(1)},
                     {{"dtype", DT(DType::Int64)}}));
  return out;
}

// Cases of var/std(.correction) and var_mean/std_mean: self, dim, *, correction, keepdim.
std::vector<Sample> var_samples(const SampleContext& ctx) {
  if (ctx.performance) {
    std::vector<Sample> out;
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16}) {
      out.push_back(
          make("rows of [4096, 4096] " + dtype_code_str(t), {T({4096, 4096}, t), L({-1})}));
      out.push_back(make("all of [4096, 4096] " + dtype_code_str(t), {T({4096, 4096}, t)}));
    }
    return out;
  }
  std::vector<Sample> out;
  const DType f32 = DType::Float32;
  for (DType t : floating_dtypes()) {
    const std::string d = " " + dtype_code_str(t);
    out.push_back(make("rows" + d, {T({5, 17}, t), L({1})}));
    out.push_back(make("all dims" + d, {T({6, 7}, t)}));
    out.push_back(make("special values" + d, {T_fill({6, 8}, t, "special"), L({1})}));
  }
  out.push_back(make("dim=None", {T({3, 4, 5}, f32), None()}));
  out.push_back(make("dim=[] reduces all", {T({3, 4, 5}, f32), L({})}));
  out.push_back(make("two dims, keepdim", {T({3, 4, 5}, f32), L({0, 2})}, {{"keepdim", B(true)}}));
  out.push_back(make("negative dim", {T({3, 4, 5}, DType::Float64), L({-2})}));
  out.push_back(make("correction=0", {T({5, 6}, f32), L({1})}, {{"correction", I(0)}}));
  out.push_back(make("correction=2", {T({5, 6}, f32), L({1})}, {{"correction", I(2)}}));
  out.push_back(
      make("fractional correction 0.5", {T({5, 6}, f32), L({0})}, {{"correction", F(0.5)}}));
  out.push_back(
      make("correction >= N gives inf", {T({5, 3}, f32), L({1})}, {{"correction", I(3)}}));
  out.push_back(make("one element, correction 1 gives NaN", {T({4, 1}, f32), L({1})}));
  out.push_back(make("0-d", {T({}, f32)}));
  out.push_back(make("0-d, correction=0", {T({}, DType::Float64)}, {{"correction", I(0)}}));
  out.push_back(make("transposed", {T_transposed(9, 7, f32), L({0})}));
  out.push_back(make("sliced with a step", {T({3, 5}, f32, {10, 2}), L({1})}));
  out.push_back(make("expanded (stride 0): zero variance", {T({4, 6}, f32, {1, 0}), L({1})}));
  out.push_back(make("empty reduced dim gives NaN", {T({0, 3}, f32), L({0})}));
  out.push_back(make("empty kept dim", {T({3, 0}, f32), L({0})}));
  out.push_back(make("long rows bf16", {T({2, 700}, DType::BFloat16), L({1})}));
  for (DType t : integral_dtypes(/*include_bool=*/true))
    out.push_back(make("error: integral input " + dtype_code_str(t), {T({4, 5}, t), L({1})}));
  out.push_back(make("error: dim out of range", {T({3, 4}, f32), L({2})}));
  out.push_back(make("error: dim repeated", {T({3, 4}, f32), L({1, -1})}));
  return out;
}

std::vector<Sample> var_dim_samples(const SampleContext& ctx) {
  if (ctx.performance) {
    std::vector<Sample> out;
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16})
      out.push_back(
          make("rows of [4096, 4096] " + dtype_code_str(t), {T({4096, 4096}, t), L({-1})}));
    return out;
  }
  std::vector<Sample> out;
  const DType f32 = DType::Float32;
  for (DType t : floating_dtypes()) {
    const std::string d = " " + dtype_code_str(t);
    out.push_back(make("rows, unbiased" + d, {T({5, 17}, t), L({1})}));
    out.push_back(make("columns, biased" + d, {T({9, 4}, t), L({0}), B(false)}));
    out.push_back(make("special values" + d, {T_fill({6, 8}, t, "special"), L({1})}));
  }
  out.push_back(make("dim=None, keepdim", {T({3, 4, 5}, f32), None(), B(true), B(true)}));
  out.push_back(make("dim=[] reduces all", {T({3, 4, 5}, f32), L({})}));
  out.push_back(make("two dims", {T({3, 4, 5}, f32), L({0, 2}), B(false)}));
  out.push_back(make("unbiased as keyword", {T({5, 6}, f32), L({1})}, {{"unbiased", B(false)}}));
  out.push_back(make("one element, unbiased gives NaN", {T({4, 1}, f32), L({1})}));
  out.push_back(make("0-d, biased", {T({}, f32), L({0}), B(false)}));
  out.push_back(make("transposed", {T_transposed(9, 7, f32), L({0})}));
  out.push_back(make("expanded (stride 0)", {T({4, 6}, f32, {0, 1}), L({0})}));
  out.push_back(make("empty reduced dim gives NaN", {T({0, 3}, f32), L({0})}));
  out.push_back(make("error: integral input", {T({4, 5}, DType::Int32), L({1})}));
  out.push_back(make("error: bool input", {T({4, 5}, DType::Bool), L({1})}));
  out.push_back(make("error: dim out of range", {T({3, 4}, f32), L({-3})}));
  return out;
}

std::vector<Sample> logsumexp_samples(const SampleContext& ctx) {
  auto args = [](int64_t d, bool k) { return std::vector<Literal>{L({d}), B(k)}; };
  if (ctx.performance) return stats::reduction_perf_samples(floating_dtypes(), args);
  std::vector<Sample> out = stats::dim_reduction_samples(all_numeric_dtypes(), args);
  const DType f32 = DType::Float32;
  out.push_back(make("two dims", {T({3, 4, 5}, f32), L({0, 2})}));
  out.push_back(make("dim=[] keepdim reduces all", {T({3, 4}, f32), L({}), B(true)}));
  out.push_back(make("empty reduced dim gives -inf", {T({3, 0}, f32), L({1})}));
  out.push_back(make("large values f16", {T_fill({4, 30}, DType::Float16, "special"), L({0})}));
  out.push_back(make("keepdim as keyword", {T({4, 5}, f32), L({1})}, {{"keepdim", B(true)}}));
  out.push_back(make("error: dim repeated", {T({3, 4}, f32), L({0, -2})}));
  return out;
}

Cost moment_cost(const Args& a, const Values& out) {
  return stats::read_write_cost(a, "self", out, 3.0);
}
Cost plain_cost(const Args& a, const Values& out) { return stats::read_write_cost(a, "self", out); }

}  // namespace

void register_statistics_moment_ops(OpRegistry& r) {
  auto add = [&](const char* schema, std::vector<DType> dtypes, MetaFn meta, RefFn ref,
                 SampleFn samples, const char* length_dims, CostFn cost = plain_cost) {
    OpDef op = OpDef::from_schema(schema, "reduction");
    op.dtypes = std::move(dtypes);
    op.meta = std::move(meta);
    op.ref = std::move(ref);
    op.samples = std::move(samples);
    op.cost = std::move(cost);
    // The sums are accumulated over the reduced elements: sqrt(length) widening.
    op.compare = stats::sqrt_length_compare(op.schema, length_dims);
    r.add(std::move(op));
  };
  const std::vector<DType> all = all_numeric_dtypes();
  const std::vector<DType> fl = floating_dtypes();
  add("aten::mean(Tensor self, *, ScalarType? dtype=None) -> Tensor", fl, mean_meta,
      structured_ref(mean_meta, mean_impl), mean_samples, nullptr);
  add("aten::prod(Tensor self, *, ScalarType? dtype=None) -> Tensor", all, prod_meta,
      structured_ref(prod_meta, prod_impl), prod_samples, nullptr);
  add("aten::prod.dim_int(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None) "
      "-> Tensor",
      all, prod_dim_meta, structured_ref(prod_dim_meta, prod_dim_impl), prod_dim_samples, "dim");
  // The sums of squares are accumulated over the reduced elements: sqrt(length) widening.
  const char* c = "dim";
  for (const bool root : {false, true}) {
    const std::string n = root ? "std" : "var";
    add(("aten::" + n +
         ".correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool "
         "keepdim=False) -> Tensor")
            .c_str(),
        fl, [](const Args& a) { return var_family_meta(a, a.flag("keepdim"), false); },
        [root](const Args& a) {
          return var_family(a, correction_of(a.value("correction")), a.flag("keepdim"), root,
                            false);
        },
        var_samples, c, moment_cost);
    add(("aten::" + n +
         "_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool "
         "keepdim=False) -> (Tensor, Tensor)")
            .c_str(),
        fl, [](const Args& a) { return var_family_meta(a, a.flag("keepdim"), true); },
        [root](const Args& a) {
          return var_family(a, correction_of(a.value("correction")), a.flag("keepdim"), root, true);
        },
        var_samples, c, moment_cost);
  }
  add(
      "aten::var.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> Tensor",
      fl, [](const Args& a) { return var_family_meta(a, a.flag("keepdim"), false); },
      [](const Args& a) {
        return var_family(a, a.flag("unbiased") ? 1.0 : 0.0, a.flag("keepdim"), false, false);
      },
      var_dim_samples, c, moment_cost);
  add("aten::logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor", all, logsumexp_meta,
      structured_ref(logsumexp_meta, logsumexp_impl), logsumexp_samples, "dim", moment_cost);
}

}  // namespace crucible
