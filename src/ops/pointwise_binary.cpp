// Pointwise binary ops: add (Tensor, Scalar, in-place), sub, mul (Tensor, Scalar), div (true
// division). References follow ATen's result_type promotion, broadcasting and alpha rules; they
// compute in double (floating results) or exactly in wrapping int64 (integral and bool results)
// and round once to the result dtype. Complex results (c32 c64 c128 operands) compute on
// complex doubles with c10::complex's formulas and round each part once.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/ops/destination.h"
#include "crucible/ops/rules/arithmetic.h"
#include "ops/families.h"
#include "ops/pointwise_binary_meta.h"
#include "ops/samples.h"
#include "ops/util.h"

namespace crucible {

namespace {

using namespace samples;  // NOLINT(google-build-using-namespace): the sample vocabulary
using binmeta::Spec;

// Bytes a tensor really occupies: dims of stride 0 (broadcast, expanded) are counted once.
double real_bytes(const Tensor& t) {
  int64_t n = 1;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.size(d) == 0) return 0;
    if (t.stride(d) != 0) n *= t.size(d);
  }
  return static_cast<double>(n) * static_cast<double>(t.itemsize());
}

// A binary op's operand as a tensor. A Python number (an `other` written as `1` or `0.5` in a
// trace, or the Scalar of add.Scalar) becomes a 0-d tensor of its own kind (bool, i64, f64), so
// its value is used at full precision; type promotion still treats it as a wrapped number
// because result_type is computed on the original Values.
Tensor operand(const Value& v) {
  if (v.is_tensor()) return v.tensor();
  if (!v.is_scalar())
    op_error(std::string("expected a Tensor or a number, got ") + value_kind_name(v.kind()));
  const Scalar s = v.to_scalar();
  if (s.is_bool()) return Tensor::scalar(s.to_bool() ? 1.0 : 0.0, DType::Bool);
  if (s.is_integral()) {
    Tensor t = Tensor::empty({}, DType::Int64);
    t.set_int(0, s.to_int());
    return t;
  }
  return Tensor::scalar(s.to_double(), DType::Float64);
}

DType operand_dtype(const Value& v) {
  if (v.is_tensor()) return v.tensor().dtype();
  const Scalar s = v.to_scalar();
  return s.is_bool() ? DType::Bool : s.is_integral() ? DType::Int64 : DType::Float64;
}

int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t wrap_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

// Complex results: out = f(a, b) on std::complex<double> (real operands read as (x, 0)),
// rounded once per part to out's dtype.
void map_binary_complex(
    const Tensor& a, const Tensor& b, const Tensor& out,
    const std::function<std::complex<double>(std::complex<double>, std::complex<double>)>& f) {
  const Tensor ops[] = {out, a, b};
  auto at = [](const Tensor& t, int64_t off) {
    return static_cast<char*>(t.storage()->data()) + off * static_cast<int64_t>(t.itemsize());
  };
  opsutil::for_each_offset(out.shape(), ops, [&](std::span<const int64_t> o) {
    store_from_complex(
        at(out, o[0]), out.dtype(),
        f(load_as_complex(at(a, o[1]), a.dtype()), load_as_complex(at(b, o[2]), b.dtype())));
  });
}

// ATen's alpha_check (BinaryOps.h) against the result dtype.
void alpha_check(DType result, const Scalar& alpha) {
  CRUCIBLE_CHECK(!alpha.is_bool() || result == DType::Bool,
                 "Boolean alpha only supported for Boolean results.");
  CRUCIBLE_CHECK(is_floating(result) || is_complex(result) || !alpha.is_floating(),
                 "For integral input tensors, argument alpha must not be a floating point number.");
}

// ATen's sub_check: no bool operand at all.
void sub_check(const Value& a, const Value& b) {
  const bool ab = operand_dtype(a) == DType::Bool, bb = operand_dtype(b) == DType::Bool;
  CRUCIBLE_CHECK(!(ab && bb),
                 "Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
                 "`^` or `logical_xor()` operator instead.");
  CRUCIBLE_CHECK(!ab && !bb,
                 "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
                 "trying to invert a mask, use the `~` or `logical_not()` operator instead.");
}

DType promoted(const Value& a, const Value& b) {
  const Value both[] = {a, b};
  return opsutil::result_type(both);
}

