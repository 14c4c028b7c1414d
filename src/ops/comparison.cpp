// Op family: comparison -- eq/ne/lt/le/gt/ge (.Scalar, .Tensor and their in-place forms),
// logical_and/or/xor and bitwise_and/or/xor (.Scalar, .Tensor).
//
// ATen's rules, checked against torch:
//  - comparisons cast both operands to the promoted dtype and compare there, giving bool:
//    u8 == -1 compares with 255 (the number wraps), f16 == 0.1 compares with f16(0.1) (true for
//    an f16 tensor holding 0.1), i64 2^24+1 == f32 2^24 is true (compared in f32); NaN compares
//    false except with ne. The in-place forms write 0/1 in self's dtype (self must have the
//    broadcast shape; no castability rule: bool casts to everything).
//  - logical ops: x != 0 (NaN is true) for any dtype, bool result.
//  - bitwise ops: integral and bool only (a floating promoted dtype raises "bitwise_and_cpu" not
//    implemented for 'Float'), computed in the promoted dtype (i8 & u8 -> i16; u8 ^ -1 wraps).
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
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

enum class Cmp { Eq, Ne, Lt, Le, Gt, Ge };

template <typename V>
bool compare(Cmp c, V a, V b) {
  switch (c) {
    case Cmp::Eq:
      return a == b;
    case Cmp::Ne:
      return a != b;
    case Cmp::Lt:
      return a < b;
    case Cmp::Le:
      return a <= b;
    case Cmp::Gt:
      return a > b;
    case Cmp::Ge:
      return a >= b;
  }
  return false;
}

// The checked shape and dtype of an op's result.
struct Spec {
  Shape shape;
  DType dtype;
};

// A comparison: compared in the promoted dtype, a bool result.
Spec compare_spec(const Args& a) {
  const DType ct = arith::promoted({a.value("self"), a.value("other")});
  arith::require_modelled(ct, "comparison");
  return {broadcast_shapes(arith::operand(a.value("self")).shape(),
                           arith::operand(a.value("other")).shape()),
          DType::Bool};
}

// A comparison into its bool output (meta: compare_spec), compared in the promoted dtype.
void compare_impl(const Args& a, const Values& outputs, Cmp c) {
  const Tensor ta = arith::operand(a.value("self")), tb = arith::operand(a.value("other"));
  const DType ct = arith::promoted({a.value("self"), a.value("other")});
  const Tensor& out = outputs.at(0).tensor();
  const Tensor ins[] = {ta, tb};
  if (is_floating(ct))
    arith::map_float(
        ins, out, [c](const double* v) { return compare(c, v[0], v[1]) ? 1.0 : 0.0; }, ct);
  else
    arith::map_int(ins, ct, out, [c](const int64_t* v) { return int64_t{compare(c, v[0], v[1])}; });
}

enum class Logic { And, Or, Xor };

int64_t logic(Logic l, int64_t a, int64_t b) {
  switch (l) {
    case Logic::And:
      return a & b;
    case Logic::Or:
      return a | b;
    case Logic::Xor:
      return a ^ b;
  }
  return 0;
}

const char* logic_name(Logic l) {
  switch (l) {
    case Logic::And:
      return "and";
    case Logic::Or:
      return "or";
    case Logic::Xor:
      return "xor";
  }
  return "";
}

Spec logical_spec(const Args& a) {
  const Tensor ta = arith::operand(a.value("self")), tb = arith::operand(a.value("other"));
  arith::require_modelled(ta.dtype(), "logical");
  arith::require_modelled(tb.dtype(), "logical");
  return {broadcast_shapes(ta.shape(), tb.shape()), DType::Bool};
}

void logical_impl(const Args& a, const Values& outputs, Logic l) {
  const Tensor ta = arith::operand(a.value("self")), tb = arith::operand(a.value("other"));
  const Tensor& out = outputs.at(0).tensor();
  const Tensor ins[] = {ta, tb};
  // x != 0 with NaN true: loaded as double (every modelled dtype converts exactly enough).
  arith::map_float(ins, out, [l](const double* v) {
    return static_cast<double>(logic(l, v[0] != 0 ? 1 : 0, v[1] != 0 ? 1 : 0));
  });
}

