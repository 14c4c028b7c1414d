// Op family: where (selection) -- where.self, masked_fill (Scalar/Tensor value, out-of-place and
// in-place), clamp (Scalar and Tensor bounds), clamp_min, clamp_max and clamp_.
//
// ATen's rules, checked against torch:
//  - where: the condition must be bool; a uint8 condition is still accepted in 2.x (deprecated,
//    nonzero is true); the result dtype is result_type(self, other); all three broadcast.
//  - masked_fill: the mask must be bool (PyTorch 2.x removed uint8 masks: "masked_fill_ only
//    supports boolean masks, but got mask with dtype unsigned char"; 1.13 still warned); the
//    result keeps self's dtype; the out-of-place form broadcasts self with the mask, the
//    in-place form needs the mask to broadcast to self. The value converts as Scalar::to<T>():
//    checked (300 into u8, NaN into an integer, 1e6 into f16 raise "value cannot be converted to
//    type uint8_t without overflow"), truncated toward zero into integers (-2.7 -> -2), != 0
//    into bool. A Tensor value must be 0-d.
//  - clamp: at least one bound; the result dtype is result_type(self, min, max) (an i64 tensor
//    clamped to 0.5 is f32); a bool result raises; Scalar bounds convert with the checked
//    conversion; NaN in the input or in a bound gives NaN; min > max gives max. Bounds given as
//    tensors broadcast with self.
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/ops/destination.h"
#include "ops/arithmetic_internal.h"
#include "ops/families.h"
#include "ops/meta_fn.h"
#include "ops/samples.h"
#include "ops/util.h"