// out = a + alpha * b in the result dtype `rt` (sub passes -alpha).
void add_into(const Tensor& a, const Tensor& b, const Scalar& alpha, bool negate,
              const Tensor& out) {
  const DType rt = out.dtype();
  if (is_complex(rt)) {
    const double al = negate ? -alpha.to_double() : alpha.to_double();
    map_binary_complex(a, b, out, [al](std::complex<double> x, std::complex<double> y) {
      return std::complex<double>{x.real() + al * y.real(), x.imag() + al * y.imag()};
    });
  } else if (is_floating(rt)) {
    const double al = negate ? -alpha.to_double() : alpha.to_double();
    opsutil::map_binary(a, b, out, [al](double x, double y) { return x + al * y; });
  } else if (rt == DType::Bool) {
    // ATen converts alpha to bool and computes in bool: a || (alpha && b).
    const bool al = alpha.to_double() != 0;
    opsutil::map_binary_int(a, b, out, [al](int64_t x, int64_t y) {
      return static_cast<int64_t>(x != 0 || (al && y != 0));
    });
  } else {
    const int64_t al0 = alpha.to_int();
    const int64_t al = negate ? static_cast<int64_t>(0 - static_cast<uint64_t>(al0)) : al0;
    opsutil::map_binary_int(a, b, out,
                            [al](int64_t x, int64_t y) { return wrap_add(x, wrap_mul(al, y)); });
  }
}

Scalar alpha_of(const Args& args) {
  return args.size() > args.index("alpha") && args.given("alpha") ? args.scalar("alpha")
                                                                  : Scalar(int64_t{1});
}

// add / sub (`negate`): the promoted dtype, checked with alpha (sub: no bool operand).
Spec add_like_spec(const Args& args, bool negate) {
  const Value& a = args.value("self");
  const Value& b = args.value("other");
  if (negate) sub_check(a, b);
  const Tensor ta = operand(a), tb = operand(b);
  const Shape shape = broadcast_shapes(ta.shape(), tb.shape());
  const DType rt = promoted(a, b);
  alpha_check(rt, alpha_of(args));
  return {shape, rt};
}

void add_like_impl(const Args& args, const Values& outputs, bool negate) {
  const Tensor ta = operand(args.value("self")), tb = operand(args.value("other"));
  add_into(ta, tb, alpha_of(args), negate, outputs.at(0).tensor());
}

Spec mul_spec(const Args& args) {
  const Tensor ta = operand(args.value("self")), tb = operand(args.value("other"));
  return {broadcast_shapes(ta.shape(), tb.shape()),
          promoted(args.value("self"), args.value("other"))};
}

void mul_impl(const Args& args, const Values& outputs) {
  const Tensor ta = operand(args.value("self")), tb = operand(args.value("other"));
  const Tensor& out = outputs.at(0).tensor();
  if (is_complex(out.dtype()))
    map_binary_complex(ta, tb, out, arith::complex_mul);
  else if (is_floating(out.dtype()))
    opsutil::map_binary(ta, tb, out, [](double x, double y) { return x * y; });
  else if (out.dtype() == DType::Bool)
    opsutil::map_binary_int(ta, tb, out,
                            [](int64_t x, int64_t y) { return int64_t{x != 0 && y != 0}; });
  else
    opsutil::map_binary_int(ta, tb, out, wrap_mul);
}

// True division: integral and bool results become f32; x/0 is ±inf, 0/0 NaN.
Spec div_spec(const Args& args) {
  const Tensor ta = operand(args.value("self")), tb = operand(args.value("other"));
  const DType rt = opsutil::to_float_dtype(promoted(args.value("self"), args.value("other")));
  return {broadcast_shapes(ta.shape(), tb.shape()), rt};
}

void div_impl(const Args& args, const Values& outputs) {
  const Tensor ta = operand(args.value("self")), tb = operand(args.value("other"));
  const Tensor& out = outputs.at(0).tensor();
  if (is_complex(out.dtype())) {
    map_binary_complex(ta, tb, out, arith::complex_div);
    return;
  }
  opsutil::map_binary(ta, tb, out, [](double x, double y) { return x / y; });
}

