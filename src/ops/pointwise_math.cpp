// Pointwise math ops: abs, the trigonometric, hyperbolic, exponential and logarithmic functions,
// ceil/floor/round/trunc, sign/sgn, isinf/isnan, logical_not, bitwise_not (out of place here;
// the in-place and out= overloads are in pointwise_math_variants.cpp). References compute in
// double (exactly in int64 for integer results) and round once to the result dtype.
//
// ATen's dtype rules (PyTorch 2.x CPU, checked against torch where 1.13 agrees):
//  - "float ops" (sin, log, sqrt, reciprocal, ...) cast integral and bool inputs to f32 first
//    (so sin of i32 2147483647 is sin(2^31)), floating inputs keep their dtype. PyTorch 1.13
//    lacks f16 kernels on the CPU for most of them; 2.x has them, and we follow 2.x.
//  - abs, ceil, floor, round, trunc keep integral dtypes (the rounding ones copy integers) and
//    raise for bool; abs(INT_MIN) wraps to INT_MIN.
//  - sign and sgn keep every dtype (bool included; NaN gives 0); sgn of a real tensor is sign.
//  - isinf and isnan give bool for every dtype; logical_not gives bool (NaN is true, so false).
//  - bitwise_not is logical not on bool, ~x on integers, and raises on floating dtypes.
//  - round is half to even; round.decimals computes nearbyint(x * 10^d) / 10^d in the kernel's
//    opmath type (float for f16/bf16/f32, double for f64) and raises for integral dtypes.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <string>

#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/ops/destination.h"
#include "ops/families.h"
#include "ops/meta_fn.h"
#include "ops/pointwise_math_internal.h"
#include "ops/util.h"