namespace crucible {

namespace {

using namespace samples;  // NOLINT(google-build-using-namespace): the sample vocabulary

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

// The shape and dtype of a fresh output.
struct OutSpec {
  Shape shape;
  DType dtype;
};

// where's checks and output.
OutSpec where_spec(const Args& args) {
  const Tensor& cond = args.tensor("condition");
  CRUCIBLE_CHECK(cond.dtype() == DType::Bool || cond.dtype() == DType::UInt8,
                 "where expected condition to be a boolean tensor, but got a tensor with dtype " +
                     scalar_type_name(cond.dtype()));
  const Tensor a = arith::operand(args.value("self")), b = arith::operand(args.value("other"));
  const DType rt = arith::promoted({args.value("self"), args.value("other")});
  arith::require_modelled(rt, "where");
  const Tensor ins[] = {cond, a, b};
  return {arith::broadcast_all(ins), rt};
}

// where into its output (meta: where_spec), of the promoted dtype.
void where_impl(const Args& args, const Values& outputs) {
  const Tensor& out = outputs.at(0).tensor();
  const DType rt = out.dtype();
  const Tensor ins[] = {args.tensor("condition"), arith::operand(args.value("self")),
                        arith::operand(args.value("other"))};
  if (is_floating(rt))
    arith::map_float(ins, out, [](const double* v) { return v[0] != 0 ? v[1] : v[2]; });
  else
    arith::map_int(ins, rt, out, [](const int64_t* v) { return v[0] != 0 ? v[1] : v[2]; });
}

// The checks of a fill into a target of dtype `t`; the value's conversion when it is known
// (a Scalar argument; a Tensor value's is a value check).
void check_fill(DType t, const Tensor& mask, const Scalar* value) {
  CRUCIBLE_CHECK(mask.dtype() == DType::Bool,
                 "masked_fill_ only supports boolean masks, but got mask with dtype " +
                     meta_name(mask.dtype()));
  arith::require_modelled(t, "masked_fill");
  if (value) arith::check_scalar_fits(*value, t);
}

// Writes `value` into target[i] wherever mask[i] (mask broadcast to target's shape).
void fill_masked(const Tensor& target, const Tensor& mask, const Scalar& value) {
  const DType t = target.dtype();
  check_fill(t, mask, &value);
  const Tensor ins[] = {target, mask};
  if (is_floating(t)) {
    const double v = arith::scalar_as_double(value, t);
    arith::map_float(ins, target, [v](const double* x) { return x[1] != 0 ? v : x[0]; });
  } else {
    const int64_t v = arith::scalar_as_int(value, t);
    arith::map_int(ins, t, target, [v](const int64_t* x) { return x[1] != 0 ? v : x[0]; });
  }
}

// The fill value when the arguments give it (a Scalar), else none; checks a Tensor value's rank.
std::optional<Scalar> known_fill_value(const Value& v) {
  if (!v.is_tensor()) return v.to_scalar();
  const Tensor& t = v.tensor();
  CRUCIBLE_CHECK(t.dim() == 0,
                 "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with " +
                     std::to_string(t.dim()) + " dimension(s).");
  return std::nullopt;
}

Scalar fill_value(const Value& v) {
  if (std::optional<Scalar> s = known_fill_value(v)) return *s;
  return arith::item_of(v.tensor());
}

Values masked_fill_meta(const Args& args) {
  const Tensor& self = args.tensor("self");
  const Tensor& mask = args.tensor("mask");
  const std::optional<Scalar> value = known_fill_value(args.value("value"));
  const Shape shape = broadcast_shapes(self.shape(), mask.shape());
  check_fill(self.dtype(), mask, value ? &*value : nullptr);
  return {meta::fresh(shape, self.dtype())};
}

// masked_fill into its output (self broadcast with the mask); a Tensor value's conversion is
// checked here (a value check).
void masked_fill_impl(const Args& args, const Values& outputs) {
  const Scalar value = fill_value(args.value("value"));
  const Tensor& out = outputs.at(0).tensor();
  out.copy_from(args.tensor("self"));
  fill_masked(out, args.tensor("mask"), value);
}

// The in-place fill's checks on self: the mask broadcasts to it, and it is not expanded.
void check_fill_self(const Tensor& self, const Tensor& mask) {
  const Shape shape = broadcast_shapes(self.shape(), mask.shape());
  CRUCIBLE_CHECK(shape == self.shape(), "output with shape " + shape_str(self.shape()) +
                                            " doesn't match the broadcast shape " +
                                            shape_str(shape));
  for (int64_t d = 0; d < self.dim(); ++d)
    if (self.stride(d) == 0 && self.size(d) > 1)
      unsupported("masked_fill_ on an expanded self (ATen only warns) is not modelled");
}

Values masked_fill_inplace_meta(const Args& args) {
  const Tensor& self = args.tensor("self");
  const Tensor& mask = args.tensor("mask");
  const std::optional<Scalar> value = known_fill_value(args.value("value"));
  check_fill_self(self, mask);
  check_fill(self.dtype(), mask, value ? &*value : nullptr);
  return {args.value("self")};
}

void masked_fill_inplace_impl(const Args& args, const Values& outputs) {
  const Scalar value = fill_value(args.value("value"));
  const Tensor& self = outputs.at(0).tensor();
  // Filled in a copy first: the mask may alias self.
  Tensor tmp = self.clone();
  fill_masked(tmp, args.tensor("mask"), value);
  self.copy_from(tmp);
}

double clamp_float(double x, double lo, double hi, bool has_lo, bool has_hi) {
  if (std::isnan(x) || (has_lo && std::isnan(lo)) || (has_hi && std::isnan(hi)))
    return std::nan("");
  if (has_lo && x < lo) x = lo;
  if (has_hi && x > hi) x = hi;
  return x;
}

int64_t clamp_int(int64_t x, int64_t lo, int64_t hi, bool has_lo, bool has_hi) {
  if (has_lo && x < lo) x = lo;
  if (has_hi && x > hi) x = hi;
  return x;
}

constexpr const char* kNoBound = "torch.clamp: At least one of 'min' or 'max' must not be None";

// The checks of clamp with Scalar bounds; returns the result dtype.
DType clamp_scalar_dtype(const Tensor& self, const Value& lo, const Value& hi) {
  CRUCIBLE_CHECK(!lo.is_none() || !hi.is_none(), kNoBound);
  const DType rt = arith::promoted({Value(self), lo, hi});
  arith::require_modelled(rt, "clamp");
  if (rt == DType::Bool)
    not_implemented_for(lo.is_none()   ? "clamp_max_cpu"
                        : hi.is_none() ? "clamp_min_cpu"
                                       : "clamp_scalar_cpu",
                        rt);
  const bool has_lo = !lo.is_none(), has_hi = !hi.is_none();
  if (has_lo) arith::check_scalar_fits(lo.to_scalar(), rt);
  if (has_hi) arith::check_scalar_fits(hi.to_scalar(), rt);
  return rt;
}

// clamp with Scalar bounds into `out`, of the dtype clamp_scalar_dtype gave (clamp.default,
// clamp_min, clamp_max, clamp_; their meta functions checked the call).
void clamp_scalar_into(const Tensor& self, const Value& lo, const Value& hi, const Tensor& out) {
  const DType rt = out.dtype();
  const bool has_lo = !lo.is_none(), has_hi = !hi.is_none();
  const Tensor ins[] = {self};
  if (is_floating(rt)) {
    const double l = has_lo ? arith::scalar_as_double(lo.to_scalar(), rt) : 0;
    const double h = has_hi ? arith::scalar_as_double(hi.to_scalar(), rt) : 0;
    arith::map_float(ins, out,
                     [=](const double* x) { return clamp_float(x[0], l, h, has_lo, has_hi); });
  } else {
    const int64_t l = has_lo ? arith::scalar_as_int(lo.to_scalar(), rt) : 0;
    const int64_t h = has_hi ? arith::scalar_as_int(hi.to_scalar(), rt) : 0;
    arith::map_int(ins, rt, out,
                   [=](const int64_t* x) { return clamp_int(x[0], l, h, has_lo, has_hi); });
  }
}

void clamp_impl(const Args& args, const Values& outputs) {
  clamp_scalar_into(args.tensor("self"), args.value("min"), args.value("max"),
                    outputs.at(0).tensor());
}

Values clamp_meta(const Args& args) {
  const Tensor& self = args.tensor("self");
  return {
      meta::fresh(self.shape(), clamp_scalar_dtype(self, args.value("min"), args.value("max")))};
}

// The inputs of clamp with Tensor bounds: self, then the bounds given.
std::vector<Tensor> clamp_tensor_inputs(const Args& args) {
  std::vector<Tensor> ins = {args.tensor("self")};
  for (const char* bound : {"min", "max"})
    if (args.given(bound)) ins.push_back(args.tensor(bound));
  return ins;
}

// The checks and output of clamp with Tensor bounds.
OutSpec clamp_tensor_spec(const Args& args) {
  const Tensor& self = args.tensor("self");
  const Value lo = args.value("min"), hi = args.value("max");
  const bool has_lo = !lo.is_none(), has_hi = !hi.is_none();
  CRUCIBLE_CHECK(has_lo || has_hi, kNoBound);
  const DType rt = arith::promoted({Value(self), lo, hi});
  arith::require_modelled(rt, "clamp");
  // With both bounds ATen runs clamp_cpu (no bool); with one it is maximum/minimum.
  if (has_lo && has_hi && rt == DType::Bool) not_implemented_for("clamp_cpu", DType::Bool);
  return {arith::broadcast_all(clamp_tensor_inputs(args)), rt};
}

void clamp_tensor_impl(const Args& args, const Values& outputs) {
  const Tensor& out = outputs.at(0).tensor();
  const DType rt = out.dtype();
  const bool has_lo = !args.value("min").is_none(), has_hi = !args.value("max").is_none();
  const std::vector<Tensor> ins = clamp_tensor_inputs(args);
  const size_t hi_at = has_lo ? 2 : 1;
  if (is_floating(rt)) {
    arith::map_float(
        ins, out,
        [=](const double* x) {
          return clamp_float(x[0], has_lo ? x[1] : 0, has_hi ? x[hi_at] : 0, has_lo, has_hi);
        },
        rt);
  } else {
    arith::map_int(ins, rt, out, [=](const int64_t* x) {
      return clamp_int(x[0], has_lo ? x[1] : 0, has_hi ? x[hi_at] : 0, has_lo, has_hi);
    });
  }
}

// ---- samples ----

std::vector<Sample> where_samples(const SampleContext& ctx) {
  const DType b8 = DType::Bool;
  std::vector<Sample> out;
  if (ctx.performance) {
    const Shape s = {int64_t{1} << 22};
    for (DType t : arith::perf_dtypes())
      out.push_back(make("bandwidth " + dtype_code_str(t), {T(s, b8), T(s, t), T(s, t)}));
    out.push_back(
        make("bandwidth, broadcast row f32",
             {T({4096, 1}, b8), T({4096, 4096}, DType::Float32), T({4096}, DType::Float32)}));
    return out;
  }
  for (DType t : all_numeric_dtypes()) {
    out.push_back(
        make("same shape " + dtype_code_str(t), {T({6, 7}, b8), T({6, 7}, t), T({6, 7}, t)}));
    out.push_back(
        make("broadcast condition " + dtype_code_str(t), {T({7}, b8), T({6, 7}, t), T({6, 7}, t)}));
    out.push_back(make("0-d " + dtype_code_str(t), {T({}, b8), T({}, t), T({}, t)}));
  }
  const DType f = DType::Float32;
  out.push_back(make("broadcast all three", {T({4, 1, 1}, b8), T({3, 1}, f), T({5}, f)}));
  out.push_back(make("i32 with f16 -> f16",
                     {T({6, 7}, b8), T({6, 7}, DType::Int32), T({6, 7}, DType::Float16)}));
  out.push_back(make("f16 with 0-d f64 -> f16",
                     {T({6, 7}, b8), T({6, 7}, DType::Float16), T({}, DType::Float64)}));
  out.push_back(
      make("u8 with i8 -> i16", {T({6, 7}, b8), T({6, 7}, DType::UInt8), T({6, 7}, DType::Int8)}));
  out.push_back(
      make("other a Python float, i32 -> f32", {T({6, 7}, b8), T({6, 7}, DType::Int32), F(2.5)}));
  out.push_back(make("other a Python int, i64", {T({6, 7}, b8), T({6, 7}, DType::Int64), I(0)}));
  out.push_back(make("special values",
                     {T({64}, b8), T_fill({64}, f, "special"), T_fill({64}, f, "special")}));
  out.push_back(make("transposed", {T_transposed(6, 7, b8), T_transposed(6, 7, f), T({6, 7}, f)}));
  out.push_back(make("expanded", {T({5, 8}, b8, {0, 1}), T({5, 8}, f), T({5, 8}, f, {1, 0})}));
  out.push_back(make("empty", {T({0, 3}, b8), T({3}, f), T({0, 3}, f)}));
  out.push_back(make("uint8 condition (deprecated, accepted)",
                     {T({6, 7}, DType::UInt8), T({6, 7}, f), T({6, 7}, f)}));
  out.push_back(
      make("error: i64 condition", {T({6, 7}, DType::Int64), T({6, 7}, f), T({6, 7}, f)}));
  out.push_back(make("error: f32 condition", {T({6, 7}, f), T({6, 7}, f), T({6, 7}, f)}));
  out.push_back(make("error: shapes that do not broadcast", {T({3}, b8), T({4}, f), T({4}, f)}));
  return out;
}

std::vector<Sample> masked_fill_samples(const SampleContext& ctx, bool tensor_value, bool inplace) {
  const DType b8 = DType::Bool;
  std::vector<Sample> out;
  auto val = [&](const Literal& scalar, DType t) { return tensor_value ? T({}, t) : scalar; };
  if (ctx.performance) {
    const Shape s = {int64_t{1} << 22};
    for (DType t : arith::perf_dtypes())
      out.push_back(make("bandwidth " + dtype_code_str(t),
                         {T(s, t), T(s, b8), val(F(-1e4), DType::Float64)}));
    return out;
  }
  for (DType t : all_numeric_dtypes()) {
    out.push_back(make("value 7, " + dtype_code_str(t),
                       {T({6, 7}, t), T({6, 7}, b8), val(I(7), DType::Int64)}));
    out.push_back(make("0-d " + dtype_code_str(t), {T({}, t), T({}, b8), val(I(-1), DType::Int8)}));
    if (is_floating(t)) {
      out.push_back(make("value -2.5, " + dtype_code_str(t),
                         {T({6, 7}, t), T({6, 7}, b8), val(F(-2.5), DType::Float64)}));
      out.push_back(make("special values " + dtype_code_str(t),
                         {T_fill({64}, t, "special"), T({64}, b8),
                          val(F(std::numeric_limits<double>::infinity()), t)}));
    } else if (t != DType::UInt8 && !tensor_value) {
      out.push_back(make("value -2.7 truncates, " + dtype_code_str(t),
                         {T({6, 7}, t), T({6, 7}, b8), F(-2.7)}));
    }
  }
  const DType f = DType::Float32;
  out.push_back(make("mask broadcast", {T({6, 7}, f), T({7}, b8), val(F(0.5), f)}));
  out.push_back(
      make(std::string(inplace ? "error: self would broadcast" : "self broadcast to the mask"),
           {T({7}, f), T({6, 7}, b8), val(F(0.5), f)}));
  out.push_back(make("transposed self", {T_transposed(6, 7, f), T({6, 7}, b8), val(I(1), f)}));
  out.push_back(make("transposed mask", {T({6, 7}, f), T_transposed(6, 7, b8), val(I(1), f)}));
  out.push_back(make("empty", {T({0, 3}, f), T({3}, b8), val(I(1), f)}));
  out.push_back(make("error: uint8 mask", {T({6, 7}, f), T({6, 7}, DType::UInt8), val(I(1), f)}));
  out.push_back(make("error: i64 mask", {T({6, 7}, f), T({6, 7}, DType::Int64), val(I(1), f)}));
  if (tensor_value) {
    out.push_back(make("bool value into f32", {T({6, 7}, f), T({6, 7}, b8), T({}, b8)}));
    out.push_back(make("f64 value into bf16",
                       {T({6, 7}, DType::BFloat16), T({6, 7}, b8), T({}, DType::Float64)}));
    out.push_back(make("error: 1-d value", {T({6, 7}, f), T({6, 7}, b8), T({1}, f)}));
    out.push_back(
        make("error: i64 value 0-d 'special' (INT64_MIN) into i8",
             {T({6, 7}, DType::Int8), T({6, 7}, b8), T_fill({}, DType::Int64, "special")}));
  } else {
    out.push_back(
        make("value -1 into u8 (wraps to 255)", {T({6, 7}, DType::UInt8), T({6, 7}, b8), I(-1)}));
    out.push_back(make("nan into f32",
                       {T({6, 7}, f), T({6, 7}, b8), F(std::numeric_limits<double>::quiet_NaN())}));
    out.push_back(make("True into i32", {T({6, 7}, DType::Int32), T({6, 7}, b8), B(true)}));
    out.push_back(make("0.5 into bool", {T({6, 7}, b8), T({6, 7}, b8), F(0.5)}));
    out.push_back(make("error: 300 into u8", {T({6, 7}, DType::UInt8), T({6, 7}, b8), I(300)}));
    out.push_back(make("error: -2.5 into u8", {T({6, 7}, DType::UInt8), T({6, 7}, b8), F(-2.5)}));
    out.push_back(make("error: 128 into i8", {T({6, 7}, DType::Int8), T({6, 7}, b8), I(128)}));
    out.push_back(make("error: 1e6 into f16", {T({6, 7}, DType::Float16), T({6, 7}, b8), F(1e6)}));
    out.push_back(make("error: nan into i64", {T({6, 7}, DType::Int64), T({6, 7}, b8),
                                               F(std::numeric_limits<double>::quiet_NaN())}));
  }
  return out;
}

std::vector<Sample> clamp_perf() {
  std::vector<Sample> out;
  for (DType t : arith::perf_dtypes())
    out.push_back(
        make("bandwidth " + dtype_code_str(t), {T({int64_t{1} << 22}, t), F(-0.5), F(0.5)}));
  return out;
}

std::vector<Sample> clamp_samples(const SampleContext& ctx, bool inplace) {
  if (ctx.performance) return clamp_perf();
  std::vector<Sample> out;
  for (DType t : all_numeric_dtypes()) {
    const bool b = t == DType::Bool;
    // In place, a promoted result that self cannot hold raises.
    const std::string int_err = inplace && b ? "error: result not castable, " : "";
    const std::string float_err = inplace && !is_floating(t) ? "error: result not castable, " : "";
    out.push_back(make(int_err + dtype_code_str(t) + " in [-1, 1]", {T({6, 7}, t), I(-1), I(1)}));
    out.push_back(
        make(float_err + dtype_code_str(t) + " in [-0.5, 0.5]", {T({6, 7}, t), F(-0.5), F(0.5)}));
    out.push_back(make(int_err + dtype_code_str(t) + " min only", {T({6, 7}, t), I(0)}));
    out.push_back(
        make(int_err + dtype_code_str(t) + " max only (keyword)", {T({6, 7}, t)}, {{"max", I(0)}}));
    out.push_back(
        make(int_err + dtype_code_str(t) + " min > max gives max", {T({6, 7}, t), I(1), I(-1)}));
    out.push_back(make(int_err + "0-d " + dtype_code_str(t), {T({}, t), I(-2), I(2)}));
    if (is_floating(t))
      out.push_back(make("special values " + dtype_code_str(t),
                         {T_fill({64}, t, "special"), F(-1.0), F(1.0)}));
  }
  const DType f = DType::Float32;
  out.push_back(
      make("nan min", {T({6, 7}, f), F(std::numeric_limits<double>::quiet_NaN()), F(1.0)}));
  out.push_back(
      make("nan max", {T({6, 7}, f), None(), F(std::numeric_limits<double>::quiet_NaN())}));
  out.push_back(make("infinite bounds",
                     {T_fill({64}, f, "special"), F(-std::numeric_limits<double>::infinity()),
                      F(std::numeric_limits<double>::infinity())}));
  out.push_back(make("min keyword, max None", {T({6, 7}, f)}, {{"min", F(0.0)}, {"max", None()}}));
  out.push_back(make("transposed", {T_transposed(6, 7, f), F(-0.5), F(0.5)}));
  if (!inplace) out.push_back(make("expanded", {T({5, 8}, f, {0, 1}), F(-0.5), F(0.5)}));
  out.push_back(make("empty", {T({0, 3}, f), F(-0.5), F(0.5)}));
  out.push_back(make("u8 with min -1 (wraps to 255)", {T({6, 7}, DType::UInt8), I(-1)}));
  out.push_back(make("error: both None", {T({6, 7}, f)}));
  out.push_back(make("error: both None given", {T({6, 7}, f), None(), None()}));
  out.push_back(make("error: bool bounds on bool", {T({6, 7}, DType::Bool), B(false), B(true)}));
  out.push_back(
      make("error: 2^40 bound for i32", {T({6, 7}, DType::Int32), I(0), I(int64_t{1} << 40)}));
  out.push_back(make("error: 300 bound for u8", {T({6, 7}, DType::UInt8), I(0), I(300)}));
  return out;
}

std::vector<Sample> clamp_tensor_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    for (DType t : arith::perf_dtypes()) {
      const Shape s = {int64_t{1} << 22};
      out.push_back(make("bandwidth " + dtype_code_str(t), {T(s, t), T(s, t), T(s, t)}));
    }
    return out;
  }
  for (DType t : all_numeric_dtypes()) {
    const std::string e = t == DType::Bool ? "error: bool with both bounds, " : "";
    out.push_back(
        make(e + "same shape " + dtype_code_str(t), {T({6, 7}, t), T({6, 7}, t), T({6, 7}, t)}));
    out.push_back(make("min only " + dtype_code_str(t), {T({6, 7}, t), T({7}, t)}));
    out.push_back(make("max only " + dtype_code_str(t), {T({6, 7}, t), None(), T({6, 1}, t)}));
  }
  const DType f = DType::Float32;
  out.push_back(make("special values in input and bounds",
                     {T_fill({64}, f, "special"), T_fill({64}, f, "special"), T({64}, f)}));
  out.push_back(make("output larger than self", {T({7}, f), T({6, 7}, f), T({6, 1}, f)}));
  out.push_back(make("0-d bounds", {T({6, 7}, f), T({}, f), T({}, f)}));
  out.push_back(make("i64 with f32 bounds -> f32", {T({6, 7}, DType::Int64), T({7}, f), None()}));
  out.push_back(make("i8 with 0-d i64 bound (cast to i8)",
                     {T({6, 7}, DType::Int8), T_fill({}, DType::Int64, "special"), None()}));
  out.push_back(make("f16 with 0-d f64 bounds -> f16",
                     {T({6, 7}, DType::Float16), T({}, DType::Float64), T({}, DType::Float64)}));
  out.push_back(make("transposed", {T_transposed(6, 7, f), T({6, 7}, f), T_transposed(6, 7, f)}));
  out.push_back(make("empty", {T({0, 3}, f), T({3}, f), T({3}, f)}));
  out.push_back(make("error: both None", {T({6, 7}, f), None(), None()}));
  out.push_back(make("error: shapes that do not broadcast", {T({3}, f), T({4}, f), None()}));
  return out;
}