// add_: the result is computed in the promoted dtype, which must be castable to self's dtype;
// self must not need broadcasting nor have overlapping elements. Returns the result's spec.
Spec add_inplace_spec(const Args& args) {
  const Tensor& self = args.tensor("self");
  const Tensor other = operand(args.value("other"));
  for (int64_t d = 0; d < self.dim(); ++d)
    CRUCIBLE_CHECK(self.stride(d) != 0 || self.size(d) <= 1,
                   "unsupported operation: more than one element of the written-to tensor refers "
                   "to a single memory location. Please clone() the tensor before performing the "
                   "operation.");
  const Shape shape = broadcast_shapes(self.shape(), other.shape());
  CRUCIBLE_CHECK(shape == self.shape(), "output with shape " + shape_str(self.shape()) +
                                            " doesn't match the broadcast shape " +
                                            shape_str(shape));
  const DType rt = promoted(args.value("self"), args.value("other"));
  CRUCIBLE_CHECK(can_cast(rt, self.dtype()), "result type " + scalar_type_name(rt) +
                                                 " can't be cast to the desired output type " +
                                                 scalar_type_name(self.dtype()));
  alpha_check(rt, alpha_of(args));
  return {shape, rt};
}

// add_ into self (the meta function checked the call): computed in the promoted dtype.
void add_inplace_impl(const Args& args, const Values&) {
  const Tensor& self = args.tensor("self");
  const Tensor other = operand(args.value("other"));
  // Computed into a temporary first: `other` may alias `self` (x.add_(x)).
  Tensor result = Tensor::empty(self.shape(), promoted(args.value("self"), args.value("other")));
  add_into(self, other, alpha_of(args), false, result);
  self.copy_from(result);  // converts to self's dtype (rounds once more, as ATen does)
}

CostFn binary_cost(double flops_per_element) {
  return [flops_per_element](const Args& args, const Values& outputs) {
    Cost c;
    const Tensor& out = outputs.at(0).tensor();
    c.flops = flops_per_element * static_cast<double>(out.numel());
    c.bytes = static_cast<double>(out.numel() * out.itemsize());
    for (const char* operand : {"self", "other"})
      if (args.index(operand) < args.size() && args.value(operand).is_tensor())
        c.bytes += real_bytes(args.tensor(operand));
    return c;
  };
}

std::vector<DType> perf_dtypes() { return {DType::Float32, DType::Float16, DType::BFloat16}; }

// Cases with a Python number as `other` (traces write add.Tensor(T, 1)). The references accept
// them (as wrapped numbers); the samples are off until materialisation binds a number to a Tensor
// argument (schema coercion rejects it today).
constexpr bool kNumberOperandSamples = true;

void add_number_samples(std::vector<Sample>& out) {
  out.push_back(make("other a Python int, i64 0-d", {T({}, DType::Int64), I(1)}));
  out.push_back(make("other a Python float, i64 -> f32", {T({4, 5}, DType::Int64), F(2.5)}));
  out.push_back(make("other a Python float, f16", {T({4, 5}, DType::Float16), F(0.125)}));
  out.push_back(make("other a Python int, u8 wraps", {T({4, 5}, DType::UInt8), I(300)}));
  out.push_back(make("other a Python bool, bool", {T({4, 5}, DType::Bool), B(true)}));
}

// Complex operands (c64 c128; c32 on CPU only for some kernels, so left out): same dtype,
// complex with real (promotion: f64 with c64 -> c128), broadcasting, a 0-d complex with a
// dimensioned real tensor (complex category wins), special values in either part.
void add_complex_samples(std::vector<Sample>& out) {
  const DType c64 = DType::Complex64, c128 = DType::Complex128;
  out.push_back(make("complex c64", {T({5, 6}, c64), T({5, 6}, c64)}));
  out.push_back(make("complex c128, broadcast", {T({4, 1, 3}, c128), T({5, 3}, c128)}));
  out.push_back(make("complex c64 with f64 -> c128", {T({4, 5}, c64), T({4, 5}, DType::Float64)}));
  out.push_back(make("complex f32 with 0-d c128 -> c64", {T({4, 5}, DType::Float32), T({}, c128)}));
  out.push_back(make("complex c64 with i64", {T({4, 5}, c64), T({5}, DType::Int64)}));
  out.push_back(make("complex c64 transposed", {T_transposed(6, 4, c64), T({6, 4}, c64)}));
  out.push_back(make("complex special values c128",
                     {T_fill({48}, c128, "special"), T_fill({48}, c128, "special")}));
}

