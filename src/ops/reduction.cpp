// Reductions: aten.sum.dim_IntList, aten.sum.default, aten.mean.dim, aten.amax.default.
//
// Reference semantics (PyTorch 2.x, CPU; ReduceOps.cpp):
//  - sum: without dtype=, bool and integer inputs give i64, floating inputs keep their dtype.
//    With dtype=, the input is first converted to that dtype (make_reduction_from_out_ty), then
//    summed. Integer sums wrap in the output width; computing exactly in int64 and wrapping once
//    is the same thing, since wrapping commutes with + and *.
//  - dim=None and dim=[] reduce every dim; dims wrap (negative dims allowed), a 0-d tensor
//    accepts 0 and -1; a dim listed twice raises. Reducing a 0-size dim gives 0.
//  - mean: the input (or dtype=) must be floating; the sum is divided by the number of reduced
//    elements, so an empty reduction is 0/0 = NaN.
//  - amax: output dtype = input dtype, NaN propagates; on an empty input ATen requires dims to be
//    given and each to have non-zero size (zero_numel_check_dims).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "crucible/core/dispatch.h"
#include "crucible/core/element_runs.h"
#include "crucible/core/error.h"
#include "crucible/ops/destination.h"
#include "ops/families.h"
#include "ops/meta_fn.h"
#include "ops/samples.h"
#include "ops/util.h"

namespace crucible {
namespace {

using namespace samples;

// ATen's ScalarType name, as its error messages spell it ("Float", "Long").

// `v` rounded to dtype `t` (what storing it in a tensor of that dtype keeps).
double round_to(double v, DType t) {
  alignas(8) unsigned char buf[8] = {};
  store_from_double(buf, t, v);
  return load_as_double(buf, t);
}

// An int[1]? dim argument: None, a single int or a list.
std::vector<int64_t> dims_of(const Value& v) {
  if (v.is_none()) return {};
  if (v.kind() == ValueKind::Int) return {v.to_int()};
  return v.to_int_list();
}

// Which input dims a reduction folds and the shape it produces.
struct ReducePlan {
  std::vector<bool> reduced;  // per input dim
  Shape out_shape;
  int64_t count = 1;  // input elements per output element
};

// Normalises `dims` against `self` as ATen's make_dim_mask does: each dim wraps (or raises),
// a repeated dim raises, and an empty list means every dim.
ReducePlan plan_reduction(const Tensor& self, const std::vector<int64_t>& dims, bool keepdim) {
  const int64_t nd = self.dim();
  ReducePlan p;
  p.reduced.assign(static_cast<size_t>(nd), dims.empty());
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(nd, 1)), false);
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, nd);
    if (seen[w])
      op_error("dim " + std::to_string(w) + " appears multiple times in the list of dims");
    seen[w] = true;
    if (nd > 0) p.reduced[w] = true;
  }
  for (int64_t d = 0; d < nd; ++d) {
    if (p.reduced[d]) {
      p.count *= self.size(d);
      if (keepdim) p.out_shape.push_back(1);
    } else {
      p.out_shape.push_back(self.size(d));
    }
  }
  return p;
}

// Calls fn(output index, input logical index) for every input element.
template <typename Fn>
void for_each_reduced(const Tensor& self, const ReducePlan& p, Fn&& fn) {
  const Shape& shape = self.shape();
  int64_t in_index = 0;
  for_each_index(shape, [&](std::span<const int64_t> idx) {
    int64_t out_index = 0;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (!p.reduced[d]) out_index = out_index * shape[d] + idx[d];
    }
    fn(out_index, in_index++);
  });
}

int64_t element_as_int(const Tensor& t, int64_t i) {
  if (!is_floating(t.dtype())) return t.get_int(i);
  const double v = t.get(i);
  // C++'s float -> integer conversion (truncation); out-of-range values are undefined in ATen.
  if (!(std::abs(v) < 9.2e18)) return 0;
  return static_cast<int64_t>(v);
}