Spec bitwise_spec(const Args& a, Logic l) {
  const DType rt = arith::promoted({a.value("self"), a.value("other")});
  arith::require_modelled(rt, "bitwise");
  if (is_floating(rt)) not_implemented_for(std::string("bitwise_") + logic_name(l) + "_cpu", rt);
  return {broadcast_shapes(arith::operand(a.value("self")).shape(),
                           arith::operand(a.value("other")).shape()),
          rt};
}

void bitwise_impl(const Args& a, const Values& outputs, Logic l) {
  const Tensor ta = arith::operand(a.value("self")), tb = arith::operand(a.value("other"));
  const Tensor& out = outputs.at(0).tensor();
  const Tensor ins[] = {ta, tb};
  arith::map_int(ins, out.dtype(), out, [l](const int64_t* v) { return logic(l, v[0], v[1]); });
}

// ---- meta functions ----

using SpecFn = std::function<Spec(const Args&)>;

MetaFn spec_meta(SpecFn spec) {
  return [spec = std::move(spec)](const Args& a) {
    const Spec s = spec(a);
    return Values{meta::fresh(s.shape, s.dtype)};
  };
}

// The meta of the in-place form (arith::inplace_of): self must not overlap itself (checked
// before anything else), then the out-of-place checks, then self must hold the result.
MetaFn inplace_spec_meta(SpecFn spec) {
  return [spec = std::move(spec)](const Args& a) {
    const Tensor& self = a.tensor("self");
    arith::check_inplace(self, self.shape(), self.dtype());  // the overlap check alone
    const Spec s = spec(a);
    arith::check_inplace(self, s.shape, s.dtype);
    return Values{a.value("self")};
  };
}

// ---- samples ----

std::vector<Sample> perf_tensor(const SampleContext&) {
  return elementwise_perf_samples(2, arith::perf_dtypes());
}

std::vector<Sample> perf_scalar() {
  std::vector<Sample> out;
  for (DType t : arith::perf_dtypes())
    out.push_back(
        make("bandwidth [16777216] " + dtype_code_str(t), {T({int64_t{1} << 24}, t), F(0.25)}));
  return out;
}

std::vector<Sample> compare_tensor_samples(const SampleContext& ctx) {
  if (ctx.performance) return perf_tensor(ctx);
  std::vector<Sample> out = binary_samples(all_numeric_dtypes());
  // Two 'special' tensors hold the same special values at the same positions: NaN meets NaN,
  // inf meets inf.
  out.push_back(
      make("u8 with a Python -1 (wraps to 255)", {T_fill({48}, DType::UInt8, "special"), I(-1)}));
  out.push_back(make("u8 with 0-d i64 (cast to u8)",
                     {T_fill({48}, DType::UInt8, "special"), T_fill({}, DType::Int64, "special")}));
  out.push_back(make("i64 with a Python float", {T({6, 7}, DType::Int64), F(0.5)}));
  out.push_back(make("bool with a Python int 2", {T({6, 7}, DType::Bool), I(2)}));
  out.push_back(
      make("f16 with a Python float (rounded to f16)", {T({6, 7}, DType::Float16), F(0.1)}));
  out.push_back(make("i64 special with f32",
                     {T_fill({48}, DType::Int64, "special"), T({48}, DType::Float32)}));
  return out;
}

std::vector<Sample> compare_scalar_samples(const SampleContext& ctx) {
  if (ctx.performance) return perf_scalar();
  std::vector<Sample> out;
  const Literal others[] = {I(0), F(0.5), I(-1), B(true)};
  for (DType t : all_numeric_dtypes()) {
    for (const Literal& o : others)
      out.push_back(
          make(dtype_code_str(t) + " with " + cases::print_literal(o), {T({6, 7}, t), o}));
    out.push_back(make("0-d " + dtype_code_str(t), {T({}, t), I(1)}));
    if (is_floating(t)) {
      out.push_back(make("special values " + dtype_code_str(t) + " with inf",
                         {T_fill({64}, t, "special"), F(std::numeric_limits<double>::infinity())}));
      out.push_back(
          make("special values " + dtype_code_str(t) + " with nan",
               {T_fill({64}, t, "special"), F(std::numeric_limits<double>::quiet_NaN())}));
      out.push_back(make("special values " + dtype_code_str(t) + " with -0.0",
                         {T_fill({64}, t, "special"), F(-0.0)}));
    } else {
      out.push_back(
          make("special values " + dtype_code_str(t), {T_fill({48}, t, "special"), I(1)}));
    }
  }
  out.push_back(make("transposed", {T_transposed(6, 7, DType::Float32), F(0.0)}));
  out.push_back(make("expanded", {T({5, 8}, DType::Int32, {0, 1}), I(2)}));
  out.push_back(make("sliced", {T({6, 5}, DType::Float16, {10, 2}), F(-0.5)}));
  out.push_back(make("empty", {T({0, 3}, DType::Float32), F(1.0)}));
  out.push_back(make("u8 with 256 (wraps to 0)", {T({6, 7}, DType::UInt8), I(256)}));
  out.push_back(make("f16 with 0.1 (rounded to f16)", {T({6, 7}, DType::Float16), F(0.1)}));
  return out;
}