std::vector<Sample> add_samples(const SampleContext& ctx) {
  if (ctx.performance) return elementwise_perf_samples(2, perf_dtypes());
  std::vector<Sample> out = binary_samples(all_numeric_dtypes());
  add_complex_samples(out);
  out.push_back(make("complex alpha=0.5 c64",
                     {T({6, 7}, DType::Complex64), T({6, 7}, DType::Complex64)},
                     {{"alpha", F(0.5)}}));
  for (DType t : {DType::Float32, DType::Float16, DType::Int64, DType::UInt8, DType::Int8})
    out.push_back(
        make("alpha=2 " + dtype_code_str(t), {T({6, 7}, t), T({7}, t)}, {{"alpha", I(2)}}));
  for (DType t : {DType::Float32, DType::BFloat16, DType::Float64})
    out.push_back(
        make("alpha=0.5 " + dtype_code_str(t), {T({6, 7}, t), T({6, 7}, t)}, {{"alpha", F(0.5)}}));
  out.push_back(
      make("alpha=-3, special values",
           {T_fill({64}, DType::Float32, "special"), T_fill({64}, DType::Float32, "special")},
           {{"alpha", I(-3)}}));
  out.push_back(make("alpha=1 given", {T({5, 5}, DType::Float32), T({5, 5}, DType::Float32)},
                     {{"alpha", I(1)}}));
  out.push_back(make("alpha=0.5, i64 with f32 -> f32",
                     {T({6, 7}, DType::Int64), T({6, 7}, DType::Float32)}, {{"alpha", F(0.5)}}));
  out.push_back(make("alpha=True, bool", {T({6, 7}, DType::Bool), T({6, 7}, DType::Bool)},
                     {{"alpha", B(true)}}));
  out.push_back(make("alpha=-1, bool (alpha as bool)",
                     {T({6, 7}, DType::Bool), T({6, 7}, DType::Bool)}, {{"alpha", I(-1)}}));
  out.push_back(make("error: float alpha, integral",
                     {T({6, 7}, DType::Int32), T({6, 7}, DType::Int32)}, {{"alpha", F(0.5)}}));
  out.push_back(make("error: bool alpha, f32",
                     {T({6, 7}, DType::Float32), T({6, 7}, DType::Float32)}, {{"alpha", B(true)}}));
  if (kNumberOperandSamples) add_number_samples(out);
  return out;
}

std::vector<Sample> add_scalar_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    for (DType t : perf_dtypes())
      out.push_back(
          make("bandwidth [16777216] " + dtype_code_str(t), {T({int64_t{1} << 24}, t), F(0.5)}));
    return out;
  }
  const Literal others[] = {I(3), F(-0.75), B(true)};
  for (DType t : all_numeric_dtypes()) {
    for (const Literal& o : others) {
      const std::string d = dtype_code_str(t) + " + " + cases::print_literal(o);
      out.push_back(make(d, {T({6, 7}, t), o}));
      out.push_back(make("transposed, " + d, {T_transposed(5, 8, t), o}));
    }
    out.push_back(make("0-d " + dtype_code_str(t) + " + 2", {T({}, t), I(2)}));
    if (is_floating(t))
      out.push_back(
          make("special values " + dtype_code_str(t), {T_fill({64}, t, "special"), F(1.5)}));
  }
  // alpha given positionally (add.Scalar takes it positionally) and as a keyword.
  out.push_back(make("alpha positional", {T({6, 7}, DType::Float32), F(0.5), I(3)}));
  out.push_back(make("alpha keyword", {T({6, 7}, DType::Int64), I(5)}, {{"alpha", I(-2)}}));
  out.push_back(make("u8 + 300 wraps", {T({6, 7}, DType::UInt8), I(300)}));
  out.push_back(make("empty", {T({0, 4}, DType::Float32), F(1.0)}));
  out.push_back(make("expanded", {T({5, 8}, DType::Float32, {0, 1}), F(1.0)}));
  out.push_back(make("i64 + 1e10", {T({6}, DType::Int64), I(10000000000)}));
  out.push_back(make("error: float alpha, integral", {T({6, 7}, DType::Int64), I(1), F(0.5)}));
  return out;
}

// Why add_(self, other) must raise for these literals, or nullptr.
const char* inplace_error(const cases::TensorLit& self, const cases::TensorLit& other) {
  if (self.strides)
    for (size_t d = 0; d < self.shape.size(); ++d)
      if ((*self.strides)[d] == 0 && self.shape[d] > 1) return "self expanded";
  if (broadcast_shapes(self.shape, other.shape) != self.shape) return "self would broadcast";
  const Value operands[] = {
      Value(Tensor::empty(self.shape.empty() ? Shape{} : Shape{1}, self.dtype)),
      Value(Tensor::empty(other.shape.empty() ? Shape{} : Shape{1}, other.dtype))};
  if (!can_cast(opsutil::result_type(operands), self.dtype)) return "result not castable";
  return nullptr;
}

