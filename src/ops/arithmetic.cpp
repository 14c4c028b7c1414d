// Op family: arithmetic (pointwise.binary) -- the overloads of add/sub/mul/div not covered by
// pointwise_binary.cpp: sub.Scalar, rsub, the in-place mul_/sub_/div_, div.Scalar and the out=
// variants add.out/sub.out/mul.out/div.out. Division with rounding modes, fmod and remainder
// live in arithmetic_division.cpp; pow, atan2, maximum/minimum, lerp, addcmul and addcdiv in
// arithmetic_math.cpp.
//
// References compute in double (floating results) or exactly in int64 with the operands cast to
// the common dtype (integral results), and round once to the result dtype. In-place ops compute
// the out-of-place result first and copy it into self (ATen's canCast rule applies); out= ops
// compute in the common dtype of the inputs and cast into out (so f32 + f32 into an f64 out is
// the f32 sum, as in ATen).
#include <cstdint>
#include <string>

#include "crucible/core/error.h"
#include "crucible/ops/destination.h"
#include "ops/arithmetic_internal.h"
#include "ops/arithmetic_parts.h"
#include "ops/families.h"
#include "ops/pointwise_binary_meta.h"
#include "ops/samples.h"
#include "ops/util.h"

namespace crucible {

namespace {

using namespace samples;  // NOLINT(google-build-using-namespace): the sample vocabulary
using binmeta::Spec;

int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t wrap_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

// ATen's alpha_check against the result dtype.
void alpha_check(DType result, const Scalar& alpha) {
  CRUCIBLE_CHECK(!alpha.is_bool() || result == DType::Bool,
                 "Boolean alpha only supported for Boolean results.");
  CRUCIBLE_CHECK(is_floating(result) || !alpha.is_floating(),
                 "For integral input tensors, argument alpha must not be a floating point number.");
}

constexpr const char* kSubTwoBool =
    "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
    "`logical_xor()` operator instead.";
constexpr const char* kSubBool =
    "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
    "invert a mask, use the `~` or `logical_not()` operator instead.";

Scalar alpha_of(const Args& a) { return a.given("alpha") ? a.scalar("alpha") : Scalar(int64_t{1}); }

// The result of a + alpha * b (and a - alpha * b): the promoted dtype, checked with alpha.
Spec add_spec(const Value& a, const Value& b, const Scalar& alpha) {
  const Tensor ta = arith::operand(a), tb = arith::operand(b);
  const DType rt = arith::promoted({a, b});
  arith::require_modelled(rt, "add/sub");
  alpha_check(rt, alpha);
  return {broadcast_shapes(ta.shape(), tb.shape()), rt};
}

// a + alpha * b (sub: a - alpha * b) into `out`, of add_spec's shape and dtype.
void add_into(const Value& a, const Value& b, const Scalar& alpha, bool negate, const Tensor& out) {
  const DType rt = out.dtype();
  const Tensor ins[] = {arith::operand(a), arith::operand(b)};
  if (is_floating(rt)) {
    const double al = negate ? -alpha.to_double() : alpha.to_double();
    arith::map_float(ins, out, [al](const double* v) { return v[0] + al * v[1]; });
  } else if (rt == DType::Bool) {
    const bool al = alpha.to_double() != 0;
    arith::map_int(ins, rt, out, [al](const int64_t* v) {
      return static_cast<int64_t>(v[0] != 0 || (al && v[1] != 0));
    });
  } else {
    const int64_t al0 = alpha.to_int();
    const int64_t al = negate ? static_cast<int64_t>(0 - static_cast<uint64_t>(al0)) : al0;
    arith::map_int(ins, rt, out,
                   [al](const int64_t* v) { return wrap_add(v[0], wrap_mul(al, v[1])); });
  }
}

// The reference of a functional op of this file: its spec's checks, its output allocated, then
// computed into by `impl`.
RefFn fresh_ref(std::function<Spec(const Args&)> spec, ImplFn impl) {
  return structured_ref(binmeta::fresh_meta(std::move(spec)), std::move(impl));
}

void sub_check(const Value& a, const Value& b) {
  const bool ab = arith::operand_dtype(a) == DType::Bool;
  const bool bb = arith::operand_dtype(b) == DType::Bool;
  CRUCIBLE_CHECK(!(ab && bb), kSubTwoBool);
  CRUCIBLE_CHECK(!ab && !bb, kSubBool);
}

Spec add_spec_of(const Args& a) { return add_spec(a.value("self"), a.value("other"), alpha_of(a)); }

RefFn add_ref() {
  return fresh_ref(add_spec_of, [](const Args& a, const Values& o) {
    add_into(a.value("self"), a.value("other"), alpha_of(a), false, o.at(0).tensor());
  });
}

// sub (also sub.Scalar: ATen wraps `other` into a tensor and runs sub_check on both, so a bool
// self or a bool Scalar raises, libtorch 1.13 and 2.x alike).
Spec sub_spec(const Args& a) {
  sub_check(a.value("self"), a.value("other"));
  return add_spec(a.value("self"), a.value("other"), alpha_of(a));
}

RefFn sub_ref() {
  return fresh_ref(sub_spec, [](const Args& a, const Values& o) {
    add_into(a.value("self"), a.value("other"), alpha_of(a), true, o.at(0).tensor());
  });
}

// rsub(self, other, alpha) = other - alpha * self (Tensor and Scalar overloads alike).
Spec rsub_spec(const Args& a) {
  sub_check(a.value("self"), a.value("other"));
  return add_spec(a.value("other"), a.value("self"), alpha_of(a));
}

RefFn rsub_ref() {
  return fresh_ref(rsub_spec, [](const Args& a, const Values& o) {
    add_into(a.value("other"), a.value("self"), alpha_of(a), true, o.at(0).tensor());
  });
}

Spec mul_spec(const Args& a) {
  const Tensor ta = arith::operand(a.value("self")), tb = arith::operand(a.value("other"));
  const DType rt = arith::promoted({a.value("self"), a.value("other")});
  arith::require_modelled(rt, "mul");
  return {broadcast_shapes(ta.shape(), tb.shape()), rt};
}

RefFn mul_ref() {
  return fresh_ref(mul_spec, [](const Args& a, const Values& o) {
    const Tensor& out = o.at(0).tensor();
    const DType rt = out.dtype();
    const Tensor ins[] = {arith::operand(a.value("self")), arith::operand(a.value("other"))};
    if (is_floating(rt))
      arith::map_float(ins, out, [](const double* v) { return v[0] * v[1]; });
    else if (rt == DType::Bool)
      arith::map_int(ins, rt, out,
                     [](const int64_t* v) { return int64_t{v[0] != 0 && v[1] != 0}; });
    else
      arith::map_int(ins, rt, out, [](const int64_t* v) { return wrap_mul(v[0], v[1]); });
  });
}

// True division: integral and bool results become f32; x/0 is ±inf, 0/0 NaN.
Spec div_spec(const Args& a) {
  const Tensor ta = arith::operand(a.value("self")), tb = arith::operand(a.value("other"));
  const DType rt = opsutil::to_float_dtype(arith::promoted({a.value("self"), a.value("other")}));
  arith::require_modelled(rt, "div");
  return {broadcast_shapes(ta.shape(), tb.shape()), rt};
}

RefFn div_ref() {
  return fresh_ref(div_spec, [](const Args& a, const Values& o) {
    const Tensor ins[] = {arith::operand(a.value("self")), arith::operand(a.value("other"))};
    arith::map_float(ins, o.at(0).tensor(), [](const double* v) { return v[0] / v[1]; });
  });
}

// ---- samples ----

std::vector<Sample> perf_binary(const SampleContext&) {
  return elementwise_perf_samples(2, arith::perf_dtypes());
}

std::vector<Sample> scalar_perf() {
  std::vector<Sample> out;
  for (DType t : arith::perf_dtypes())
    out.push_back(
        make("bandwidth [16777216] " + dtype_code_str(t), {T({int64_t{1} << 24}, t), F(0.5)}));
  return out;
}

// Cases of (Tensor self, Scalar other) over every dtype; `bool_self_raises` labels the bool ones.
std::vector<Sample> tensor_scalar_samples(const std::vector<Literal>& others, bool bool_self_raises,
                                          bool with_alpha) {
  std::vector<Sample> out;
  for (DType t : all_numeric_dtypes()) {
    const std::string err = bool_self_raises && t == DType::Bool ? "error: bool self, " : "";
    for (const Literal& o : others) {
      const std::string d = dtype_code_str(t) + ", other " + cases::print_literal(o);
      out.push_back(make(err + d, {T({6, 7}, t), o}));
      if (t == DType::Float32 || t == DType::Int64 || t == DType::Float16)
        out.push_back(make(err + "transposed " + d, {T_transposed(5, 8, t), o}));
    }
    out.push_back(make(err + "0-d " + dtype_code_str(t), {T({}, t), I(2)}));
    if (is_floating(t))
      out.push_back(
          make("special values " + dtype_code_str(t), {T_fill({64}, t, "special"), F(1.5)}));
  }
  out.push_back(make("empty", {T({0, 4}, DType::Float32), F(1.0)}));
  out.push_back(make("expanded (stride 0)", {T({5, 8}, DType::Float32, {0, 1}), F(1.0)}));
  out.push_back(make("sliced with a step", {T({6, 5}, DType::Int32, {10, 2}), I(-4)}));
  out.push_back(make("u8 with 300 wraps", {T({6, 7}, DType::UInt8), I(300)}));
  out.push_back(make("i64 with 1e10", {T({6}, DType::Int64), I(10000000000)}));
  out.push_back(make("i32 with a float -> f32", {T({6}, DType::Int32), F(2.5)}));
  if (with_alpha) {
    out.push_back(make("alpha positional", {T({6, 7}, DType::Float32), F(0.5), I(3)}));
    out.push_back(make("alpha keyword", {T({6, 7}, DType::Int64), I(5)}, {{"alpha", I(-2)}}));
    out.push_back(
        make("alpha=0.25 f16", {T({6, 7}, DType::Float16), F(0.5)}, {{"alpha", F(0.25)}}));
    out.push_back(make("error: float alpha, integral", {T({6, 7}, DType::Int64), I(1), F(0.5)}));
    out.push_back(make("error: bool alpha, f32", {T({6, 7}, DType::Float32), I(1), B(true)}));
  }
  return out;
}

// Marks the cases with a bool tensor operand, where sub/rsub must raise.
std::vector<Sample> label_bool_errors(std::vector<Sample> ss) {
  for (Sample& s : ss) {
    if (s.label.starts_with("error:")) continue;
    for (const Literal& a : s.call.args)
      if (a.kind == cases::LitKind::Tensor && a.tensor.dtype == DType::Bool) {
        s.label = "error: bool operand, " + s.label;
        break;
      }
  }
  return ss;
}

std::vector<Sample> sub_scalar_samples(const SampleContext& ctx) {
  if (ctx.performance) return scalar_perf();
  std::vector<Sample> out = tensor_scalar_samples({I(3), F(-0.75), B(true)}, true, true);
  // A bool Scalar is wrapped into a bool tensor, which sub_check refuses.
  for (Sample& s : out)
    if (!s.label.starts_with("error:") && s.call.args.size() > 1 &&
        s.call.args[1].kind == cases::LitKind::Bool)
      s.label = "error: bool other, " + s.label;
  return out;
}

std::vector<Sample> rsub_samples(const SampleContext& ctx) {
  if (ctx.performance) return perf_binary(ctx);
  std::vector<Sample> out = label_bool_errors(binary_samples(all_numeric_dtypes()));
  for (DType t : {DType::Float32, DType::Int64, DType::UInt8})
    out.push_back(
        make("alpha=2 " + dtype_code_str(t), {T({6, 7}, t), T({7}, t)}, {{"alpha", I(2)}}));
  out.push_back(make("alpha=0.25 bf16", {T({6, 7}, DType::BFloat16), T({6, 7}, DType::BFloat16)},
                     {{"alpha", F(0.25)}}));
  out.push_back(make("error: float alpha, i16", {T({6, 7}, DType::Int16), T({6, 7}, DType::Int16)},
                     {{"alpha", F(1.5)}}));
  out.push_back(make("other a Python float", {T({4, 5}, DType::Int64), F(2.5)}));
  return out;
}

// Why an in-place op on (self, other) must raise given its result dtype, or nullptr.
const char* inplace_error(const cases::TensorLit& self, const cases::TensorLit& other,
                          DType (*result)(DType, DType, bool, bool)) {
  if (self.strides)
    for (size_t d = 0; d < self.shape.size(); ++d)
      if ((*self.strides)[d] == 0 && self.shape[d] > 1) return "self expanded";
  if (broadcast_shapes(self.shape, other.shape) != self.shape) return "self would broadcast";
  const DType rt = result(self.dtype, other.dtype, self.shape.empty(), other.shape.empty());
  if (!can_cast(rt, self.dtype)) return "result not castable to self";
  return nullptr;
}

DType promoted_lit(DType a, DType b, bool a0, bool b0) {
  return arith::promoted({Value(Tensor::empty(a0 ? Shape{} : Shape{1}, a)),
                          Value(Tensor::empty(b0 ? Shape{} : Shape{1}, b))});
}
DType div_lit(DType a, DType b, bool a0, bool b0) {
  return opsutil::to_float_dtype(promoted_lit(a, b, a0, b0));
}

std::vector<Sample> inplace_samples(const std::vector<DType>& dtypes,
                                    DType (*result)(DType, DType, bool, bool)) {
  std::vector<Sample> out = binary_samples(dtypes);
  for (Sample& s : out) {
    if (s.label.starts_with("error:")) continue;
    if (const char* why = inplace_error(s.call.args[0].tensor, s.call.args[1].tensor, result))
      s.label = std::string("error: ") + why + ", " + s.label;
  }
  out.push_back(
      make("non-contiguous self", {T_transposed(6, 7, DType::Float32), T({6, 7}, DType::Float32)}));
  out.push_back(
      make("f16 self with f32 (downcast)", {T({6, 7}, DType::Float16), T({6, 7}, DType::Float32)}));
  out.push_back(make("f32 self with 0-d f64", {T({6, 7}, DType::Float32), T({}, DType::Float64)}));
  return out;
}

std::vector<Sample> mul_inplace_samples(const SampleContext& ctx) {
  if (ctx.performance) return perf_binary(ctx);
  std::vector<Sample> out = inplace_samples(all_numeric_dtypes(), promoted_lit);
  out.push_back(
      make("error: i64 self with f32", {T({6, 7}, DType::Int64), T({6, 7}, DType::Float32)}));
  out.push_back(make("i32 self overflow wraps", {T_fill({64}, DType::Int32, "special"),
                                                 T_fill({64}, DType::Int32, "special")}));
  out.push_back(make("other a Python int", {T({4, 5}, DType::Int16), I(-3)}));
  return out;
}

std::vector<Sample> mul_scalar_inplace_samples(const SampleContext& ctx) {
  if (ctx.performance) return scalar_perf();
  std::vector<Sample> out;
  for (DType t : all_numeric_dtypes()) {
    const std::string b = t == DType::Bool ? "error: result not castable, " : "";
    out.push_back(make(b + dtype_code_str(t) + " *= 3", {T({6, 7}, t), I(3)}));
    out.push_back(make(b + "0-d " + dtype_code_str(t) + " *= -2", {T({}, t), I(-2)}));
    const std::string f =
        (is_floating(t) ? "" : "error: result not castable, ") + dtype_code_str(t) + " *= 0.5";
    out.push_back(make(f, {T({6, 7}, t), F(0.5)}));
    out.push_back(make(dtype_code_str(t) + " *= True", {T({6, 7}, t), B(true)}));
    if (is_floating(t))
      out.push_back(
          make("special values " + dtype_code_str(t), {T_fill({64}, t, "special"), F(-2.0)}));
  }
  out.push_back(make("transposed self", {T_transposed(6, 7, DType::Float32), F(1.5)}));
  out.push_back(make("empty", {T({0, 3}, DType::Float32), F(1.5)}));
  out.push_back(make("error: expanded self", {T({5, 8}, DType::Float32, {0, 1}), F(1.5)}));
  return out;
}

std::vector<Sample> sub_inplace_samples(const SampleContext& ctx) {
  if (ctx.performance) return perf_binary(ctx);
  std::vector<Sample> out = label_bool_errors(inplace_samples(all_numeric_dtypes(), promoted_lit));
  out.push_back(
      make("alpha=2 i32", {T({6, 7}, DType::Int32), T({7}, DType::Int32)}, {{"alpha", I(2)}}));
  out.push_back(make("alpha=0.5 f16 self with f32",
                     {T({6, 7}, DType::Float16), T({6, 7}, DType::Float32)}, {{"alpha", F(0.5)}}));
  out.push_back(make("error: float alpha, i64", {T({6, 7}, DType::Int64), T({6, 7}, DType::Int64)},
                     {{"alpha", F(0.5)}}));
  return out;
}

std::vector<Sample> div_inplace_samples(const SampleContext& ctx) {
  if (ctx.performance) return perf_binary(ctx);
  std::vector<Sample> out = inplace_samples(all_numeric_dtypes(), div_lit);
  out.push_back(
      make("f32 self / i64 with zeros", {T({6, 7}, DType::Float32), T({6, 7}, DType::Int64)}));
  out.push_back(make("special values / special", {T_fill({64}, DType::Float32, "special"),
                                                  T_fill({64}, DType::Float32, "special")}));
  return out;
}

std::vector<Sample> div_scalar_samples(const SampleContext& ctx) {
  if (ctx.performance) return scalar_perf();
  std::vector<Sample> out = tensor_scalar_samples({I(3), F(-0.75), B(true)}, false, false);
  out.push_back(make("f32 / 0", {T({6, 7}, DType::Float32), I(0)}));
  out.push_back(make("i64 / 0.0 (inf and nan)", {T({6, 7}, DType::Int64), F(0.0)}));
  out.push_back(make("f16 / 1e-3", {T({6, 7}, DType::Float16), F(0.001)}));
  return out;
}

// out= cases: `flavour` 0 add/sub (alpha), 1 mul, 2 div (float result).
std::vector<Sample> out_samples(const SampleContext& ctx, int flavour) {
  std::vector<Sample> out;
  if (ctx.performance) {
    for (DType t : arith::perf_dtypes()) {
      const Shape s = {int64_t{1} << 22};
      out.push_back(
          make("bandwidth [4194304] " + dtype_code_str(t), {T(s, t), T(s, t)}, {{"out", T(s, t)}}));
    }
    return out;
  }
  auto add = [&](std::string label, Literal a, Literal b, Literal o) {
    out.push_back(make(std::move(label), {std::move(a), std::move(b)}, {{"out", std::move(o)}}));
  };
  for (DType t : all_numeric_dtypes()) {
    const bool raises = flavour == 2 && !is_floating(t);
    const std::string err = raises ? "error: float result into integral out, " : "";
    add(err + "same dtype " + dtype_code_str(t), T({6, 7}, t), T({6, 7}, t), T({6, 7}, t));
    add(err + "broadcast " + dtype_code_str(t), T({4, 5}, t), T({5}, t), T({4, 5}, t));
  }
  add("f32 into f64 out (computed in f32)", T({6, 7}, DType::Float32), T({6, 7}, DType::Float32),
      T({6, 7}, DType::Float64));
  add("f32 into f16 out", T({6, 7}, DType::Float32), T({6, 7}, DType::Float32),
      T({6, 7}, DType::Float16));
  add("i64 into f32 out", T({6, 7}, DType::Int64), T({6, 7}, DType::Int64),
      T({6, 7}, DType::Float32));
  add("i64 into f64 out", T({6, 7}, DType::Int64), T({6, 7}, DType::Int32),
      T({6, 7}, DType::Float64));
  add("error: f32 result into i64 out", T({6, 7}, DType::Float32), T({6, 7}, DType::Float32),
      T({6, 7}, DType::Int64));
  add("error: i32 result into bool out", T({6, 7}, DType::Int32), T({6, 7}, DType::Int32),
      T({6, 7}, DType::Bool));
  add(std::string(flavour == 2 ? "error: float result into i8 out" : "i64 into i8 out (wraps)"),
      T({6, 7}, DType::Int64), T({6, 7}, DType::Int64), T({6, 7}, DType::Int8));
  add("transposed out", T({6, 7}, DType::Float32), T({6, 7}, DType::Float32),
      T({6, 7}, DType::Float32, {1, 6}));
  add("transposed inputs", T_transposed(6, 7, DType::Float32), T({6, 7}, DType::Float32, {1, 6}),
      T({6, 7}, DType::Float32));
  add("0-d", T({}, DType::Float32), T({}, DType::Float32), T({}, DType::Float32));
  add("0-d with dimensioned", T({}, DType::Float64), T({3, 4}, DType::Float32),
      T({3, 4}, DType::Float32));
  add("empty", T({0, 3}, DType::Float32), T({3}, DType::Float32), T({0, 3}, DType::Float32));
  add("special values", T_fill({64}, DType::Float32, "special"),
      T_fill({64}, DType::Float32, "special"), T({64}, DType::Float32));
  add("mixed f16 with bf16 into f32", T({6, 7}, DType::Float16), T({6, 7}, DType::BFloat16),
      T({6, 7}, DType::Float32));
  add("error: shapes that do not broadcast", T({3}, DType::Float32), T({4}, DType::Float32),
      T({4}, DType::Float32));
  if (flavour == 0) {
    out.push_back(make("alpha=2 i32", {T({6, 7}, DType::Int32), T({6, 7}, DType::Int32)},
                       {{"alpha", I(2)}, {"out", T({6, 7}, DType::Int32)}}));
    out.push_back(make("alpha=0.5 f32", {T({6, 7}, DType::Float32), T({6, 7}, DType::Float32)},
                       {{"alpha", F(0.5)}, {"out", T({6, 7}, DType::Float32)}}));
    out.push_back(make("error: float alpha, i64",
                       {T({6, 7}, DType::Int64), T({6, 7}, DType::Int64)},
                       {{"alpha", F(0.5)}, {"out", T({6, 7}, DType::Int64)}}));
  }
  return out;
}

OpDef binary_op(std::string_view schema, MetaFn meta, RefFn ref, SampleFn samples, double flops,
                bool inplace = false) {
  OpDef op = OpDef::from_schema(schema, "pointwise.binary");
  op.dtypes = all_numeric_dtypes();
  op.meta = std::move(meta);
  op.ref = std::move(ref);
  op.samples = std::move(samples);
  op.cost = arith::elementwise_cost(flops, inplace);
  return op;
}

std::vector<DType> without_bool() {
  std::vector<DType> ts = all_numeric_dtypes();
  ts.erase(ts.begin());
  return ts;
}

// sub.out must reject bool like sub.Tensor: its labels follow label_bool_errors.
std::vector<Sample> sub_out_samples(const SampleContext& ctx) {
  std::vector<Sample> out = out_samples(ctx, 0);
  if (ctx.performance) return out;
  return label_bool_errors(std::move(out));
}

}  // namespace

void register_arithmetic_ops(OpRegistry& r) {
  OpDef sub_s = binary_op("aten::sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
                          binmeta::fresh_meta(sub_spec), sub_ref(), sub_scalar_samples, 2);
  sub_s.dtypes = without_bool();
  r.add(std::move(sub_s));
  OpDef rsub_s = binary_op("aten::rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
                           binmeta::fresh_meta(rsub_spec), rsub_ref(), sub_scalar_samples, 2);
  rsub_s.dtypes = without_bool();
  r.add(std::move(rsub_s));
  OpDef rsub_t =
      binary_op("aten::rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
                binmeta::fresh_meta(rsub_spec), rsub_ref(), rsub_samples, 2);
  rsub_t.dtypes = without_bool();
  r.add(std::move(rsub_t));
  r.add(binary_op("aten::mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
                  binmeta::inplace_meta(mul_spec), arith::inplace_of(mul_ref()),
                  mul_inplace_samples, 1, true));
  r.add(binary_op("aten::mul_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",
                  binmeta::inplace_meta(mul_spec), arith::inplace_of(mul_ref()),
                  mul_scalar_inplace_samples, 1, true));
  OpDef sub_ = binary_op(
      "aten::sub_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
      binmeta::inplace_meta(sub_spec), arith::inplace_of(sub_ref()), sub_inplace_samples, 2, true);
  sub_.dtypes = without_bool();
  r.add(std::move(sub_));
  OpDef div_ = binary_op("aten::div_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
                         binmeta::inplace_meta(div_spec), arith::inplace_of(div_ref()),
                         div_inplace_samples, 1, true);
  div_.dtypes = floating_dtypes();  // an integral self cannot hold the float quotient
  r.add(std::move(div_));
  r.add(binary_op("aten::div.Scalar(Tensor self, Scalar other) -> Tensor",
                  binmeta::fresh_meta(div_spec), div_ref(), div_scalar_samples, 1));
  r.add(binary_op(
      "aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
      binmeta::out_meta(add_spec_of), arith::out_of(add_ref()),
      [](const SampleContext& c) { return out_samples(c, 0); }, 2));
  OpDef sub_out = binary_op(
      "aten::sub.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
      binmeta::out_meta(sub_spec), arith::out_of(sub_ref()), sub_out_samples, 2);
  sub_out.dtypes = without_bool();
  r.add(std::move(sub_out));
  r.add(binary_op(
      "aten::mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
      binmeta::out_meta(mul_spec), arith::out_of(mul_ref()),
      [](const SampleContext& c) { return out_samples(c, 1); }, 1));
  r.add(binary_op(
      "aten::div.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
      binmeta::out_meta(div_spec), arith::out_of(div_ref()),
      [](const SampleContext& c) { return out_samples(c, 2); }, 1));
  register_arithmetic_division_ops(r);
  register_arithmetic_math_ops(r);
}

}  // namespace crucible