// sum in the output dtype `out_dt` (the dtype the input is converted to first).
// The sum (the mean with `divide`) of self over the plan's dims, accumulated in double (exactly
// in wrapping int64 for integer outputs), into `out` (the plan's shape, the result dtype).
void sum_into(const Tensor& self, const ReducePlan& p, bool divide, const Tensor& out) {
  const DType out_dt = out.dtype();
  const int64_t n = out.numel();
  if (is_integral(out_dt, /*include_bool=*/true)) {
    std::vector<uint64_t> acc(static_cast<size_t>(n), 0);  // wraps like the output does
    for_each_reduced(self, p, [&](int64_t o, int64_t i) {
      acc[o] += static_cast<uint64_t>(element_as_int(self, i));
    });
    for (int64_t o = 0; o < n; ++o) out.set_int(o, static_cast<int64_t>(acc[o]));
    return;
  }
  const bool convert = self.dtype() != out_dt;
  std::vector<double> acc(static_cast<size_t>(n), 0.0);
  // By runs of the input in its logical order, on one thread: every output's terms are added
  // in the order of the input's elements. The accumulators' strides over the input's shape:
  // 0 along the reduced dims, row-major over the kept ones.
  Shape acc_strides(static_cast<size_t>(self.dim()), 0);
  for (int64_t d = self.dim(), run = 1; d-- > 0;) {
    if (p.reduced[static_cast<size_t>(d)]) continue;
    acc_strides[static_cast<size_t>(d)] = run;
    run *= self.size(d);
  }
  const int64_t offsets[] = {self.offset(), 0};
  const bool floating_in = is_floating(self.dtype());
  opsutil::for_each_run(self.shape(), {self.strides(), acc_strides}, offsets, false,
                        [&](int64_t, const int64_t* o, int64_t len, const int64_t* st) {
                          double* v = opsutil::scratch_doubles(0, len);
                          const char* src = static_cast<const char*>(self.storage()->data()) +
                                            o[0] * static_cast<int64_t>(self.itemsize());
                          if (floating_in) {
                            load_run_as_double(src, st[0], len, self.dtype(), v);
                          } else {
                            int64_t* iv = opsutil::scratch_ints(0, len);
                            load_run_as_int(src, st[0], len, self.dtype(), iv);
                            for (int64_t i = 0; i < len; ++i) v[i] = static_cast<double>(iv[i]);
                          }
                          if (convert)
                            for (int64_t i = 0; i < len; ++i) v[i] = round_to(v[i], out_dt);
                          double* a = acc.data() + o[1];
                          if (st[1] == 0) {
                            double s = *a;
                            for (int64_t i = 0; i < len; ++i) s += v[i];
                            *a = s;
                          } else {
                            for (int64_t i = 0; i < len; ++i) a[i * st[1]] += v[i];
                          }
                        });
  for (int64_t o = 0; o < n; ++o) {
    out.set(o, divide ? acc[o] / static_cast<double>(p.count) : acc[o]);
  }
}

DType sum_dtype(const Tensor& self, const Value& dtype) {
  if (auto d = dtype.opt_dtype()) return *d;
  return is_integral(self.dtype(), /*include_bool=*/true) ? DType::Int64 : self.dtype();
}

void check_reducible(DType t) {
  if (t == DType::Float8E4M3FN || t == DType::Float8E5M2) {
    not_implemented_for("sum_cpu", t);
  }
}

// sum.dim_IntList, sum and mean.dim into their outputs (meta: sum_dim_meta, sum_meta,
// mean_meta); the plan is the meta function's, computed again for its index maps.
void sum_dim_impl(const Args& a, const Values& out) {
  const Tensor& self = a.tensor("self");
  const ReducePlan p = plan_reduction(self, dims_of(a.value("dim")), a.flag("keepdim"));
  sum_into(self, p, /*divide=*/false, out.at(0).tensor());
}

void sum_impl(const Args& a, const Values& out) {
  const Tensor& self = a.tensor("self");
  sum_into(self, plan_reduction(self, {}, false), /*divide=*/false, out.at(0).tensor());
}

Values sum_dim_meta(const Args& a) {
  const Tensor& self = a.tensor("self");
  check_reducible(self.dtype());
  ReducePlan p = plan_reduction(self, dims_of(a.value("dim")), a.flag("keepdim"));
  return {meta::fresh(p.out_shape, sum_dtype(self, a.value("dtype")))};
}

Values sum_meta(const Args& a) {
  const Tensor& self = a.tensor("self");
  check_reducible(self.dtype());
  return {meta::fresh({}, sum_dtype(self, a.value("dtype")))};
}

// mean's computation dtype (dtype= or the input's), checked to be floating.
DType mean_dtype(const Args& a) {
  const Tensor& self = a.tensor("self");
  const std::optional<DType> dtype = a.opt_dtype("dtype");
  const DType in_dt = dtype ? *dtype : self.dtype();
  if (!is_floating(in_dt) || in_dt == DType::Float8E4M3FN || in_dt == DType::Float8E5M2) {
    op_error(
        std::string("mean(): could not infer output dtype. ") + (dtype ? "Optional" : "Input") +
        " dtype must be either a floating point or complex dtype. Got: " + scalar_type_name(in_dt));
  }
  return in_dt;
}

