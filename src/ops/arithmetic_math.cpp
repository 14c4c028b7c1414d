// Arithmetic, part 3: pow (Tensor_Tensor, Tensor_Scalar, Scalar), atan2 (and atan2.out),
// maximum/minimum, lerp (Scalar, Tensor weight), addcmul and addcdiv.
//
// ATen's rules, checked against torch:
//  - pow: the promoted dtype; a bool result raises ("pow" not implemented for 'Bool'); an
//    integral tensor to a negative integral Scalar power raises "Integers to negative integer
//    powers are not allowed."; integer tensor exponents that are negative give 0 (or ±1 for
//    bases ±1); integer powers wrap; pow.Scalar casts the base to the result dtype first
//    (300 ** u8 is 44 ** u8; 0.1 ** f16 uses f16(0.1)) and a base of 1 gives ones (even for NaN).
//  - atan2 is a float op (integral and bool inputs give f32).
//  - maximum/minimum promote, support bool, and propagate NaN.
//  - lerp: floating only; end (and weight for lerp.Tensor) must have self's dtype; ATen's
//    formula: |w| < 0.5 ? self + w * (end - self) : end - (end - self) * (1 - w). PyTorch 1.13
//    lacks f16 on the CPU; 2.x has it.
//  - addcmul: self + value * t1 * t2 in the promoted dtype; integral results convert value
//    with truncation (value=0.5 is 0); bool raises. addcdiv raises when both t1 and t2 are
//    integral (or bool).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>

#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/ops/destination.h"
#include "ops/arithmetic_internal.h"
#include "ops/arithmetic_parts.h"
#include "ops/pointwise_binary_meta.h"
#include "ops/samples.h"
#include "ops/util.h"