// Marks the cases with a bool operand, where sub must raise.
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

std::vector<Sample> add_inplace_samples(const SampleContext& ctx) {
  if (ctx.performance) return elementwise_perf_samples(2, perf_dtypes());
  // The standard set is mostly valid in place; the cases where self would broadcast, self is
  // expanded (internal overlap) or the result dtype is not castable to self's raise, as in ATen.
  std::vector<Sample> out = binary_samples(all_numeric_dtypes());
  for (Sample& s : out) {
    if (s.label.starts_with("error:")) continue;
    // The sample's literals, positional as binary_samples writes them: self, other.
    if (const char* why = inplace_error(s.call.args[0].tensor, s.call.args[1].tensor))
      s.label = std::string("error: ") + why + ", " + s.label;
  }
  out.push_back(make("f32 self += i64", {T({6, 7}, DType::Float32), T({6, 7}, DType::Int64)}));
  out.push_back(
      make("f16 self += f32 (downcast)", {T({6, 7}, DType::Float16), T({6, 7}, DType::Float32)}));
  out.push_back(make("error: i64 self += 0-d f64 (result f64)",
                     {T({6, 7}, DType::Int64), T({}, DType::Float64)}));
  out.push_back(
      make("error: i64 self += f32", {T({6, 7}, DType::Int64), T({6, 7}, DType::Float32)}));
  out.push_back(make("error: bool self += i32", {T({6, 7}, DType::Bool), T({6, 7}, DType::Int32)}));
  out.push_back(
      make("error: self needs broadcasting", {T({7}, DType::Float32), T({6, 7}, DType::Float32)}));
  out.push_back(
      make("alpha=2 in place", {T({6, 7}, DType::Int32), T({7}, DType::Int32)}, {{"alpha", I(2)}}));
  out.push_back(make("alpha=0.5 in place, non-contiguous self",
                     {T_transposed(6, 7, DType::Float32), T({6, 7}, DType::Float32)},
                     {{"alpha", F(0.5)}}));
  return out;
}

std::vector<Sample> sub_samples(const SampleContext& ctx) {
  if (ctx.performance) return elementwise_perf_samples(2, perf_dtypes());
  // binary_samples over every dtype: the bool cases (and bool mixed with another dtype) are
  // the cases where ATen must raise.
  std::vector<Sample> out = label_bool_errors(binary_samples(all_numeric_dtypes()));
  for (DType t : {DType::Float32, DType::Int64, DType::Float16, DType::UInt8})
    out.push_back(
        make("alpha=2 " + dtype_code_str(t), {T({6, 7}, t), T({7}, t)}, {{"alpha", I(2)}}));
  out.push_back(make("alpha=0.25 bf16", {T({6, 7}, DType::BFloat16), T({6, 7}, DType::BFloat16)},
                     {{"alpha", F(0.25)}}));
  out.push_back(make("error: float alpha, i16", {T({6, 7}, DType::Int16), T({6, 7}, DType::Int16)},
                     {{"alpha", F(1.5)}}));
  out.push_back(make("error: bool with f32", {T({6, 7}, DType::Bool), T({6, 7}, DType::Float32)}));
  out.push_back(make("u8 underflow wraps", {T({6, 7}, DType::UInt8), T({}, DType::UInt8)}));
  return out;
}

std::vector<Sample> mul_samples(const SampleContext& ctx) {
  if (ctx.performance) return elementwise_perf_samples(2, perf_dtypes());
  std::vector<Sample> out = binary_samples(all_numeric_dtypes());
  if (kNumberOperandSamples) add_number_samples(out);
  add_complex_samples(out);
  out.push_back(make("i32 overflow wraps", {T_fill({64}, DType::Int32, "special"),
                                            T_fill({64}, DType::Int32, "special")}));
  return out;
}