void mean_dim_impl(const Args& a, const Values& out) {
  const Tensor& self = a.tensor("self");
  const ReducePlan p = plan_reduction(self, dims_of(a.value("dim")), a.flag("keepdim"));
  sum_into(self, p, /*divide=*/true, out.at(0).tensor());
}

Values mean_meta(const Args& a) {
  const DType in_dt = mean_dtype(a);
  ReducePlan p = plan_reduction(a.tensor("self"), dims_of(a.value("dim")), a.flag("keepdim"));
  return {meta::fresh(p.out_shape, in_dt)};
}

// amax's checks and reduction plan.
ReducePlan amax_plan(const Args& a) {
  const Tensor& self = a.tensor("self");
  const std::vector<int64_t> dims = dims_of(a.value("dim"));
  if (self.numel() == 0) {
    if (dims.empty()) {
      op_error(
          "amax(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
          "reduction dim with the 'dim' argument.");
    }
    for (int64_t d : dims) {
      if (self.dim() == 0) continue;
      if (self.size(wrap_dim(d, self.dim())) == 0) {
        op_error("amax(): Expected reduction dim " + std::to_string(d) + " to have non-zero size.");
      }
    }
  }
  return plan_reduction(self, dims, a.flag("keepdim"));
}

Values amax_meta(const Args& a) {
  return {meta::fresh(amax_plan(a).out_shape, a.tensor("self").dtype())};
}

void amax_impl(const Args& a, const Values& outputs) {
  const Tensor& self = a.tensor("self");
  const ReducePlan p = amax_plan(a);
  const Tensor& out = outputs.at(0).tensor();
  const int64_t n = out.numel();
  if (is_floating(self.dtype())) {
    std::vector<double> best(static_cast<size_t>(n), -std::numeric_limits<double>::infinity());
    for_each_reduced(self, p, [&](int64_t o, int64_t i) {
      const double v = self.get(i);
      if (std::isnan(best[o])) return;
      if (std::isnan(v) || v > best[o]) best[o] = v;
    });
    for (int64_t o = 0; o < n; ++o) out.set(o, best[o]);
  } else {
    std::vector<int64_t> best(static_cast<size_t>(n), std::numeric_limits<int64_t>::min());
    for_each_reduced(self, p,
                     [&](int64_t o, int64_t i) { best[o] = std::max(best[o], self.get_int(i)); });
    for (int64_t o = 0; o < n; ++o) out.set_int(o, best[o]);
  }
}

// Number of input elements folded into each output element, for tolerances. A malformed call
// (which the reference rejects anyway) counts as 1.
double reduction_length(const Args& a, bool all_dims) {
  if (a.size() == 0 || !a.value("self").is_tensor()) return 1;
  const Tensor& self = a.tensor("self");
  std::vector<int64_t> dims = all_dims ? std::vector<int64_t>{} : dims_of(a.value("dim"));
  if (dims.empty()) return static_cast<double>(std::max<int64_t>(self.numel(), 1));
  double n = 1;
  for (int64_t d : dims) {
    if (self.dim() == 0) continue;
    if (d < -self.dim() || d >= self.dim()) return 1;
    n *= static_cast<double>(self.size(d));
  }
  return std::max(n, 1.0);
}

// A sum of n terms, each rounded in the candidate's accumulator, is off by about sqrt(n) unit
// roundoffs of the running sum when the errors are independent (and by n in the worst case);
// sqrt(n) widens the per-dtype tolerance just enough for any sound summation order.
ComparePolicy sum_compare(Schema schema, bool all_dims) {
  ComparePolicy c;
  c.tol_scale = [schema = std::move(schema), all_dims](const Values& a) {
    return std::sqrt(reduction_length(Args(a, schema), all_dims));
  };
  return c;
}

Cost reduction_cost(const Args& a, const Values& out) {
  Cost c;
  if (a.size() == 0 || !a.value("self").is_tensor()) return c;
  const Tensor& self = a.tensor("self");
  c.flops = static_cast<double>(self.numel());
  c.bytes = static_cast<double>(self.numel() * self.itemsize());
  if (!out.empty() && out[0].is_tensor()) {
    c.bytes += static_cast<double>(out[0].tensor().numel() * out[0].tensor().itemsize());
  }
  return c;
}