namespace crucible {

namespace {

using namespace samples;  // NOLINT(google-build-using-namespace): the sample vocabulary
using binmeta::Spec;

int64_t wrap_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

// ATen's powi: integer power with wrap-around; negative exponents give 0 except for bases ±1.
int64_t powi(int64_t a, int64_t b) {
  if (b < 0) {
    if (a == 1) return 1;
    if (a == -1) return (b % 2) != 0 ? -1 : 1;
    return 0;
  }
  int64_t result = 1;
  while (b) {
    if (b & 1) result = wrap_mul(result, a);
    b /= 2;
    a = wrap_mul(a, a);
  }
  return result;
}

// pow's result: the promoted dtype (bool raises).
Spec pow_spec(const Value& base, const Value& exp) {
  const DType rt = arith::promoted({base, exp});
  arith::require_modelled(rt, "pow");
  if (rt == DType::Bool) not_implemented_for("pow", DType::Bool);
  const Tensor tb = arith::operand(base), te = arith::operand(exp);
  return {broadcast_shapes(tb.shape(), te.shape()), rt};
}

// pow into `out`, of pow_spec's shape and dtype.
void pow_into(const Value& base, const Value& exp, const Tensor& out) {
  const DType rt = out.dtype();
  const Tensor ins[] = {arith::operand(base), arith::operand(exp)};
  if (is_floating(rt))
    arith::map_float(ins, out, [](const double* v) { return std::pow(v[0], v[1]); });
  else
    arith::map_int(ins, rt, out, [](const int64_t* v) { return powi(v[0], v[1]); });
}

// pow.Tensor_Tensor and pow.Tensor_Scalar (pow_ts_spec checked the exponent).
void pow_tensor_impl(const Args& a, const Values& outputs) {
  pow_into(a.value("self"), a.value("exponent"), outputs.at(0).tensor());
}

Spec pow_spec_of(const Args& a) { return pow_spec(a.value("self"), a.value("exponent")); }

Spec pow_ts_spec(const Args& a) {
  const Tensor& self = a.tensor("self");
  const Scalar e = a.scalar("exponent");
  CRUCIBLE_CHECK(!(is_integral(self.dtype(), true) && !e.is_floating() && e.to_int() < 0),
                 "Integers to negative integer powers are not allowed.");
  return pow_spec(a.value("self"), a.value("exponent"));
}

void pow_scalar_impl(const Args& a, const Values& outputs) {
  const Tensor& out = outputs.at(0).tensor();
  const DType rt = out.dtype();
  const Scalar b = a.value("self").to_scalar();
  if (b.to_double() == 1.0) {
    out.fill(1.0);
    return;
  }
  // The base is cast to the result dtype first.
  Tensor tb = Tensor::empty({}, rt);
  if (is_floating(rt))
    tb.set(0, b.to_double());
  else
    tb.set_int(0, b.is_floating() ? static_cast<int64_t>(b.to_double()) : b.to_int());
  pow_into(Value(tb), a.value("exponent"), out);
}

// atan2 is a float op: integral and bool results become f32.
Spec atan2_spec(const Args& a) {
  const Tensor ta = arith::operand(a.value("self")), tb = arith::operand(a.value("other"));
  const DType rt = opsutil::to_float_dtype(arith::promoted({a.value("self"), a.value("other")}));
  arith::require_modelled(rt, "atan2");
  return {broadcast_shapes(ta.shape(), tb.shape()), rt};
}

void atan2_impl(const Args& a, const Values& outputs) {
  const Tensor ins[] = {arith::operand(a.value("self")), arith::operand(a.value("other"))};
  arith::map_float(ins, outputs.at(0).tensor(),
                   [](const double* v) { return std::atan2(v[0], v[1]); });
}

// A spec function reading its arguments by name (binmeta::fresh_meta and its kin take it as is).
using NamedSpecFn = std::function<Spec(const Args&)>;

NamedSpecFn extremum_spec(bool is_max) {
  return [is_max](const Args& a) -> Spec {
    const Tensor ta = arith::operand(a.value("self")), tb = arith::operand(a.value("other"));
    const DType rt = arith::promoted({a.value("self"), a.value("other")});
    arith::require_modelled(rt, is_max ? "maximum" : "minimum");
    return {broadcast_shapes(ta.shape(), tb.shape()), rt};
  };
}

ImplFn extremum_impl(bool is_max) {
  return [is_max](const Args& a, const Values& outputs) {
    const Tensor& out = outputs.at(0).tensor();
    const DType rt = out.dtype();
    const Tensor ins[] = {arith::operand(a.value("self")), arith::operand(a.value("other"))};
    if (is_floating(rt)) {
      arith::map_float(ins, out, [is_max](const double* v) {
        if (std::isnan(v[0]) || std::isnan(v[1])) return std::nan("");
        return is_max ? (v[0] < v[1] ? v[1] : v[0]) : (v[0] > v[1] ? v[1] : v[0]);
      });
    } else {
      arith::map_int(ins, rt, out, [is_max](const int64_t* v) {
        return is_max ? std::max(v[0], v[1]) : std::min(v[0], v[1]);
      });
    }
  };
}

// How ATen prints a dtype in lerp's messages (caffe2 TypeMeta names).
std::string meta_name(DType t) {
  switch (t) {
    case DType::Bool:
      return "bool";
    case DType::UInt8:
      return "unsigned char";
    case DType::Int8:
      return "signed char";
    case DType::Int16:
      return "short int";
    case DType::Int32:
      return "int";
    case DType::Int64:
      return "long int";
    case DType::Float16:
      return "c10::Half";
    case DType::BFloat16:
      return "c10::BFloat16";
    case DType::Float32:
      return "float";
    case DType::Float64:
      return "double";
    default:
      return std::string(dtype_code(t));
  }
}

double lerp(double s, double e, double w) {
  return std::fabs(w) < 0.5 ? s + w * (e - s) : e - (e - s) * (1 - w);
}

// lerp's result: self's dtype, which end (and a tensor weight) must have; floating only.
Spec lerp_spec(const Args& a, bool tensor_weight) {
  const Tensor& self = a.tensor("self");
  const Tensor& end = a.tensor("end");
  CRUCIBLE_CHECK(self.dtype() == end.dtype(), "expected dtype " + meta_name(self.dtype()) +
                                                  " for `end` but got dtype " +
                                                  meta_name(end.dtype()));
  std::vector<Tensor> ins = {self, end};
  if (tensor_weight) {
    const Tensor& w = a.tensor("weight");
    CRUCIBLE_CHECK(self.dtype() == w.dtype(), "expected dtype " + meta_name(self.dtype()) +
                                                  " for `weight` but got dtype " +
                                                  meta_name(w.dtype()));
    ins.push_back(w);
  }
  const DType rt = self.dtype();
  arith::require_modelled(rt, "lerp");
  if (!is_floating(rt))
    not_implemented_for(tensor_weight ? "lerp_kernel_tensor" : "lerp_kernel_scalar", rt);
  return {arith::broadcast_all(ins), rt};
}

void lerp_impl(const Args& a, const Values& outputs, bool tensor_weight) {
  std::vector<Tensor> ins = {a.tensor("self"), a.tensor("end")};
  if (tensor_weight) ins.push_back(a.tensor("weight"));
  const Tensor& out = outputs.at(0).tensor();
  if (tensor_weight) {
    arith::map_float(ins, out, [](const double* v) { return lerp(v[0], v[1], v[2]); });
  } else {
    const double w = a.real("weight");
    arith::map_float(ins, out, [w](const double* v) { return lerp(v[0], v[1], w); });
  }
}

Scalar value_of(const Args& a) { return a.given("value") ? a.scalar("value") : Scalar(int64_t{1}); }

// addcmul's result: the promoted dtype (bool raises); an integral result needs a `value` that
// fits it.
Spec addcmul_spec(const Args& a) {
  const Tensor& self = a.tensor("self");
  const Tensor& t1 = a.tensor("tensor1");
  const Tensor& t2 = a.tensor("tensor2");
  const DType rt = arith::promoted({a.value("self"), a.value("tensor1"), a.value("tensor2")});
  arith::require_modelled(rt, "addcmul");
  if (rt == DType::Bool) not_implemented_for("addcmul_cpu_out", DType::Bool);
  const Tensor ins[] = {self, t1, t2};
  const Shape shape = arith::broadcast_all(ins);
  if (!is_floating(rt)) arith::check_scalar_fits(value_of(a), rt);
  return {shape, rt};
}

void addcmul_impl(const Args& a, const Values& outputs) {
  const Tensor& out = outputs.at(0).tensor();
  const DType rt = out.dtype();
  const Scalar value = value_of(a);
  const Tensor ins[] = {a.tensor("self"), a.tensor("tensor1"), a.tensor("tensor2")};
  if (is_floating(rt)) {
    const double v = value.to_double();
    arith::map_float(ins, out, [v](const double* x) { return x[0] + v * x[1] * x[2]; });
  } else {
    const int64_t v = arith::scalar_as_int(value, rt);
    arith::map_int(ins, rt, out, [v](const int64_t* x) {
      return wrap_add(x[0], wrap_mul(v, wrap_mul(x[1], x[2])));
    });
  }
}

constexpr const char* kAddcdivInt =
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will "
    "perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
    "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer "
    "inputs and as (input + value * tensor1 / tensor2) for float inputs. The future addcdiv "
    "behavior is just the latter implementation: (input + value * tensor1 / tensor2), for all "
    "dtypes.";

Spec addcdiv_spec(const Args& a) {
  const Tensor& self = a.tensor("self");
  const Tensor& t1 = a.tensor("tensor1");
  const Tensor& t2 = a.tensor("tensor2");
  CRUCIBLE_CHECK(!(is_integral(t1.dtype(), true) && is_integral(t2.dtype(), true)), kAddcdivInt);
  const DType rt = arith::promoted({a.value("self"), a.value("tensor1"), a.value("tensor2")});
  arith::require_modelled(rt, "addcdiv");
  const Tensor ins[] = {self, t1, t2};
  return {arith::broadcast_all(ins), rt};
}

void addcdiv_impl(const Args& a, const Values& outputs) {
  const double v = value_of(a).to_double();
  const Tensor ins[] = {a.tensor("self"), a.tensor("tensor1"), a.tensor("tensor2")};
  arith::map_float(ins, outputs.at(0).tensor(),
                   [v](const double* x) { return x[0] + v * x[1] / x[2]; });
}

// ---- samples ----

DType lit_result(const Sample& s) {
  std::vector<Value> vs;
  for (const Literal& a : s.call.args)
    if (a.kind == cases::LitKind::Tensor)
      vs.emplace_back(Tensor::empty(a.tensor.shape.empty() ? Shape{} : Shape{1}, a.tensor.dtype));
  return opsutil::result_type(vs);
}

std::vector<Sample> perf2(const SampleContext&) {
  return elementwise_perf_samples(2, arith::perf_dtypes());
}

std::vector<Sample> pow_tt_samples(const SampleContext& ctx) {
  if (ctx.performance) return perf2(ctx);
  std::vector<Sample> out = binary_samples(all_numeric_dtypes());
  for (Sample& s : out)
    if (!s.label.starts_with("error:") && lit_result(s) == DType::Bool)
      s.label = "error: bool result, " + s.label;
  out.push_back(
      make("i64 special bases, exponents 0..9 (wraps)",
           {T_fill({48}, DType::Int64, "special"), T_fill({48}, DType::Int64, "positive")}));
  out.push_back(
      make("i32 with negative exponents", {T({8, 8}, DType::Int32), T({8, 8}, DType::Int32)}));
  out.push_back(make("f32 base, Python int exponent", {T({6, 7}, DType::Float32), I(3)}));
  out.push_back(make("f16 positive base, f16 exponent",
                     {T_fill({6, 7}, DType::Float16, "positive"), T({6, 7}, DType::Float16)}));
  return out;
}

std::vector<Sample> pow_ts_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    for (DType t : arith::perf_dtypes()) {
      out.push_back(
          make("bandwidth square " + dtype_code_str(t), {T({int64_t{1} << 22}, t), I(2)}));
      out.push_back(
          make("bandwidth ^0.75 " + dtype_code_str(t), {T({int64_t{1} << 22}, t), F(0.75)}));
    }
    return out;
  }
  const Literal exps[] = {I(2), I(3), I(0), F(0.5), F(-1.5)};
  for (DType t : all_numeric_dtypes()) {
    for (const Literal& e : exps)
      out.push_back(make(dtype_code_str(t) + " ** " + cases::print_literal(e), {T({6, 7}, t), e}));
    const std::string neg_err = is_floating(t) ? "" : "error: integer to a negative power, ";
    out.push_back(make(neg_err + dtype_code_str(t) + " ** -2", {T({6, 7}, t), I(-2)}));
    out.push_back(make("0-d " + dtype_code_str(t) + " ** 2", {T({}, t), I(2)}));
    if (is_floating(t)) {
      out.push_back(make("special values " + dtype_code_str(t) + " ** 2",
                         {T_fill({64}, t, "special"), I(2)}));
      out.push_back(make("special values " + dtype_code_str(t) + " ** 0.5",
                         {T_fill({64}, t, "special"), F(0.5)}));
      out.push_back(make("special values " + dtype_code_str(t) + " ** -1",
                         {T_fill({64}, t, "special"), I(-1)}));
    }
  }
  out.push_back(make("error: bool ** True", {T({6, 7}, DType::Bool), B(true)}));
  out.push_back(make("i64 ** 41 wraps", {T_fill({32}, DType::Int64, "special"), I(41)}));
  out.push_back(make("transposed f32 ** 3", {T_transposed(6, 7, DType::Float32), I(3)}));
  out.push_back(make("expanded f32 ** 0.5", {T({5, 8}, DType::Float32, {0, 1}), F(0.5)}));
  out.push_back(make("empty f32", {T({0, 3}, DType::Float32), I(2)}));
  out.push_back(make("i32 ** -2.0 -> f32", {T({6, 7}, DType::Int32), F(-2.0)}));
  return out;
}