// In-place comparisons: self keeps its dtype; self must have the broadcast shape.
std::vector<Sample> compare_inplace_samples(const SampleContext& ctx, bool scalar) {
  if (ctx.performance) return scalar ? perf_scalar() : perf_tensor(ctx);
  std::vector<Sample> out;
  auto other = [&](DType t, const Shape& s) { return scalar ? F(0.25) : T(s, t); };
  for (DType t : all_numeric_dtypes()) {
    out.push_back(make(dtype_code_str(t) + " self", {T({6, 7}, t), other(t, {6, 7})}));
    out.push_back(make("0-d " + dtype_code_str(t) + " self", {T({}, t), scalar ? I(0) : T({}, t)}));
  }
  out.push_back(
      make("transposed self", {T_transposed(6, 7, DType::Float32), other(DType::Float32, {6, 7})}));
  out.push_back(
      make("special values", {T_fill({64}, DType::Float32, "special"),
                              scalar ? F(0.0) : T_fill({64}, DType::Float32, "special")}));
  out.push_back(make("empty", {T({0, 3}, DType::Float32), other(DType::Float32, {3})}));
  out.push_back(make("error: expanded self",
                     {T({5, 8}, DType::Float32, {0, 1}), other(DType::Float32, {8})}));
  out.push_back(make("i64 self with a float",
                     {T({6, 7}, DType::Int64), scalar ? F(1.5) : T({7}, DType::Float32)}));
  if (!scalar) {
    out.push_back(make("broadcast other", {T({6, 7}, DType::Int32), T({7}, DType::Int32)}));
    out.push_back(
        make("error: self would broadcast", {T({7}, DType::Float32), T({6, 7}, DType::Float32)}));
  }
  return out;
}

std::vector<Sample> logical_samples(const SampleContext& ctx) {
  if (ctx.performance) return perf_tensor(ctx);
  std::vector<Sample> out = binary_samples(all_numeric_dtypes());
  out.push_back(make("f32 with a Python int", {T({6, 7}, DType::Float32), I(0)}));
  out.push_back(
      make("uniform u8 (mostly zeros and ones)",
           {T_fill({6, 7}, DType::UInt8, "uniform"), T_fill({6, 7}, DType::UInt8, "uniform")}));
  return out;
}

std::vector<Sample> bitwise_tensor_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    for (DType t : {DType::Int32, DType::UInt8, DType::Bool})
      out.push_back(make("bandwidth " + dtype_code_str(t),
                         {T({int64_t{1} << 22}, t), T({int64_t{1} << 22}, t)}));
    return out;
  }
  out = binary_samples(integral_dtypes(true));
  for (DType t : integral_dtypes(false))
    out.push_back(make("special values " + dtype_code_str(t),
                       {T_fill({48}, t, "special"), T_fill({48}, t, "special")}));
  out.push_back(make("i8 with u8 -> i16", {T({6, 7}, DType::Int8), T({6, 7}, DType::UInt8)}));
  out.push_back(make("u8 with a Python -1 (wraps)", {T({6, 7}, DType::UInt8), I(-1)}));
  out.push_back(make("bool with a Python int -> i64", {T({6, 7}, DType::Bool), I(3)}));
  out.push_back(make("error: f32", {T({6, 7}, DType::Float32), T({6, 7}, DType::Float32)}));
  out.push_back(make("error: i32 with f16", {T({6, 7}, DType::Int32), T({6, 7}, DType::Float16)}));
  out.push_back(make("error: i64 with a Python float", {T({6, 7}, DType::Int64), F(1.0)}));
  return out;
}