// Cases shared by the dim-taking reductions: self, dim, keepdim (+ kwargs).
void add_dim_layout_cases(std::vector<Sample>& out, DType t) {
  const std::string d = " " + dtype_code_str(t);
  out.push_back(make("3-d, dims [0, 2], keepdim" + d, {T({4, 5, 6}, t), L({0, 2}), B(true)}));
  out.push_back(make("negative dim" + d, {T({4, 5, 6}, t), L({-1})}));
  out.push_back(make("transposed" + d, {T_transposed(9, 7, t), L({0})}));
  out.push_back(make("sliced with a step" + d, {T({3, 5}, t, {10, 2}), L({1})}));
  out.push_back(make("expanded (stride 0)" + d, {T({4, 6}, t, {0, 1}), L({0}), B(true)}));
}

std::vector<Sample> sum_dim_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  const DType f32 = DType::Float32;
  if (ctx.performance) {
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16}) {
      out.push_back(
          make("rows of [4096, 4096] " + dtype_code_str(t), {T({4096, 4096}, t), L({-1})}));
      out.push_back(
          make("columns of [4096, 4096] " + dtype_code_str(t), {T({4096, 4096}, t), L({0})}));
      out.push_back(
          make("bias grad [64, 128, 768] " + dtype_code_str(t), {T({64, 128, 768}, t), L({0, 1})}));
    }
    return out;
  }
  for (DType t : all_numeric_dtypes()) {
    out.push_back(make("rows " + dtype_code_str(t), {T({5, 7}, t), L({1})}));
    out.push_back(make("all dims, keepdim " + dtype_code_str(t), {T({3, 4}, t), None(), B(true)}));
  }
  for (DType t : {f32, DType::Float16, DType::Int64, DType::Bool}) add_dim_layout_cases(out, t);
  out.push_back(make("dim=[] reduces all", {T({4, 5, 6}, f32), L({})}));
  out.push_back(make("dim=[] reduces all, keepdim", {T({4, 5, 6}, f32), L({}), B(true)}));
  out.push_back(make("keepdim as keyword", {T({4, 5}, f32), L({1})}, {{"keepdim", B(true)}}));
  out.push_back(make("1-d long", {T({1031}, f32), L({0})}));
  out.push_back(make("0-d, dim [0]", {T({}, f32), L({0})}));
  out.push_back(make("0-d, dim [-1], keepdim", {T({}, DType::Int32), L({-1}), B(true)}));
  out.push_back(make("0-d, dim None", {T({}, DType::Float16), None()}));
  out.push_back(make("empty reduced dim gives 0", {T({0, 4}, f32), L({0})}));
  out.push_back(make("empty kept dim", {T({3, 0}, f32), L({0}), B(true)}));
  out.push_back(make("empty, all dims, i32", {T({0}, DType::Int32), None()}));
  out.push_back(make("dtype=f64 from i32", {T({5, 6}, DType::Int32), L({1})},
                     {{"dtype", DT(DType::Float64)}}));
  out.push_back(
      make("dtype=f32 from f16", {T({5, 64}, DType::Float16), L({1})}, {{"dtype", DT(f32)}}));
  out.push_back(
      make("dtype=f16 from f32", {T({5, 64}, f32), L({-1})}, {{"dtype", DT(DType::Float16)}}));
  out.push_back(
      make("dtype=i32 from bool", {T({6, 5}, DType::Bool), L({0})}, {{"dtype", DT(DType::Int32)}}));
  out.push_back(make("dtype=i64 from f32 (truncates)", {T({6, 5}, f32), L({0})},
                     {{"dtype", DT(DType::Int64)}}));
  out.push_back(make("dtype=i8 from i8 (wraps)", {T_fill({4, 40}, DType::Int8, "special"), L({1})},
                     {{"dtype", DT(DType::Int8)}}));
  out.push_back(make("special values f32", {T_fill({6, 8}, f32, "special"), L({1})}));
  out.push_back(make("special values f16 (overflow to inf)",
                     {T_fill({6, 8}, DType::Float16, "special"), L({1})}));
  out.push_back(make("special values bf16", {T_fill({6, 8}, DType::BFloat16, "special"), L({0})}));
  out.push_back(
      make("special values i64 (wraps)", {T_fill({6, 8}, DType::Int64, "special"), L({1})}));
  out.push_back(make("error: dim out of range", {T({3, 4}, f32), L({2})}));
  out.push_back(make("error: negative dim out of range", {T({3, 4}, f32), L({-3})}));
  out.push_back(make("error: dim repeated", {T({3, 4}, f32), L({0, 0})}));
  out.push_back(make("error: dim repeated after wrapping", {T({3, 4}, f32), L({1, -1})}));
  out.push_back(make("error: 0-d dim out of range", {T({}, f32), L({1})}));
  return out;
}