std::vector<Sample> pow_scalar_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    for (DType t : arith::perf_dtypes())
      out.push_back(
          make("bandwidth 2 ** x " + dtype_code_str(t), {F(2.0), T({int64_t{1} << 22}, t)}));
    return out;
  }
  const Literal bases[] = {I(2), F(2.5), I(-1), F(0.1)};
  for (DType t : all_numeric_dtypes()) {
    for (const Literal& b : bases)
      out.push_back(make(cases::print_literal(b) + " ** " + dtype_code_str(t), {b, T({6, 7}, t)}));
    out.push_back(make("2 ** 0-d " + dtype_code_str(t), {I(2), T({}, t)}));
    if (is_floating(t))
      out.push_back(
          make("1.5 ** special values " + dtype_code_str(t), {F(1.5), T_fill({64}, t, "special")}));
  }
  out.push_back(
      make("1 ** special values (ones)", {I(1), T_fill({64}, DType::Float32, "special")}));
  out.push_back(make("0 ** i64 (negative exponents give 0)", {I(0), T({6, 7}, DType::Int64)}));
  out.push_back(make("0.0 ** i64 -> f32", {F(0.0), T({6, 7}, DType::Int64)}));
  out.push_back(make("300 ** u8 (base cast to u8)", {I(300), T({6, 7}, DType::UInt8)}));
  out.push_back(make("error: True ** bool", {B(true), T({6, 7}, DType::Bool)}));
  out.push_back(make("-2.0 ** transposed f32", {F(-2.0), T_transposed(6, 7, DType::Float32)}));
  out.push_back(make("2 ** empty", {I(2), T({0}, DType::Float32)}));
  return out;
}

