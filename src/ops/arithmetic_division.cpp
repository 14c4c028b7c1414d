// Arithmetic, part 2: division with rounding modes (div.Tensor_mode, div.Scalar_mode,
// floor_divide), fmod and remainder (Tensor and Scalar).
//
// ATen's rules, checked against torch:
//  - the result dtype is the promoted dtype (no float promotion, unlike true division); a bool
//    result raises ("div_floor_cpu" not implemented for 'Bool');
//  - integer division or modulo by zero raises "ZeroDivisionError";
//  - 'trunc' rounds toward zero, 'floor' (and floor_divide, PyTorch >= 1.13) toward -inf;
//    remainder has the sign of the divisor (Python's %), fmod the sign of the dividend;
//  - floating inputs: operands are cast to the result dtype and computed in its opmath type
//    (f32 for f16/bf16/f32, f64 for f64) with ATen's formulas (div_floor_floating: x/0 is the
//    IEEE quotient, inf // 2 is NaN, -0.0 kept), then rounded once. Emulating the compute type
//    matters here: trunc/floor of a quotient that rounds to an integer in f32 differs by one.
//  - a Python number operand is cast to the result dtype first (u8 % -3 is u8 % 253).
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
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

enum class Mode { Trunc, Floor, Fmod, Remainder };

const char* kernel_name(Mode m) {
  switch (m) {
    case Mode::Trunc:
      return "div_trunc_cpu";
    case Mode::Floor:
      return "div_floor_cpu";
    case Mode::Fmod:
      return "fmod_cpu";
    case Mode::Remainder:
      return "remainder_cpu";
  }
  return "";
}

template <typename F>
F div_floor_floating(F a, F b) {
  if (b == 0) return a / b;
  const F mod = std::fmod(a, b);
  F div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= F(1);
  if (div != 0) {
    F floordiv = std::floor(div);
    if (div - floordiv > F(0.5)) floordiv += F(1);
    return floordiv;
  }
  return std::copysign(F(0), a / b);
}

template <typename F>
F remainder_floating(F a, F b) {
  F mod = std::fmod(a, b);
  if (mod != 0 && (b < 0) != (mod < 0)) mod += b;
  return mod;
}

template <typename F>
double float_kernel(Mode m, F a, F b) {
  switch (m) {
    case Mode::Trunc:
      return static_cast<double>(std::trunc(a / b));
    case Mode::Floor:
      return static_cast<double>(div_floor_floating(a, b));
    case Mode::Fmod:
      return static_cast<double>(std::fmod(a, b));
    case Mode::Remainder:
      return static_cast<double>(remainder_floating(a, b));
  }
  return 0;
}

