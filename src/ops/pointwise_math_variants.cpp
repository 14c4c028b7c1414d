// The in-place (abs_, sin_, ...) and out= (abs.out, sin.out, ...) overloads of the pointwise
// math functions: the meta functions check, the references compute into the destination
// (destination.h). ATen's rules:
//  - in place: the result is computed in the op's dtype (f32 for a float op on integers) and
//    must be castable to self's dtype (no float -> integral: sin_ on an i64 tensor raises
//    "result type Float can't be cast to the desired output type Long"); a self with internal
//    overlap (an expanded dim) raises; self is returned.
//  - out= for the "float ops" (exp, log, sqrt, sin, cos, tanh, sigmoid, reciprocal): computed in
//    the common dtype, then cast to out's dtype, which must be castable (f32 input into an f64
//    or f16 out is fine, into an integral out raises).
//  - out= for abs and neg (TensorIterator::unary_op): out must have exactly self's dtype
//    ("Found dtype Double but expected Float").
//  - out of the wrong shape is resized by ATen (with a warning unless it is empty); crucible's
//    reference cannot resize an argument in place, so it reports such a case as unsupported and
//    the samples always give out of the right shape.
#include <algorithm>
#include <string>

#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/ops/destination.h"
#include "ops/pointwise_math_internal.h"
#include "ops/util.h"