std::vector<Sample> binary_all_samples(const SampleContext& ctx) {
  if (ctx.performance) return perf2(ctx);
  return binary_samples(all_numeric_dtypes());
}

std::vector<Sample> atan2_out_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  auto add = [&](std::string label, Literal a, Literal b, Literal o) {
    out.push_back(make(std::move(label), {std::move(a), std::move(b)}, {{"out", std::move(o)}}));
  };
  if (ctx.performance) {
    const Shape s = {int64_t{1} << 22};
    for (DType t : arith::perf_dtypes())
      add("bandwidth " + dtype_code_str(t), T(s, t), T(s, t), T(s, t));
    return out;
  }
  for (DType t : floating_dtypes()) {
    add("same dtype " + dtype_code_str(t), T({6, 7}, t), T({6, 7}, t), T({6, 7}, t));
    add("special values " + dtype_code_str(t), T_fill({64}, t, "special"),
        T_fill({64}, t, "special"), T({64}, t));
  }
  add("i64 into f32 out", T({6, 7}, DType::Int64), T({6, 7}, DType::Int64),
      T({6, 7}, DType::Float32));
  add("f32 into f64 out", T({6, 7}, DType::Float32), T({7}, DType::Float32),
      T({6, 7}, DType::Float64));
  add("f32 into f16 out", T({6, 7}, DType::Float32), T({6, 7}, DType::Float32),
      T({6, 7}, DType::Float16));
  add("error: into i64 out", T({6, 7}, DType::Float32), T({6, 7}, DType::Float32),
      T({6, 7}, DType::Int64));
  add("error: i32 inputs into i32 out", T({6, 7}, DType::Int32), T({6, 7}, DType::Int32),
      T({6, 7}, DType::Int32));
  add("transposed out", T({6, 7}, DType::Float32), T({6, 7}, DType::Float32),
      T({6, 7}, DType::Float32, {1, 6}));
  add("0-d", T({}, DType::Float32), T({}, DType::Float32), T({}, DType::Float32));
  add("empty", T({0, 2}, DType::Float32), T({2}, DType::Float32), T({0, 2}, DType::Float32));
  add("bool into f32 out", T({6, 7}, DType::Bool), T({6, 7}, DType::Bool),
      T({6, 7}, DType::Float32));
  return out;
}