int64_t int_kernel(Mode m, int64_t a, int64_t b) {
  CRUCIBLE_CHECK(b != 0, "ZeroDivisionError");
  if (b == -1) {  // avoid INT64_MIN / -1 (the quotient wraps, the remainder is 0)
    const auto neg = static_cast<int64_t>(0 - static_cast<uint64_t>(a));
    return m == Mode::Trunc || m == Mode::Floor ? neg : 0;
  }
  const int64_t q = a / b, r = a % b;
  switch (m) {
    case Mode::Trunc:
      return q;
    case Mode::Floor:
      return (r != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
    case Mode::Fmod:
      return r;
    case Mode::Remainder:
      return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
  }
  return 0;
}

// The result of a rounding division or modulo: the promoted dtype (bool raises).
Spec divide_spec(const Value& a, const Value& b, Mode m) {
  const Tensor ta = arith::operand(a), tb = arith::operand(b);
  const DType rt = arith::promoted({a, b});
  arith::require_modelled(rt, kernel_name(m));
  if (rt == DType::Bool) not_implemented_for(kernel_name(m), rt);
  return {broadcast_shapes(ta.shape(), tb.shape()), rt};
}

// Computes into `out`, of divide_spec's shape and dtype.
void divide_into(const Value& a, const Value& b, Mode m, const Tensor& out) {
  const Tensor ta = arith::operand(a), tb = arith::operand(b);
  const DType rt = out.dtype();
  const Tensor ins[] = {ta, tb};
  if (rt == DType::Float64) {
    arith::map_float(ins, out,
                     [m](const double* v) { return float_kernel<double>(m, v[0], v[1]); });
  } else if (is_floating(rt)) {
    arith::map_float(
        ins, out,
        [m](const double* v) {
          return float_kernel<float>(m, static_cast<float>(v[0]), static_cast<float>(v[1]));
        },
        rt);
  } else {
    arith::map_int(ins, rt, out, [m](const int64_t* v) { return int_kernel(m, v[0], v[1]); });
  }
}

// div.Tensor_mode / div.Scalar_mode's rounding mode (None: true division), checked.
std::optional<Mode> rounding_mode(const Args& a) {
  const Value& mode = a.value("rounding_mode");
  if (mode.is_none()) return std::nullopt;
  const std::string& s = mode.str_value();
  CRUCIBLE_CHECK(
      s == "trunc" || s == "floor",
      "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '" + s + "'");
  return s == "trunc" ? Mode::Trunc : Mode::Floor;
}

Spec div_mode_spec(const Args& a) {
  const Value& self = a.value("self");
  const Value& other = a.value("other");
  if (const std::optional<Mode> m = rounding_mode(a)) return divide_spec(self, other, *m);
  const Tensor ta = arith::operand(self), tb = arith::operand(other);
  const DType rt = opsutil::to_float_dtype(arith::promoted({self, other}));
  arith::require_modelled(rt, "div");
  return {broadcast_shapes(ta.shape(), tb.shape()), rt};
}

void div_mode_impl(const Args& a, const Values& outputs) {
  const Tensor& out = outputs.at(0).tensor();
  const Value& self = a.value("self");
  const Value& other = a.value("other");
  if (const std::optional<Mode> m = rounding_mode(a)) {
    divide_into(self, other, *m, out);
    return;
  }
  const Tensor ins[] = {arith::operand(self), arith::operand(other)};
  arith::map_float(ins, out, [](const double* v) { return v[0] / v[1]; });
}

// A spec function reading its arguments by name (binmeta::fresh_meta and its kin take it as is).
using NamedSpecFn = std::function<Spec(const Args&)>;

NamedSpecFn mode_spec(Mode m) {
  return [m](const Args& a) { return divide_spec(a.value("self"), a.value("other"), m); };
}

ImplFn mode_impl(Mode m) {
  return [m](const Args& a, const Values& outputs) {
    divide_into(a.value("self"), a.value("other"), m, outputs.at(0).tensor());
  };
}

// ---- samples ----

std::vector<DType> no_bool() {
  std::vector<DType> ts = all_numeric_dtypes();
  ts.erase(ts.begin());
  return ts;
}

// (Tensor, Tensor) cases. Integer divisors are drawn positive (fill 'positive': 1..9) except in
// the division-by-zero cases; the dividends are signed so trunc/floor and fmod/remainder differ.
std::vector<Sample> tensor_samples(const std::vector<std::pair<std::string, Literal>>& kw,
                                   bool bool_raises) {
  std::vector<Sample> out;
  auto add = [&](std::string label, Literal a, Literal b) {
    out.push_back(make(std::move(label), {std::move(a), std::move(b)}, kw));
  };
  for (DType t : floating_dtypes()) {
    const std::string d = " " + dtype_code_str(t);
    add("same shape" + d, T({7, 13}, t), T({7, 13}, t));
    add("broadcast other" + d, T({4, 5}, t), T({5}, t));
    add("0-d with 0-d" + d, T({}, t), T({}, t));
    add("transposed" + d, T_transposed(9, 12, t), T({9, 12}, t));
    add("special values" + d, T_fill({96}, t, "special"), T_fill({96}, t, "special"));
    add("special dividend" + d, T_fill({96}, t, "special"), T({96}, t));
  }
  add("broadcast both ways f32", T({4, 1, 5}, DType::Float32), T({3, 1}, DType::Float32));
  add("sliced with a step f32", T({6, 5}, DType::Float32, {10, 2}),
      T({6, 5}, DType::Float32, {1, 12}));
  add("expanded (stride 0) f32", T({5, 8}, DType::Float32, {0, 1}), T({5, 8}, DType::Float32));
  add("empty f32", T({0, 3}, DType::Float32), T({3}, DType::Float32));
  add("error: shapes that do not broadcast", T({3}, DType::Float32), T({4}, DType::Float32));
  for (DType t : integral_dtypes(false)) {
    const std::string d = " " + dtype_code_str(t);
    add("positive divisor" + d, T({7, 13}, t), T_fill({7, 13}, t, "positive"));
    add("broadcast, 0-d divisor" + d, T({4, 5}, t), T_fill({}, t, "positive"));
    add("special dividend" + d, T_fill({48}, t, "special"), T_fill({48}, t, "positive"));
    add("error: integer division by zero" + d, T({16}, t), T_fill({16}, t, "special"));
  }
  add("transposed i64", T_transposed(6, 7, DType::Int64), T_fill({6, 7}, DType::Int64, "positive"));
  add("empty i32", T({0}, DType::Int32), T({}, DType::Int32));
  add("u8 with i8 -> i16", T({6, 7}, DType::UInt8), T_fill({6, 7}, DType::Int8, "positive"));
  add("i32 with f16 -> f16", T({6, 7}, DType::Int32), T({6, 7}, DType::Float16));
  add("i64 with 0-d f64 -> f64", T({6, 7}, DType::Int64), T({}, DType::Float64));
  add("f32 with 0-d f64 -> f32", T({6, 7}, DType::Float32), T({}, DType::Float64));
  add("f16 with bf16 -> f32", T({6, 7}, DType::Float16), T({6, 7}, DType::BFloat16));
  add("other a Python int -3, i64", T({6, 7}, DType::Int64), I(-3));
  add("other a Python int -3, u8 (wraps to 253)", T({6, 7}, DType::UInt8), I(-3));
  add("other a Python float, i32 -> f32", T({6, 7}, DType::Int32), F(-2.5));
  add("other a Python int, bool -> i64", T({6, 7}, DType::Bool), I(3));
  add(std::string(bool_raises ? "error: bool with bool" : "bool with bool (true division)"),
      T({6, 7}, DType::Bool), T_fill({6, 7}, DType::Bool, "positive"));
  return out;
}

std::vector<Sample> scalar_samples(const std::vector<std::pair<std::string, Literal>>& kw) {
  std::vector<Sample> out;
  auto add = [&](std::string label, Literal a, Literal b) {
    out.push_back(make(std::move(label), {std::move(a), std::move(b)}, kw));
  };
  const Literal others[] = {I(3), I(-3), F(2.5), F(-0.75)};
  for (DType t : no_bool()) {
    for (const Literal& o : others)
      add(dtype_code_str(t) + ", other " + cases::print_literal(o), T({6, 7}, t), o);
    add("0-d " + dtype_code_str(t), T({}, t), I(4));
    if (is_floating(t)) {
      add("special values " + dtype_code_str(t), T_fill({64}, t, "special"), F(1.5));
      add(dtype_code_str(t) + " by 0", T({6, 7}, t), I(0));
    } else {
      add("error: integer division by zero " + dtype_code_str(t), T({6, 7}, t), I(0));
      add(dtype_code_str(t) + " by 0.0 -> f32", T({6, 7}, t), F(0.0));
    }
  }
  add("transposed f32", T_transposed(6, 7, DType::Float32), F(-1.5));
  add("expanded i64", T({5, 8}, DType::Int64, {0, 1}), I(-4));
  add("empty f32", T({0, 3}, DType::Float32), F(2.0));
  add("special i32", T_fill({48}, DType::Int32, "special"), I(7));
  add("bool with an int -> i64", T({6, 7}, DType::Bool), I(2));
  return out;
}

std::vector<Sample> perf(const std::vector<std::pair<std::string, Literal>>& kw, bool scalar) {
  std::vector<Sample> out;
  for (DType t : arith::perf_dtypes()) {
    const Shape s = {int64_t{1} << 22};
    out.push_back(
        make("bandwidth [4194304] " + dtype_code_str(t), {T(s, t), scalar ? F(0.7) : T(s, t)}, kw));
  }
  return out;
}

std::vector<Sample> div_tensor_mode_samples(const SampleContext& ctx) {
  const std::pair<std::string, Literal> trunc{"rounding_mode", S("trunc")};
  const std::pair<std::string, Literal> floor{"rounding_mode", S("floor")};
  if (ctx.performance) return perf({floor}, false);
  std::vector<Sample> out;
  for (const auto& kw : {trunc, floor})
    for (Sample& s : tensor_samples({kw}, true)) {
      s.label = s.label.starts_with("error: ")
                    ? "error: " + kw.second.text + ", " + s.label.substr(7)
                    : kw.second.text + ": " + s.label;
      out.push_back(std::move(s));
    }
  out.push_back(make("rounding_mode None: i64 true division",
                     {T({6, 7}, DType::Int64), T({6, 7}, DType::Int64)},
                     {{"rounding_mode", None()}}));
  out.push_back(make("rounding_mode None: bool", {T({6, 7}, DType::Bool), T({6, 7}, DType::Bool)},
                     {{"rounding_mode", None()}}));
  out.push_back(make("error: rounding_mode 'round'",
                     {T({6, 7}, DType::Float32), T({6, 7}, DType::Float32)},
                     {{"rounding_mode", S("round")}}));
  return out;
}

std::vector<Sample> div_scalar_mode_samples(const SampleContext& ctx) {
  const std::pair<std::string, Literal> trunc{"rounding_mode", S("trunc")};
  const std::pair<std::string, Literal> floor{"rounding_mode", S("floor")};
  if (ctx.performance) return perf({trunc}, true);
  std::vector<Sample> out;
  for (const auto& kw : {trunc, floor})
    for (Sample& s : scalar_samples({kw})) {
      s.label = s.label.starts_with("error: ")
                    ? "error: " + kw.second.text + ", " + s.label.substr(7)
                    : kw.second.text + ": " + s.label;
      out.push_back(std::move(s));
    }
  out.push_back(make("rounding_mode None: i32 / 2", {T({6, 7}, DType::Int32), I(2)},
                     {{"rounding_mode", None()}}));
  out.push_back(make("error: rounding_mode 'ceil'", {T({6, 7}, DType::Float32), I(2)},
                     {{"rounding_mode", S("ceil")}}));
  out.push_back(make("error: bool with a bool", {T({6, 7}, DType::Bool), B(true)}, {trunc}));
  return out;
}

SampleFn tensor_fn() {
  return [](const SampleContext& ctx) {
    if (ctx.performance) return perf({}, false);
    return tensor_samples({}, true);
  };
}

SampleFn scalar_fn() {
  return [](const SampleContext& ctx) {
    if (ctx.performance) return perf({}, true);
    std::vector<Sample> out = scalar_samples({});
    out.push_back(make("error: bool with a bool", {T({6, 7}, DType::Bool), B(true)}));
    return out;
  };
}

// Integer division by zero raises in the computation (a value check).
OpDef division_op(std::string_view schema, NamedSpecFn spec, ImplFn impl, SampleFn samples,
                  double flops) {
  OpDef op = OpDef::from_schema(schema, "pointwise.binary");
  op.dtypes = no_bool();
  op.meta = binmeta::fresh_meta(std::move(spec));
  op.value_checks = true;
  op.ref = structured_ref(op.meta, std::move(impl));
  op.samples = std::move(samples);
  op.cost = arith::elementwise_cost(flops);
  return op;
}

}  // namespace