std::vector<Sample> mul_scalar_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    for (DType t : perf_dtypes())
      out.push_back(
          make("bandwidth [16777216] " + dtype_code_str(t), {T({int64_t{1} << 24}, t), F(0.5)}));
    return out;
  }
  const Literal others[] = {I(-3), F(0.125), B(false)};
  for (DType t : all_numeric_dtypes()) {
    for (const Literal& o : others) {
      const std::string d = dtype_code_str(t) + " * " + cases::print_literal(o);
      out.push_back(make(d, {T({6, 7}, t), o}));
      out.push_back(make("sliced, " + d, {T({6, 5}, t, {10, 2}), o}));
    }
    out.push_back(make("0-d " + dtype_code_str(t) + " * 2", {T({}, t), I(2)}));
    if (is_floating(t))
      out.push_back(
          make("special values " + dtype_code_str(t), {T_fill({64}, t, "special"), F(-2.0)}));
  }
  out.push_back(make("empty", {T({3, 0}, DType::Float32), F(2.0)}));
  out.push_back(
      make("i64 * 2^40 wraps", {T_fill({32}, DType::Int64, "special"), I(int64_t{1} << 40)}));
  return out;
}

std::vector<Sample> div_samples(const SampleContext& ctx) {
  if (ctx.performance) return elementwise_perf_samples(2, perf_dtypes());
  std::vector<Sample> out = binary_samples(all_numeric_dtypes());
  // Integers divided by integers (zero included, so ±inf and NaN appear).
  out.push_back(make("i64 / i64 with zeros", {T_fill({64}, DType::Int64, "special"),
                                              T_fill({64}, DType::Int64, "special")}));
  out.push_back(make("u8 / u8 with zeros", {T({64}, DType::UInt8), T({64}, DType::UInt8)}));
  out.push_back(make("i32 / 0-d i32 -> f32", {T({6, 7}, DType::Int32), T({}, DType::Int32)}));
  out.push_back(make("f16 / 0-d f64 -> f16", {T({6, 7}, DType::Float16), T({}, DType::Float64)}));
  add_complex_samples(out);
  return out;
}

OpDef binary_op(std::string_view schema, std::function<Spec(const Args&)> spec, ImplFn impl,
                SampleFn samples, double flops) {
  OpDef op = OpDef::from_schema(schema, "pointwise.binary");
  op.dtypes = all_numeric_dtypes();
  op.meta = binmeta::fresh_meta(std::move(spec));
  op.ref = structured_ref(op.meta, std::move(impl));
  op.samples = std::move(samples);
  op.cost = binary_cost(flops);
  return op;
}

}  // namespace

void register_pointwise_binary_ops(OpRegistry& r) {
  r.add(binary_op(
      "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
      [](const Args& a) { return add_like_spec(a, false); },
      [](const Args& a, const Values& o) { add_like_impl(a, o, false); }, add_samples, 2));
  r.add(binary_op(
      "aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
      [](const Args& a) { return add_like_spec(a, false); },
      [](const Args& a, const Values& o) { add_like_impl(a, o, false); }, add_scalar_samples, 2));
  OpDef add_ =
      binary_op("aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
                add_inplace_spec, add_inplace_impl, add_inplace_samples, 2);
  add_.meta = [](const Args& args) {
    add_inplace_spec(args);
    return Values{args.value("self")};
  };
  add_.ref = structured_ref(add_.meta, add_inplace_impl);
  add_.cost = [](const Args& args, const Values&) {
    const Tensor& self = args.tensor("self");
    Cost c{2.0 * static_cast<double>(self.numel()), 2 * real_bytes(self)};
    if (args.value("other").is_tensor()) c.bytes += real_bytes(args.tensor("other"));
    return c;
  };
  r.add(std::move(add_));
  OpDef sub = binary_op(
      "aten::sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
      [](const Args& a) { return add_like_spec(a, true); },
      [](const Args& a, const Values& o) { add_like_impl(a, o, true); }, sub_samples, 2);
  // Bool is not supported by sub.
  sub.dtypes.erase(std::remove(sub.dtypes.begin(), sub.dtypes.end(), DType::Bool),
                   sub.dtypes.end());
  r.add(std::move(sub));
  r.add(binary_op("aten::mul.Tensor(Tensor self, Tensor other) -> Tensor", mul_spec, mul_impl,
                  mul_samples, 1));
  r.add(binary_op("aten::mul.Scalar(Tensor self, Scalar other) -> Tensor", mul_spec, mul_impl,
                  mul_scalar_samples, 1));
  r.add(binary_op("aten::div.Tensor(Tensor self, Tensor other) -> Tensor", div_spec, div_impl,
                  div_samples, 1));
}

}  // namespace crucible