std::vector<Sample> lerp_samples(const SampleContext& ctx, bool tensor_weight) {
  std::vector<Sample> out;
  auto w = [&](DType t, const Shape& s, double scalar) {
    return tensor_weight ? T(s, t) : F(scalar);
  };
  if (ctx.performance) {
    const Shape s = {int64_t{1} << 22};
    for (DType t : arith::perf_dtypes())
      out.push_back(make("bandwidth " + dtype_code_str(t), {T(s, t), T(s, t), w(t, s, 0.3)}));
    return out;
  }
  for (DType t : floating_dtypes()) {
    const std::string d = " " + dtype_code_str(t);
    out.push_back(make("same shape" + d, {T({6, 7}, t), T({6, 7}, t), w(t, {6, 7}, 0.3)}));
    out.push_back(make("weight >= 0.5" + d, {T({6, 7}, t), T({6, 7}, t), w(t, {7}, 0.75)}));
    out.push_back(make("0-d" + d, {T({}, t), T({}, t), w(t, {}, -0.5)}));
    out.push_back(make("special values" + d,
                       {T_fill({64}, t, "special"), T_fill({64}, t, "special"), w(t, {64}, 0.5)}));
  }
  const DType f = DType::Float32;
  out.push_back(make("broadcast end", {T({4, 5}, f), T({5}, f), w(f, {4, 1}, 0.25)}));
  out.push_back(
      make("broadcast self (output larger than self)", {T({5}, f), T({3, 5}, f), w(f, {5}, 1.5)}));
  out.push_back(make("transposed", {T_transposed(6, 7, f), T({6, 7}, f), w(f, {6, 7}, 0.6)}));
  out.push_back(make("expanded", {T({5, 8}, f, {0, 1}), T({5, 8}, f), w(f, {5, 8}, 0.1)}));
  out.push_back(make("empty", {T({0, 3}, f), T({0, 3}, f), w(f, {3}, 0.5)}));
  out.push_back(make("error: integral self", {T({6, 7}, DType::Int64), T({6, 7}, DType::Int64),
                                              w(DType::Int64, {6, 7}, 0.5)}));
  out.push_back(make("error: end of another dtype",
                     {T({6, 7}, f), T({6, 7}, DType::Float64), w(f, {6, 7}, 0.5)}));
  out.push_back(
      make("error: shapes that do not broadcast", {T({3}, f), T({4}, f), w(f, {3}, 0.5)}));
  if (tensor_weight) {
    out.push_back(make("error: weight of another dtype",
                       {T({6, 7}, f), T({6, 7}, f), T({6, 7}, DType::Float16)}));
    out.push_back(make("error: 0-d weight of another dtype",
                       {T({6, 7}, f), T({6, 7}, f), T({}, DType::Float64)}));
    out.push_back(
        make("uniform weight", {T({6, 7}, f), T({6, 7}, f), T_fill({6, 7}, f, "uniform")}));
  } else {
    out.push_back(make("int weight 2 (extrapolates)", {T({6, 7}, f), T({6, 7}, f), I(2)}));
  }
  return out;
}