std::vector<Sample> clamp_one_samples(const SampleContext& ctx, bool is_min) {
  std::vector<Sample> out;
  if (ctx.performance) {
    for (DType t : arith::perf_dtypes())
      out.push_back(make("bandwidth " + dtype_code_str(t), {T({int64_t{1} << 22}, t), F(0.0)}));
    return out;
  }
  for (DType t : all_numeric_dtypes()) {
    const std::string e = t == DType::Bool ? "error: bool result, " : "";
    out.push_back(make(dtype_code_str(t) + " with 0", {T({6, 7}, t), I(0)}));
    out.push_back(make(dtype_code_str(t) + " with 0.25", {T({6, 7}, t), F(0.25)}));
    out.push_back(make(e + dtype_code_str(t) + " with True", {T({6, 7}, t), B(true)}));
    if (is_floating(t))
      out.push_back(
          make("special values " + dtype_code_str(t), {T_fill({64}, t, "special"), F(0.0)}));
  }
  const DType f = DType::Float32;
  out.push_back(make("nan bound", {T({6, 7}, f), F(std::numeric_limits<double>::quiet_NaN())}));
  out.push_back(make("transposed", {T_transposed(6, 7, f), F(0.5)}));
  out.push_back(make("0-d", {T({}, f), F(0.5)}));
  out.push_back(make("empty", {T({0}, f), F(0.5)}));
  out.push_back(make(std::string("u8 with -1 (") + (is_min ? "all 255)" : "no change)"),
                     {T({6, 7}, DType::UInt8), I(-1)}));
  out.push_back(make("error: 2^40 for i16", {T({6, 7}, DType::Int16), I(int64_t{1} << 40)}));
  return out;
}