namespace crucible {

namespace mathops {

namespace {

double f_acos(double x) { return std::acos(x); }
double f_acosh(double x) { return std::acosh(x); }
double f_asin(double x) { return std::asin(x); }
double f_asinh(double x) { return std::asinh(x); }
double f_atan(double x) { return std::atan(x); }
double f_atanh(double x) { return std::atanh(x); }
double f_cos(double x) { return std::cos(x); }
double f_cosh(double x) { return std::cosh(x); }
double f_erf(double x) { return std::erf(x); }
double f_exp(double x) { return std::exp(x); }
double f_expm1(double x) { return std::expm1(x); }
double f_log(double x) { return std::log(x); }
double f_log10(double x) { return std::log10(x); }
double f_log1p(double x) { return std::log1p(x); }
double f_log2(double x) { return std::log2(x); }
double f_reciprocal(double x) { return 1.0 / x; }
double f_rsqrt(double x) { return 1.0 / std::sqrt(x); }
double f_sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double f_sin(double x) { return std::sin(x); }
double f_sinh(double x) { return std::sinh(x); }
double f_sqrt(double x) { return std::sqrt(x); }
double f_tan(double x) { return std::tan(x); }
double f_tanh(double x) { return std::tanh(x); }
double f_abs(double x) { return std::fabs(x); }
double f_neg(double x) { return -x; }
double f_ceil(double x) { return std::ceil(x); }
double f_floor(double x) { return std::floor(x); }
double f_round(double x) { return std::nearbyint(x); }  // half to even (default rounding mode)
double f_trunc(double x) { return std::trunc(x); }
// ATen's sign: (0 < x) - (x < 0); NaN and -0.0 give 0.
double f_sign(double x) { return static_cast<double>(static_cast<int>(0 < x) - (x < 0)); }
double f_isinf(double x) { return std::isinf(x) ? 1.0 : 0.0; }
double f_isnan(double x) { return std::isnan(x) ? 1.0 : 0.0; }
double f_logical_not(double x) { return x == 0 ? 1.0 : 0.0; }

const MathFn kTable[] = {
    {"abs", MathKind::Abs, f_abs, 1},
    {"acos", MathKind::Float, f_acos, 1},
    {"acosh", MathKind::Float, f_acosh, 1},
    {"asin", MathKind::Float, f_asin, 1},
    {"asinh", MathKind::Float, f_asinh, 1},
    {"atan", MathKind::Float, f_atan, 1},
    {"atanh", MathKind::Float, f_atanh, 1},
    {"ceil", MathKind::Rounding, f_ceil, 1},
    {"cos", MathKind::Float, f_cos, 1},
    {"cosh", MathKind::Float, f_cosh, 1},
    {"erf", MathKind::Float, f_erf, 1},
    {"exp", MathKind::Float, f_exp, 1},
    {"expm1", MathKind::Float, f_expm1, 1},
    {"floor", MathKind::Rounding, f_floor, 1},
    {"log", MathKind::Float, f_log, 1},
    {"log10", MathKind::Float, f_log10, 1},
    {"log1p", MathKind::Float, f_log1p, 1},
    {"log2", MathKind::Float, f_log2, 1},
    {"neg", MathKind::Neg, f_neg, 1},
    {"reciprocal", MathKind::Float, f_reciprocal, 1},
    {"round", MathKind::Rounding, f_round, 1},
    {"rsqrt", MathKind::Float, f_rsqrt, 2},
    {"sigmoid", MathKind::Float, f_sigmoid, 4},
    {"sign", MathKind::Sign, f_sign, 1},
    {"sgn", MathKind::Sign, f_sign, 1},
    {"sin", MathKind::Float, f_sin, 1},
    {"sinh", MathKind::Float, f_sinh, 1},
    {"sqrt", MathKind::Float, f_sqrt, 1},
    {"tan", MathKind::Float, f_tan, 1},
    {"tanh", MathKind::Float, f_tanh, 1},
    {"trunc", MathKind::Rounding, f_trunc, 1},
    {"isinf", MathKind::Predicate, f_isinf, 1},
    {"isnan", MathKind::Predicate, f_isnan, 1},
    {"logical_not", MathKind::LogicalNot, f_logical_not, 1},
    {"bitwise_not", MathKind::BitwiseNot, nullptr, 1},
};

bool supports(const MathFn& fn, DType t) {
  switch (fn.kind) {
    case MathKind::Abs:
    case MathKind::Neg:
    case MathKind::Rounding:
      return t != DType::Bool;
    case MathKind::BitwiseNot:
      return !is_floating(t);
    default:
      return true;
  }
}

int64_t wrap_negate(int64_t v) { return static_cast<int64_t>(0 - static_cast<uint64_t>(v)); }

}  // namespace

const MathFn& math_fn(std::string_view name) {
  for (const MathFn& fn : kTable)
    if (fn.name == name) return fn;
  internal_error("pointwise.math: no function '" + std::string(name) + "'");
}

std::vector<DType> math_dtypes(const MathFn& fn) {
  std::vector<DType> out;
  for (DType t : samples::all_numeric_dtypes())
    if (supports(fn, t)) out.push_back(t);
  return out;
}

std::vector<DType> math_error_dtypes(const MathFn& fn) {
  std::vector<DType> out;
  for (DType t : samples::all_numeric_dtypes())
    if (!supports(fn, t)) out.push_back(t);
  return out;
}

DType math_result_dtype(const MathFn& fn, DType in) {
  if (fn.kind == MathKind::Neg && in == DType::Bool)
    op_error(
        "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
        "invert a mask, use the `~` or `logical_not()` operator instead.");
  if (!supports(fn, in)) not_implemented_for(std::string(fn.name) + "_cpu", in);
  switch (fn.kind) {
    case MathKind::Float:
      return opsutil::to_float_dtype(in);
    case MathKind::Predicate:
    case MathKind::LogicalNot:
      return DType::Bool;
    default:
      return in;
  }
}

Tensor math_compute(const MathFn& fn, const Tensor& x) {
  Tensor out = Tensor::empty(x.shape(), math_result_dtype(fn, x.dtype()));
  math_compute_into(fn, x, out);
  return out;
}

void math_compute_into(const MathFn& fn, const Tensor& x, const Tensor& out) {
  const DType rt = out.dtype();
  const bool int_in = !is_floating(x.dtype());
  switch (fn.kind) {
    case MathKind::Float:
      // Integral inputs are cast to the result dtype (f32) before computing, as ATen does.
      opsutil::map_unary(as_dtype(x, rt), out, fn.f);
      break;
    case MathKind::Abs:
      if (int_in)
        opsutil::map_unary_int(x, out, [](int64_t v) { return v < 0 ? wrap_negate(v) : v; });
      else
        opsutil::map_unary(x, out, fn.f);
      break;
    case MathKind::Neg:
      if (int_in)
        opsutil::map_unary_int(x, out, wrap_negate);
      else
        opsutil::map_unary(x, out, fn.f);
      break;
    case MathKind::Rounding:
      if (int_in)
        opsutil::map_unary_int(x, out, [](int64_t v) { return v; });
      else
        opsutil::map_unary(x, out, fn.f);
      break;
    case MathKind::Sign:
      if (int_in)
        opsutil::map_unary_int(x, out, [](int64_t v) { return int64_t{0 < v} - int64_t{v < 0}; });
      else
        opsutil::map_unary(x, out, fn.f);
      break;
    case MathKind::Predicate:
      if (int_in)
        out.fill(0);
      else
        opsutil::map_unary(x, out, fn.f);
      break;
    case MathKind::LogicalNot:
      if (int_in)
        opsutil::map_unary_int(x, out, [](int64_t v) { return int64_t{v == 0}; });
      else
        opsutil::map_unary(x, out, fn.f);
      break;
    case MathKind::BitwiseNot:
      if (x.dtype() == DType::Bool)
        opsutil::map_unary_int(x, out, [](int64_t v) { return int64_t{v == 0}; });
      else
        opsutil::map_unary_int(x, out, [](int64_t v) { return ~v; });
      break;
  }
}

double real_bytes(const Tensor& t) {
  int64_t n = 1;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.size(d) == 0) return 0;
    if (t.stride(d) != 0) n *= t.size(d);
  }
  return static_cast<double>(n) * static_cast<double>(t.itemsize());
}