std::vector<Sample> sum_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  const DType f32 = DType::Float32;
  if (ctx.performance) {
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16}) {
      out.push_back(make("[4096, 4096] " + dtype_code_str(t), {T({4096, 4096}, t)}));
    }
    out.push_back(make("loss-sized [64, 128] f32", {T({64, 128}, f32)}));
    return out;
  }
  for (DType t : all_numeric_dtypes()) {
    out.push_back(make("ordinary " + dtype_code_str(t), {T({7, 13}, t)}));
    out.push_back(make("0-d " + dtype_code_str(t), {T({}, t)}));
  }
  out.push_back(make("1-d long", {T({1031}, f32)}));
  out.push_back(make("empty gives 0", {T({0, 3}, f32)}));
  out.push_back(make("empty i64", {T({0}, DType::Int64)}));
  out.push_back(make("transposed", {T_transposed(9, 7, f32)}));
  out.push_back(make("expanded (stride 0)", {T({5, 8}, f32, {0, 1})}));
  out.push_back(make("sliced with a step", {T({6, 5}, DType::Int32, {10, 2})}));
  out.push_back(make("dtype=f64 from f32", {T({5, 6}, f32)}, {{"dtype", DT(DType::Float64)}}));
  out.push_back(make("dtype=f32 from bf16", {T({64}, DType::BFloat16)}, {{"dtype", DT(f32)}}));
  out.push_back(make("dtype=i16 from u8", {T({64}, DType::UInt8)}, {{"dtype", DT(DType::Int16)}}));
  out.push_back(make("special values f32", {T_fill({48}, f32, "special")}));
  out.push_back(make("special values f16", {T_fill({48}, DType::Float16, "special")}));
  out.push_back(make("special values i32 (i64 result)", {T_fill({48}, DType::Int32, "special")}));
  return out;
}

std::vector<Sample> mean_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  const DType f32 = DType::Float32;
  if (ctx.performance) {
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16}) {
      out.push_back(make("last dim of [64, 128, 768] " + dtype_code_str(t),
                         {T({64, 128, 768}, t), L({-1}), B(true)}));
      out.push_back(make("global pool [64, 512, 7, 7] " + dtype_code_str(t),
                         {T({64, 512, 7, 7}, t), L({-1, -2}), B(true)}));
    }
    return out;
  }
  for (DType t : floating_dtypes()) {
    out.push_back(make("rows " + dtype_code_str(t), {T({5, 7}, t), L({1})}));
    out.push_back(make("all dims, keepdim " + dtype_code_str(t), {T({3, 4}, t), None(), B(true)}));
    out.push_back(
        make("special values " + dtype_code_str(t), {T_fill({6, 8}, t, "special"), L({1})}));
  }
  for (DType t : {f32, DType::Float16}) add_dim_layout_cases(out, t);
  out.push_back(make("dim=[] reduces all", {T({4, 5, 6}, f32), L({})}));
  out.push_back(make("keepdim as keyword", {T({4, 5}, f32), L({1})}, {{"keepdim", B(true)}}));
  out.push_back(make("0-d", {T({}, f32), L({0})}));
  out.push_back(make("0-d, dim None", {T({}, DType::Float64), None()}));
  out.push_back(make("empty reduced dim gives NaN", {T({0, 4}, f32), L({0})}));
  out.push_back(make("empty, all dims gives NaN", {T({0}, DType::Float16), None()}));
  out.push_back(make("empty kept dim", {T({3, 0}, f32), L({0})}));
  out.push_back(
      make("dtype=f32 from i64", {T({5, 6}, DType::Int64), L({1})}, {{"dtype", DT(f32)}}));
  out.push_back(make("dtype=f64 from f16", {T({5, 64}, DType::Float16), L({1})},
                     {{"dtype", DT(DType::Float64)}}));
  out.push_back(
      make("dtype=f32 from bf16", {T({5, 64}, DType::BFloat16), L({-1})}, {{"dtype", DT(f32)}}));
  for (DType t : integral_dtypes(/*include_bool=*/true)) {
    out.push_back(make("error: integral input " + dtype_code_str(t), {T({4, 5}, t), L({1})}));
  }
  out.push_back(
      make("error: integral dtype=", {T({4, 5}, f32), L({1})}, {{"dtype", DT(DType::Int64)}}));
  out.push_back(make("error: dim out of range", {T({3, 4}, f32), L({2})}));
  out.push_back(make("error: dim repeated", {T({3, 4}, f32), L({-1, 1})}));
  return out;
}