std::vector<Sample> addc_samples(const SampleContext& ctx, bool div) {
  std::vector<Sample> out;
  if (ctx.performance) {
    const Shape s = {int64_t{1} << 22};
    for (DType t : arith::perf_dtypes())
      out.push_back(
          make("bandwidth " + dtype_code_str(t), {T(s, t), T(s, t), T(s, t)}, {{"value", F(0.5)}}));
    return out;
  }
  auto add = [&](std::string label, Literal a, Literal b, Literal c,
                 std::vector<std::pair<std::string, Literal>> kw = {}) {
    out.push_back(
        make(std::move(label), {std::move(a), std::move(b), std::move(c)}, std::move(kw)));
  };
  for (DType t : all_numeric_dtypes()) {
    const bool raises = div ? !is_floating(t) : t == DType::Bool;
    const std::string e =
        raises ? (div ? "error: integral tensor1 and tensor2, " : "error: bool, ") : "";
    add(e + dtype_code_str(t), T({6, 7}, t), T({6, 7}, t), T({6, 7}, t));
    add(e + "value=2 " + dtype_code_str(t), T({6, 7}, t), T({7}, t), T({6, 1}, t),
        {{"value", I(2)}});
    if (is_floating(t)) {
      add("value=-0.5 " + dtype_code_str(t), T({6, 7}, t), T({6, 7}, t), T({6, 7}, t),
          {{"value", F(-0.5)}});
      add("special values " + dtype_code_str(t), T_fill({64}, t, "special"),
          T_fill({64}, t, "special"), T_fill({64}, t, "special"));
    }
  }
  const DType f = DType::Float32;
  add("0-d", T({}, f), T({}, f), T({}, f));
  add("broadcast self", T({5}, f), T({3, 5}, f), T({3, 1}, f));
  add("transposed", T_transposed(6, 7, f), T({6, 7}, f, {1, 6}), T({6, 7}, f));
  add("expanded", T({5, 8}, f, {0, 1}), T({5, 8}, f), T({8}, f));
  add("empty", T({0, 3}, f), T({3}, f), T({0, 3}, f));
  add("f16 self with f32 tensors -> f32", T({6, 7}, DType::Float16), T({6, 7}, f), T({6, 7}, f));
  add("value=1 given", T({6, 7}, f), T({6, 7}, f), T({6, 7}, f), {{"value", I(1)}});
  add("error: shapes that do not broadcast", T({3}, f), T({4}, f), T({3}, f));
  if (div) {
    add("i64 self, f32 tensor1 -> f32", T({6, 7}, DType::Int64), T({6, 7}, f),
        T({6, 7}, DType::Int64));
    add("error: f32 self, integral tensor1 and tensor2", T({6, 7}, f), T({6, 7}, DType::Int32),
        T({6, 7}, DType::Int32));
    add("divisor with zeros (inf, nan)", T({6, 7}, f), T({6, 7}, f), T_fill({6, 7}, f, "special"));
  } else {
    add("u8 with i8 -> i16", T({6, 7}, DType::UInt8), T({6, 7}, DType::Int8),
        T({6, 7}, DType::Int8));
    add("i64 value=0.5 truncates to 0", T({6, 7}, DType::Int64), T({6, 7}, DType::Int64),
        T({6, 7}, DType::Int64), {{"value", F(0.5)}});
    add("i32 value=-2.7 truncates to -2", T({6, 7}, DType::Int32), T({6, 7}, DType::Int32),
        T({6, 7}, DType::Int32), {{"value", F(-2.7)}});
    add("i32 overflow wraps", T_fill({48}, DType::Int32, "special"),
        T_fill({48}, DType::Int32, "special"), T_fill({48}, DType::Int32, "special"));
    add("i64 self with f32 tensors, value=0.5", T({6, 7}, DType::Int64), T({6, 7}, f), T({6, 7}, f),
        {{"value", F(0.5)}});
  }
  return out;
}