bool has_internal_overlap(const Tensor& t) {
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.stride(d) == 0 && t.size(d) > 1) return true;
  return false;
}

void check_no_internal_overlap(const Tensor& t) {
  if (has_internal_overlap(t))
    op_error(
        "unsupported operation: more than one element of the written-to tensor refers to a "
        "single memory location. Please clone() the tensor before performing the operation.");
}

bool literal_overlaps_itself(const cases::TensorLit& t) {
  if (!t.strides) return false;
  for (size_t d = 0; d < t.shape.size() && d < t.strides->size(); ++d)
    if ((*t.strides)[d] == 0 && t.shape[d] > 1) return true;
  return false;
}

double opmath(double v, DType t) {
  if (t == DType::Float64 || std::isnan(v)) return v;
  constexpr double kMax = std::numeric_limits<float>::max();
  if (v > kMax) return std::numeric_limits<double>::infinity();
  if (v < -kMax) return -std::numeric_limits<double>::infinity();
  return v;
}

Tensor as_dtype(const Tensor& x, DType t) { return x.dtype() == t ? x : x.to(t); }

std::vector<DType> perf_dtypes() { return {DType::Float32, DType::Float16, DType::BFloat16}; }

CostFn unary_cost(double flops) {
  return [flops](const Args& args, const Values& outputs) {
    const Tensor& out = outputs.at(0).tensor();
    Cost c;
    c.flops = flops * static_cast<double>(out.numel());
    c.bytes = real_bytes(args.tensor("self")) +
              static_cast<double>(out.numel()) * static_cast<double>(out.itemsize());
    return c;
  };
}

CostFn inplace_cost(double flops) {
  return [flops](const Args& args, const Values&) {
    const Tensor& self = args.tensor("self");
    return Cost{flops * static_cast<double>(self.numel()), 2 * real_bytes(self)};
  };
}

std::vector<Sample> mark_inplace_errors(std::vector<Sample> ss,
                                        const std::function<const char*(DType)>& bad_dtype,
                                        bool overlap_raises) {
  for (Sample& s : ss) {
    if (s.label.starts_with("error:")) continue;
    // The sample's first positional literal is self (samples are written positionally).
    const cases::TensorLit& self = s.call.args.at(0).tensor;
    if (const char* why = bad_dtype(self.dtype)) {
      s.label = std::string("error: ") + why + ", " + s.label;
    } else if (overlap_raises && literal_overlaps_itself(self)) {
      s.label = "error: self expanded (internal overlap), " + s.label;
    }
  }
  return ss;
}

}  // namespace mathops