std::vector<Sample> amax_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  const DType f32 = DType::Float32;
  if (ctx.performance) {
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16}) {
      out.push_back(
          make("rows of [4096, 4096] " + dtype_code_str(t), {T({4096, 4096}, t), L({-1})}));
      out.push_back(make("all of [4096, 4096] " + dtype_code_str(t), {T({4096, 4096}, t)}));
    }
    return out;
  }
  for (DType t : all_numeric_dtypes()) {
    out.push_back(make("rows " + dtype_code_str(t), {T({5, 7}, t), L({1})}));
    out.push_back(make("default dim (all) " + dtype_code_str(t), {T({3, 4}, t)}));
  }
  for (DType t : {f32, DType::BFloat16, DType::Int32}) add_dim_layout_cases(out, t);
  out.push_back(make("dim=[] keepdim", {T({4, 5, 6}, f32), L({}), B(true)}));
  out.push_back(
      make("keepdim as keyword", {T({4, 5}, f32)}, {{"dim", L({0})}, {"keepdim", B(true)}}));
  out.push_back(make("0-d", {T({}, f32)}));
  out.push_back(make("0-d, dim [0]", {T({}, DType::Int64), L({0})}));
  out.push_back(make("empty with a non-empty reduced dim", {T({0, 4}, f32), L({1})}));
  for (DType t : floating_dtypes()) {
    out.push_back(make("special values (NaN propagates) " + dtype_code_str(t),
                       {T_fill({6, 8}, t, "special"), L({1})}));
  }
  out.push_back(make("special values i64", {T_fill({6, 8}, DType::Int64, "special"), L({0})}));
  out.push_back(make("special values u8", {T_fill({6, 8}, DType::UInt8, "special"), L({0})}));
  out.push_back(make("error: empty reduced dim", {T({0, 4}, f32), L({0})}));
  out.push_back(make("error: empty, no dim", {T({3, 0}, f32)}));
  out.push_back(make("error: dim out of range", {T({3, 4}, f32), L({2})}));
  out.push_back(make("error: dim repeated", {T({3, 4}, f32), L({0, -2})}));
  return out;
}

}  // namespace

void register_reduction_ops(OpRegistry& r) {
  const std::vector<DType> all = all_numeric_dtypes();
  {
    OpDef op = OpDef::from_schema(
        "aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? "
        "dtype=None) -> Tensor",
        "reduction");
    op.dtypes = all;
    op.meta = sum_dim_meta;
    op.ref = structured_ref(op.meta, sum_dim_impl);
    op.samples = sum_dim_samples;
    op.cost = reduction_cost;
    op.compare = sum_compare(op.schema, /*all_dims=*/false);
    r.add(std::move(op));
  }
  {
    OpDef op = OpDef::from_schema("aten::sum(Tensor self, *, ScalarType? dtype=None) -> Tensor",
                                  "reduction");
    op.dtypes = all;
    op.meta = sum_meta;
    op.ref = structured_ref(op.meta, sum_impl);
    op.samples = sum_samples;
    op.cost = reduction_cost;
    op.compare = sum_compare(op.schema, /*all_dims=*/true);
    r.add(std::move(op));
  }
  {
    OpDef op = OpDef::from_schema(
        "aten::mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? "
        "dtype=None) -> Tensor",
        "reduction");
    op.dtypes = floating_dtypes();
    op.meta = mean_meta;
    op.ref = structured_ref(op.meta, mean_dim_impl);
    op.samples = mean_samples;
    op.cost = reduction_cost;
    op.compare = sum_compare(op.schema, /*all_dims=*/false);
    r.add(std::move(op));
  }
  {
    OpDef op = OpDef::from_schema(
        "aten::amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", "reduction");
    op.dtypes = all;
    op.meta = amax_meta;
    op.ref = structured_ref(op.meta, amax_impl);
    op.samples = amax_samples;
    op.cost = reduction_cost;  // a max is exact: the default (exact-ish) tolerances apply
    r.add(std::move(op));
  }
}

}  // namespace crucible