namespace crucible {

namespace {

using namespace samples;  // NOLINT(google-build-using-namespace): the sample vocabulary
using mathops::MathFn;
using mathops::MathKind;

[[noreturn]] void cannot_cast(DType from, DType to) {
  op_error("result type " + scalar_type_name(from) + " can't be cast to the desired output type " +
           scalar_type_name(to));
}

// The checks of an in-place overload: the result dtype must be castable to self's, and self
// must not overlap itself.
void check_inplace(const MathFn& fn, const Tensor& self) {
  const DType rt = mathops::math_result_dtype(fn, self.dtype());
  if (!can_cast(rt, self.dtype())) cannot_cast(rt, self.dtype());
  mathops::check_no_internal_overlap(self);
}

// fn(self) into `dest`, checked by the meta function. Computed straight into it when it has the
// result dtype and is self itself (each element read before it is written) or shares no memory
// with self; otherwise in the result dtype, rounded there, then cast into it.
void compute_into(const MathFn& fn, const Tensor& self, const Tensor& dest) {
  const DType rt = mathops::math_result_dtype(fn, self.dtype());
  const bool same_place = dest.shares_storage(self) && dest.offset() == self.offset() &&
                          dest.strides() == self.strides();
  if (dest.dtype() == rt && (same_place || !dest.shares_storage(self))) {
    mathops::math_compute_into(fn, self, dest);
    return;
  }
  dest.copy_from(mathops::math_compute(fn, self));
}

// Why `fn`'s in-place overload must raise on a self of dtype t, or nullptr.
const char* inplace_dtype_error(const MathFn& fn, DType t) {
  const auto bad = mathops::math_error_dtypes(fn);
  if (std::ranges::find(bad, t) != bad.end()) return "unsupported dtype";
  if (fn.kind == MathKind::Float && !is_floating(t)) return "float result into integral self";
  return nullptr;
}

std::vector<Sample> inplace_samples(const MathFn& fn, const SampleContext& ctx) {
  if (ctx.performance) return elementwise_perf_samples(1, mathops::perf_dtypes());
  // Every dtype: the ones where ATen raises in place are labelled as errors.
  std::vector<Sample> out = unary_samples(all_numeric_dtypes());
  out.push_back(make("positive values f32", {T_fill({8, 9}, DType::Float32, "positive")}));
  out.push_back(make("positive values bf16", {T_fill({8, 9}, DType::BFloat16, "positive")}));
  out.push_back(make("sliced self, f64", {T({4, 6}, DType::Float64, {14, 2})}));
  return mathops::mark_inplace_errors(std::move(out),
                                      [&fn](DType t) { return inplace_dtype_error(fn, t); });
}

OpDef inplace_op(const MathFn& fn) {
  OpDef op = OpDef::from_schema(
      "aten::" + std::string(fn.name) + "_(Tensor(a!) self) -> Tensor(a!)", "pointwise.math");
  op.dtypes = fn.kind == MathKind::Float ? floating_dtypes() : mathops::math_dtypes(fn);
  op.meta = [&fn](const Args& args) {
    check_inplace(fn, args.tensor("self"));
    return Values{args.value("self")};
  };
  op.ref = structured_ref(op.meta, [&fn](const Args& args, const Values& outputs) {
    compute_into(fn, args.tensor("self"), outputs.at(0).tensor());
  });
  op.samples = [&fn](const SampleContext& ctx) { return inplace_samples(fn, ctx); };
  op.cost = mathops::inplace_cost(fn.flops);
  return op;
}

// The checks of an out= overload: out's dtype (castable for the float ops, exact for the others),
// its shape, and no internal overlap.
void check_out(const MathFn& fn, const Tensor& self, const Tensor& out) {
  const DType rt = mathops::math_result_dtype(fn, self.dtype());
  if (fn.kind == MathKind::Float) {
    if (!can_cast(rt, out.dtype())) cannot_cast(rt, out.dtype());
  } else if (out.dtype() != rt) {
    op_error("Found dtype " + scalar_type_name(out.dtype()) + " but expected " +
             scalar_type_name(rt));
  }
  if (out.shape() != self.shape())
    unsupported("out= of shape " + shape_str(out.shape()) + " for a result of shape " +
                shape_str(self.shape()) +
                ": ATen resizes it; the reference does not model resizing an argument");
  mathops::check_no_internal_overlap(out);
}

std::vector<Sample> out_samples(const MathFn& fn, const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    for (DType t : mathops::perf_dtypes()) {
      const Shape s = {int64_t{1} << 22};
      out.push_back(make("bandwidth " + shape_str(s) + " " + dtype_code_str(t), {T(s, t)},
                         {{"out", T(s, t)}}));
    }
    return out;
  }
  // The standard set, each with an out of the right shape and the result dtype.
  for (Sample& s : unary_samples(mathops::math_dtypes(fn))) {
    // The sample's positional literal: self (unary_samples writes it first).
    const cases::TensorLit& x = s.call.args.at(0).tensor;
    s.call.kwargs.emplace_back("out", T(x.shape, mathops::math_result_dtype(fn, x.dtype)));
    out.push_back(std::move(s));
  }
  const bool float_op = fn.kind == MathKind::Float;
  const DType f32 = DType::Float32, f64 = DType::Float64, f16 = DType::Float16;
  const DType i64 = DType::Int64, i32 = DType::Int32;
  auto add = [&](const std::string& label, bool ok, Literal x, Literal o) {
    out.push_back(make(ok ? label : "error: " + label, {std::move(x)}, {{"out", std::move(o)}}));
  };
  add("f32 into an f64 out", float_op, T({5, 7}, f32), T({5, 7}, f64));
  add("f64 into an f16 out", float_op, T({5, 7}, f64), T({5, 7}, f16));
  add("f32 into an i64 out", false, T({5, 7}, f32), T({5, 7}, i64));
  add("i32 into an f64 out", float_op, T({5, 7}, i32), T({5, 7}, f64));
  add("i64 into an i64 out", !float_op, T({5, 7}, i64), T({5, 7}, i64));
  add("i64 into an f32 out", float_op, T({5, 7}, i64), T({5, 7}, f32));
  add("transposed out f32", true, T({6, 9}, f32), T_transposed(6, 9, f32));
  add("sliced out f16", true, T({4, 5}, f16), T({4, 5}, f16, {12, 2}));
  add("transposed self and out bf16", true, T_transposed(6, 9, DType::BFloat16),
      T_transposed(6, 9, DType::BFloat16));
  add("out expanded (internal overlap)", false, T({5, 8}, f32), T({5, 8}, f32, {0, 1}));
  add("special values into an f64 out", float_op, T_fill({64}, f32, "special"), T({64}, f64));
  for (DType t : mathops::math_error_dtypes(fn)) {
    add("unsupported dtype " + dtype_code_str(t), false, T({4, 5}, t), T({4, 5}, t));
  }
  return out;
}

OpDef out_op(const MathFn& fn) {
  OpDef op = OpDef::from_schema(
      "aten::" + std::string(fn.name) + ".out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
      "pointwise.math");
  op.dtypes = mathops::math_dtypes(fn);
  op.meta = [&fn](const Args& args) {
    check_out(fn, args.tensor("self"), args.tensor("out"));
    return Values{args.value("out")};
  };
  op.ref = structured_ref(op.meta, [&fn](const Args& args, const Values& outputs) {
    compute_into(fn, args.tensor("self"), outputs.at(0).tensor());
  });
  op.samples = [&fn](const SampleContext& ctx) { return out_samples(fn, ctx); };
  op.cost = [&fn](const Args& args, const Values& outputs) {
    const Tensor& o = outputs.at(0).tensor();
    return Cost{fn.flops * static_cast<double>(o.numel()),
                mathops::real_bytes(args.tensor("self")) + mathops::real_bytes(o)};
  };
  return op;
}

}  // namespace

void register_pointwise_math_variant_ops(OpRegistry& r) {
  for (std::string_view name : {"abs", "ceil", "floor", "log", "sqrt", "exp", "neg", "reciprocal",
                                "rsqrt", "sin", "cos", "tanh", "sigmoid", "round", "trunc"})
    r.add(inplace_op(mathops::math_fn(name)));
  for (std::string_view name :
       {"abs", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "neg", "reciprocal"})
    r.add(out_op(mathops::math_fn(name)));
}

}  // namespace crucible