namespace {

using namespace samples;  // NOLINT(google-build-using-namespace): the sample vocabulary
using mathops::MathFn;
using mathops::MathKind;

// Cases beyond the standard unary set: domain edges (positive and [0, 1) data, where log,
// sqrt, acosh, atanh, asin are defined), large integers (cast to f32 before float ops), and
// the special values of the integer dtypes.
void add_extra_samples(const MathFn& fn, std::vector<Sample>& out) {
  for (DType t : {DType::Float32, DType::Float64, DType::BFloat16, DType::Float16}) {
    out.push_back(make("positive values " + dtype_code_str(t), {T_fill({8, 9}, t, "positive")}));
    out.push_back(make("values in [0, 1) " + dtype_code_str(t), {T_fill({64}, t, "uniform")}));
  }
  if (fn.kind != MathKind::BitwiseNot) {
    out.push_back(make("integer extremes i32", {T_fill({48}, DType::Int32, "special")}));
    out.push_back(make("integer extremes i64", {T_fill({48}, DType::Int64, "special")}));
    out.push_back(make("integer extremes i8", {T_fill({48}, DType::Int8, "special")}));
  }
  if (fn.kind == MathKind::BitwiseNot || fn.kind == MathKind::Abs || fn.kind == MathKind::Sign) {
    out.push_back(make("integer extremes u8", {T_fill({48}, DType::UInt8, "special")}));
    out.push_back(make("integer extremes i16", {T_fill({48}, DType::Int16, "special")}));
  }
}

SampleFn math_samples(const MathFn& fn) {
  return [&fn](const SampleContext& ctx) {
    if (ctx.performance) {
      if (fn.kind == MathKind::BitwiseNot)
        return elementwise_perf_samples(1, {DType::Int32, DType::UInt8, DType::Bool});
      return elementwise_perf_samples(1, mathops::perf_dtypes());
    }
    std::vector<Sample> out = unary_samples(mathops::math_dtypes(fn));
    std::vector<Sample> extra;
    add_extra_samples(fn, extra);
    const std::vector<DType> bad = mathops::math_error_dtypes(fn);
    for (Sample& s : extra)  // the sample's positional literals: self first
      if (std::ranges::find(bad, s.call.args[0].tensor.dtype) == bad.end())
        out.push_back(std::move(s));
    for (DType t : mathops::math_error_dtypes(fn)) {
      out.push_back(make("error: unsupported dtype " + dtype_code_str(t), {T({4, 5}, t)}));
      out.push_back(make("error: unsupported dtype, 0-d " + dtype_code_str(t), {T({}, t)}));
    }
    return out;
  };
}

OpDef math_op(const MathFn& fn) {
  OpDef op = OpDef::from_schema("aten::" + std::string(fn.name) + "(Tensor self) -> Tensor",
                                "pointwise.math");
  op.dtypes = mathops::math_dtypes(fn);
  op.meta = [&fn](const Args& args) {
    const Tensor& x = args.tensor("self");
    return Values{meta::fresh_like(x, mathops::math_result_dtype(fn, x.dtype()))};
  };
  op.ref = structured_ref(op.meta, [&fn](const Args& args, const Values& out) {
    mathops::math_compute_into(fn, args.tensor("self"), out.at(0).tensor());
  });
  op.samples = math_samples(fn);
  op.cost = mathops::unary_cost(fn.flops);
  return op;
}

// round.decimals: nearbyint(x * 10^d) / 10^d (negative d: nearbyint(x / 10^-d) * 10^-d),
// computed in the kernel's opmath type: float for f16/bf16/f32, double for f64. The product is
// rounded to that type before nearbyint, which decides ties (0.35f * 10 is 3.5f, rounded to 4).
template <typename Op>
double round_decimals_in(double x, int64_t decimals) {
  const bool neg = decimals < 0;
  const Op ten_pow =
      static_cast<Op>(std::pow(10.0, static_cast<double>(neg ? -decimals : decimals)));
  const Op a = static_cast<Op>(x);
  return static_cast<double>(neg ? std::nearbyint(a / ten_pow) * ten_pow
                                 : std::nearbyint(a * ten_pow) / ten_pow);
}

// ATen's check of round.decimals: a floating self.
void check_round_decimals(const Args& args) {
  const Tensor& x = args.tensor("self");
  if (!is_floating(x.dtype())) not_implemented_for("round_cpu", x.dtype());
}

void round_decimals_impl(const Args& args, const Values& outputs) {
  const Tensor& x = args.tensor("self");
  const int64_t decimals = args.integer("decimals");
  const Tensor& out = outputs.at(0).tensor();
  if (x.dtype() == DType::Float64)
    opsutil::map_unary(x, out,
                       [decimals](double v) { return round_decimals_in<double>(v, decimals); });
  else
    opsutil::map_unary(x, out,
                       [decimals](double v) { return round_decimals_in<float>(v, decimals); });
}

std::vector<Sample> round_decimals_samples(const SampleContext& ctx) {
  if (ctx.performance) {
    std::vector<Sample> out = elementwise_perf_samples(1, mathops::perf_dtypes());
    for (Sample& s : out) s.call.kwargs.emplace_back("decimals", I(2));
    return out;
  }
  std::vector<Sample> out = unary_samples(floating_dtypes(), {}, {{"decimals", I(1)}});
  for (Sample& s : out) s.label += ", decimals=1";
  for (DType t : floating_dtypes()) {
    for (int64_t d : {0, 2, 3, -1, -2}) {
      out.push_back(make("decimals=" + std::to_string(d) + " " + dtype_code_str(t), {T({7, 13}, t)},
                         {{"decimals", I(d)}}));
    }
    out.push_back(make("decimals=2, transposed " + dtype_code_str(t), {T_transposed(6, 9, t)},
                       {{"decimals", I(2)}}));
    out.push_back(make("decimals=-1, positive values " + dtype_code_str(t),
                       {T_fill({48}, t, "positive")}, {{"decimals", I(-1)}}));
    out.push_back(make("decimals=3, special values " + dtype_code_str(t),
                       {T_fill({48}, t, "special")}, {{"decimals", I(3)}}));
  }
  out.push_back(make("decimals=40 (10^d overflows float) f32", {T({5, 6}, DType::Float32)},
                     {{"decimals", I(40)}}));
  for (DType t : integral_dtypes(true))
    out.push_back(
        make("error: integral input " + dtype_code_str(t), {T({4, 5}, t)}, {{"decimals", I(1)}}));
  out.push_back(
      make("error: integral input, decimals=0", {T({4, 5}, DType::Int64)}, {{"decimals", I(0)}}));
  return out;
}

}  // namespace

void register_pointwise_math_ops(OpRegistry& r) {
  for (std::string_view name :
       {"abs",  "acos",       "acosh", "asin",  "asinh", "atan",        "atanh",      "ceil",
        "cos",  "cosh",       "erf",   "expm1", "floor", "log",         "log10",      "log1p",
        "log2", "reciprocal", "round", "rsqrt", "sign",  "sgn",         "sin",        "sinh",
        "sqrt", "tan",        "trunc", "isinf", "isnan", "logical_not", "bitwise_not"})
    r.add(math_op(mathops::math_fn(name)));

  OpDef rd = OpDef::from_schema("aten::round.decimals(Tensor self, *, int decimals) -> Tensor",
                                "pointwise.math");
  rd.dtypes = floating_dtypes();
  rd.meta = [](const Args& args) {
    check_round_decimals(args);
    return Values{meta::fresh_like(args.tensor("self"))};
  };
  rd.ref = structured_ref(rd.meta, round_decimals_impl);
  rd.samples = round_decimals_samples;
  rd.cost = mathops::unary_cost(3);
  r.add(std::move(rd));

  register_pointwise_math_variant_ops(r);
}

}  // namespace crucible