// The meta of an op whose output is a fresh tensor of the given shape and dtype.
MetaFn spec_meta(OutSpec (*spec_of)(const Args&)) {
  return [spec_of](const Args& args) {
    const OutSpec spec = spec_of(args);
    return Values{meta::fresh(spec.shape, spec.dtype)};
  };
}

// The meta of the in-place form (arith::inplace_of) of an op with meta `meta`.
MetaFn inplace_meta(MetaFn meta) {
  return [meta = std::move(meta)](const Args& a) {
    const Tensor& self = a.tensor("self");
    // inplace_of rejects an internally overlapping self first: check_inplace against self's
    // own shape and dtype checks exactly that.
    arith::check_inplace(self, self.shape(), self.dtype());
    const Tensor result = meta(a).at(0).tensor();
    arith::check_inplace(self, result.shape(), result.dtype());
    return Values{a.value("self")};
  };
}

// A Tensor fill value's conversion to self's dtype is checked on its value.
OpDef with_value_checks(OpDef op) {
  op.value_checks = true;
  return op;
}

OpDef sel_op(std::string_view schema, MetaFn meta, RefFn ref, SampleFn samples, double flops,
             bool inplace = false) {
  OpDef op = OpDef::from_schema(schema, "selection");
  op.dtypes = all_numeric_dtypes();
  op.meta = std::move(meta);
  op.ref = std::move(ref);
  op.samples = std::move(samples);
  op.cost = arith::elementwise_cost(flops, inplace);
  return op;
}

}  // namespace