std::vector<Sample> bitwise_scalar_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    out.push_back(make("bandwidth i32", {T({int64_t{1} << 24}, DType::Int32), I(0x5a5a)}));
    return out;
  }
  const Literal others[] = {I(6), I(-1), B(true)};
  for (DType t : integral_dtypes(true)) {
    for (const Literal& o : others)
      out.push_back(
          make(dtype_code_str(t) + " with " + cases::print_literal(o), {T({6, 7}, t), o}));
    out.push_back(make("0-d " + dtype_code_str(t), {T({}, t), I(5)}));
    out.push_back(
        make("special values " + dtype_code_str(t), {T_fill({48}, t, "special"), I(0x55)}));
  }
  out.push_back(make("transposed", {T_transposed(6, 7, DType::Int64), I(3)}));
  out.push_back(make("expanded", {T({5, 8}, DType::Int16, {0, 1}), I(3)}));
  out.push_back(make("empty", {T({0}, DType::Int32), I(3)}));
  out.push_back(make("i64 with 2^40", {T({6, 7}, DType::Int64), I(int64_t{1} << 40)}));
  out.push_back(make("error: f32 tensor", {T({6, 7}, DType::Float32), I(1)}));
  out.push_back(make("error: i32 with a float", {T({6, 7}, DType::Int32), F(1.0)}));
  return out;
}

OpDef cmp_op(std::string_view schema, MetaFn meta, RefFn ref, SampleFn samples,
             std::vector<DType> dtypes, bool inplace = false) {
  OpDef op = OpDef::from_schema(schema, "comparison");
  op.dtypes = std::move(dtypes);
  op.meta = std::move(meta);
  op.ref = std::move(ref);
  op.samples = std::move(samples);
  op.cost = arith::elementwise_cost(1, inplace);
  return op;
}

}  // namespace

void register_comparison_ops(OpRegistry& r) {
  const std::pair<const char*, Cmp> cmps[] = {{"eq", Cmp::Eq}, {"ne", Cmp::Ne}, {"lt", Cmp::Lt},
                                              {"le", Cmp::Le}, {"gt", Cmp::Gt}, {"ge", Cmp::Ge}};
  for (const auto& [name, c] : cmps) {
    const std::string n = name;
    const Cmp cmp = c;
    const SpecFn spec = compare_spec;
    const RefFn ref = structured_ref(
        spec_meta(spec), [cmp](const Args& a, const Values& out) { compare_impl(a, out, cmp); });
    r.add(cmp_op("aten::" + n + ".Scalar(Tensor self, Scalar other) -> Tensor", spec_meta(spec),
                 ref, compare_scalar_samples, all_numeric_dtypes()));
    r.add(cmp_op("aten::" + n + ".Tensor(Tensor self, Tensor other) -> Tensor", spec_meta(spec),
                 ref, compare_tensor_samples, all_numeric_dtypes()));
    r.add(cmp_op(
        "aten::" + n + "_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",
        inplace_spec_meta(spec), arith::inplace_of(ref),
        [](const SampleContext& ctx) { return compare_inplace_samples(ctx, true); },
        all_numeric_dtypes(), true));
    r.add(cmp_op(
        "aten::" + n + "_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
        inplace_spec_meta(spec), arith::inplace_of(ref),
        [](const SampleContext& ctx) { return compare_inplace_samples(ctx, false); },
        all_numeric_dtypes(), true));
  }
  const std::pair<const char*, Logic> logics[] = {
      {"and", Logic::And}, {"or", Logic::Or}, {"xor", Logic::Xor}};
  for (const auto& [name, l] : logics) {
    const std::string n = name;
    const Logic lg = l;
    const MetaFn lmeta = spec_meta(logical_spec);
    r.add(cmp_op(
        "aten::logical_" + n + "(Tensor self, Tensor other) -> Tensor", lmeta,
        structured_ref(lmeta, [lg](const Args& a, const Values& out) { logical_impl(a, out, lg); }),
        logical_samples, all_numeric_dtypes()));
    const MetaFn bmeta = spec_meta([lg](const Args& a) { return bitwise_spec(a, lg); });
    const RefFn bref =
        structured_ref(bmeta, [lg](const Args& a, const Values& out) { bitwise_impl(a, out, lg); });
    r.add(cmp_op("aten::bitwise_" + n + ".Scalar(Tensor self, Scalar other) -> Tensor", bmeta, bref,
                 bitwise_scalar_samples, integral_dtypes(true)));
    r.add(cmp_op("aten::bitwise_" + n + ".Tensor(Tensor self, Tensor other) -> Tensor", bmeta, bref,
                 bitwise_tensor_samples, integral_dtypes(true)));
  }
}

}  // namespace crucible