void register_arithmetic_division_ops(OpRegistry& r) {
  OpDef div_t = division_op(
      "aten::div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor",
      div_mode_spec, div_mode_impl, div_tensor_mode_samples, 2);
  div_t.dtypes = all_numeric_dtypes();  // bool only with rounding_mode None
  r.add(std::move(div_t));
  OpDef div_s = division_op(
      "aten::div.Scalar_mode(Tensor self, Scalar other, *, str? rounding_mode) -> Tensor",
      div_mode_spec, div_mode_impl, div_scalar_mode_samples, 2);
  div_s.dtypes = all_numeric_dtypes();
  r.add(std::move(div_s));
  r.add(division_op("aten::floor_divide(Tensor self, Tensor other) -> Tensor",
                    mode_spec(Mode::Floor), mode_impl(Mode::Floor), tensor_fn(), 4));
  r.add(division_op("aten::fmod.Tensor(Tensor self, Tensor other) -> Tensor", mode_spec(Mode::Fmod),
                    mode_impl(Mode::Fmod), tensor_fn(), 2));
  r.add(division_op("aten::fmod.Scalar(Tensor self, Scalar other) -> Tensor", mode_spec(Mode::Fmod),
                    mode_impl(Mode::Fmod), scalar_fn(), 2));
  r.add(division_op("aten::remainder.Tensor(Tensor self, Tensor other) -> Tensor",
                    mode_spec(Mode::Remainder), mode_impl(Mode::Remainder), tensor_fn(), 3));
  r.add(division_op("aten::remainder.Scalar(Tensor self, Scalar other) -> Tensor",
                    mode_spec(Mode::Remainder), mode_impl(Mode::Remainder), scalar_fn(), 3));
}

}  // namespace crucible