void register_where_ops(OpRegistry& r) {
  r.add(sel_op("aten::where.self(Tensor condition, Tensor self, Tensor other) -> Tensor",
               spec_meta(where_spec), structured_ref(spec_meta(where_spec), where_impl),
               where_samples, 1));
  r.add(sel_op(
      "aten::masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor",
      masked_fill_meta, structured_ref(masked_fill_meta, masked_fill_impl),
      [](const SampleContext& c) { return masked_fill_samples(c, false, false); }, 1));
  r.add(with_value_checks(sel_op(
      "aten::masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor",
      masked_fill_meta, structured_ref(masked_fill_meta, masked_fill_impl),
      [](const SampleContext& c) { return masked_fill_samples(c, true, false); }, 1)));
  r.add(sel_op(
      "aten::masked_fill_.Scalar(Tensor(a!) self, Tensor mask, Scalar value) -> Tensor(a!)",
      masked_fill_inplace_meta, structured_ref(masked_fill_inplace_meta, masked_fill_inplace_impl),
      [](const SampleContext& c) { return masked_fill_samples(c, false, true); }, 1, true));
  r.add(with_value_checks(sel_op(
      "aten::masked_fill_.Tensor(Tensor(a!) self, Tensor mask, Tensor value) -> Tensor(a!)",
      masked_fill_inplace_meta, structured_ref(masked_fill_inplace_meta, masked_fill_inplace_impl),
      [](const SampleContext& c) { return masked_fill_samples(c, true, true); }, 1, true)));
  r.add(sel_op(
      "aten::clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor", clamp_meta,
      structured_ref(clamp_meta, clamp_impl),
      [](const SampleContext& c) { return clamp_samples(c, false); }, 2));
  r.add(sel_op("aten::clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor",
               spec_meta(clamp_tensor_spec),
               structured_ref(spec_meta(clamp_tensor_spec), clamp_tensor_impl),
               clamp_tensor_samples, 2));
  // clamp_min and clamp_max: clamp with one bound.
  for (const bool lower : {true, false}) {
    const char* bound = lower ? "min" : "max";
    MetaFn meta = [lower, bound](const Args& a) {
      const Value b = a.value(bound);
      return Values{meta::fresh(
          a.tensor("self").shape(),
          clamp_scalar_dtype(a.tensor("self"), lower ? b : Value(), lower ? Value() : b))};
    };
    ImplFn impl = [lower, bound](const Args& a, const Values& outputs) {
      const Value b = a.value(bound);
      clamp_scalar_into(a.tensor("self"), lower ? b : Value(), lower ? Value() : b,
                        outputs.at(0).tensor());
    };
    r.add(sel_op(
        lower ? "aten::clamp_min(Tensor self, Scalar min) -> Tensor"
              : "aten::clamp_max(Tensor self, Scalar max) -> Tensor",
        meta, structured_ref(meta, impl),
        [lower](const SampleContext& c) { return clamp_one_samples(c, lower); }, 1));
  }
  r.add(sel_op(
      "aten::clamp_(Tensor(a!) self, Scalar? min=None, Scalar? max=None) -> Tensor(a!)",
      inplace_meta(clamp_meta), arith::inplace_of(structured_ref(clamp_meta, clamp_impl)),
      [](const SampleContext& c) { return clamp_samples(c, true); }, 2, true));
}

}  // namespace crucible