// An op of this file: its reference computes into the outputs its meta function describes.
OpDef math_op(std::string_view schema, MetaFn meta, ImplFn impl, SampleFn samples, double flops,
              std::vector<DType> dtypes = all_numeric_dtypes()) {
  OpDef op = OpDef::from_schema(schema, "pointwise.binary");
  op.dtypes = std::move(dtypes);
  op.meta = std::move(meta);
  op.ref = structured_ref(op.meta, std::move(impl));
  op.samples = std::move(samples);
  op.cost = arith::elementwise_cost(flops);
  return op;
}

std::vector<DType> no_bool() {
  std::vector<DType> ts = all_numeric_dtypes();
  ts.erase(ts.begin());
  return ts;
}

}  // namespace

void register_arithmetic_math_ops(OpRegistry& r) {
  // pow: ~20 FLOPs per element (exp/log) as a nominal cost.
  r.add(math_op("aten::pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor",
                binmeta::fresh_meta(pow_spec_of), pow_tensor_impl, pow_tt_samples, 20, no_bool()));
  r.add(math_op("aten::pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor",
                binmeta::fresh_meta(pow_ts_spec), pow_tensor_impl, pow_ts_samples, 20));
  r.add(math_op("aten::pow.Scalar(Scalar self, Tensor exponent) -> Tensor",
                binmeta::fresh_meta(pow_spec_of), pow_scalar_impl, pow_scalar_samples, 20));
  const OpDef atan2 = math_op("aten::atan2(Tensor self, Tensor other) -> Tensor",
                              binmeta::fresh_meta(atan2_spec), atan2_impl, binary_all_samples, 20);
  // atan2.out computes as atan2 does (in the promoted dtype), then casts into `out`.
  OpDef atan2_out =
      math_op("aten::atan2.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
              binmeta::out_meta(atan2_spec), ImplFn(), atan2_out_samples, 20);
  atan2_out.ref = arith::out_of(atan2.ref);
  r.add(atan2);
  r.add(std::move(atan2_out));
  r.add(math_op("aten::maximum(Tensor self, Tensor other) -> Tensor",
                binmeta::fresh_meta(extremum_spec(true)), extremum_impl(true), binary_all_samples,
                1));
  r.add(math_op("aten::minimum(Tensor self, Tensor other) -> Tensor",
                binmeta::fresh_meta(extremum_spec(false)), extremum_impl(false), binary_all_samples,
                1));
  r.add(math_op(
      "aten::lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor",
      binmeta::fresh_meta([](const Args& a) { return lerp_spec(a, false); }),
      [](const Args& a, const Values& outputs) { lerp_impl(a, outputs, false); },
      [](const SampleContext& c) { return lerp_samples(c, false); }, 3, floating_dtypes()));
  r.add(math_op(
      "aten::lerp.Tensor(Tensor self, Tensor end, Tensor weight) -> Tensor",
      binmeta::fresh_meta([](const Args& a) { return lerp_spec(a, true); }),
      [](const Args& a, const Values& outputs) { lerp_impl(a, outputs, true); },
      [](const SampleContext& c) { return lerp_samples(c, true); }, 3, floating_dtypes()));
  r.add(math_op(
      "aten::addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor",
      binmeta::fresh_meta(addcmul_spec), addcmul_impl,
      [](const SampleContext& c) { return addc_samples(c, false); }, 3, no_bool()));
  r.add(math_op(
      "aten::addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor",
      binmeta::fresh_meta(addcdiv_spec), addcdiv_impl,
      [](const SampleContext& c) { return addc_samples(c, true); }, 3, floating_dtypes()));
}

}  // namespace crucible
