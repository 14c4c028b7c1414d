// Op family: creation, part 2: fill (functional and in place, Scalar and 0-d Tensor values),
// arange, copy (the functional copy_) and lift_fresh_copy.
//
// ATen's rules followed:
// - fill: the value goes through c10's checked conversion into self's dtype (fill of an i8
//   tensor with 300 raises); fill.Tensor takes the item() of a 0-d tensor ("fill_ only supports
//   0-dimension value tensor ..."); the functional fill is empty_like(self).fill_(value), so its
//   result keeps self's strides when self is dense. fill_ writes through any strides, stride 0
//   included (ATen's fill does not check for internal overlap).
// - arange: with no dtype, all-integral (or bool) start/end/step give i64, anything else the
//   default f32. step 0 raises "step must be nonzero", a sign mismatch "upper bound and larger
//   bound inconsistent with step sign", a non-finite bound "unsupported range". The scalars are
//   converted to the accumulation type first (int64 for every integral dtype: start=0.5 with
//   dtype=i64 starts at 0, step=0.3 with an integral dtype is a zero step). The length is
//   ceil((end - start) / step) computed in double from the original scalars, except for i64
//   where ATen computes it from the truncated integers: (end - start + step - sign(step)) /
//   step. Values are start + i * step, computed in int64 and wrapped (integral dtypes) or in
//   double and rounded once (floating dtypes; ATen uses f32 arithmetic for f16/bf16, which the
//   f16/bf16 tolerances cover). bool is not supported.
// - copy(self, src): clone(self) (self's dtype, strides of a preserve-format copy) with src
//   broadcast into it and converted to self's dtype.
// - lift_fresh_copy: clone (preserve format).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/ops/destination.h"
#include "crucible/ops/rules/copy.h"
#include "ops/creation_internal.h"
#include "ops/families.h"
#include "ops/meta_fn.h"
#include "ops/samples.h"

namespace crucible {

namespace {

using namespace samples;  // NOLINT(google-build-using-namespace): the sample vocabulary

// fill.Tensor's value must be a 0-d tensor.
void check_value_tensor(const Tensor& t) {
  CRUCIBLE_CHECK(t.dim() == 0,
                 fmt::format("fill_ only supports 0-dimension value tensor but got tensor with {} "
                             "dimensions.",
                             t.dim()));
}

}  // namespace

namespace creation {

Scalar fill_value(const Value& v) {
  if (v.is_scalar()) return v.to_scalar();
  const Tensor& t = v.tensor();
  check_value_tensor(t);
  return item_of(t);
}

}  // namespace creation

namespace {

// The checks of fill.Tensor that do not read the value: a 0-d tensor's item is converted into
// self's dtype by the computation (value_checks); a Python number is checked here.
void check_fill_tensor(const Args& a) {
  const Value& v = a.value("value");
  if (v.is_scalar())
    creation::check_convertible(v.to_scalar(), a.tensor("self").dtype());
  else
    check_value_tensor(v.tensor());
}

Value like_copy_meta(const Tensor& self) {
  return meta::fresh_strided(self.shape(), creation::like_strides(self, MemoryFormat::Preserve),
                             self.dtype());
}

Values fill_meta(const Args& a) {
  creation::check_convertible(a.scalar("value"), a.tensor("self").dtype());
  return {like_copy_meta(a.tensor("self"))};
}
Values fill_tensor_meta(const Args& a) {
  check_fill_tensor(a);
  return {like_copy_meta(a.tensor("self"))};
}
Values fill_inplace_meta(const Args& a) {
  creation::check_convertible(a.scalar("value"), a.tensor("self").dtype());
  return {a.value("self")};
}
Values fill_tensor_inplace_meta(const Args& a) {
  check_fill_tensor(a);
  return {a.value("self")};
}

// fill and fill_ into their output (a copy of self's layout, or self): the value a Scalar, or a
// 0-d tensor's item (read, and checked, here: a value check).
void fill_impl(const Args& a, const Values& outputs) {
  creation::fill_with(outputs.at(0).tensor(), a.scalar("value"));
}

void fill_tensor_impl(const Args& a, const Values& outputs) {
  creation::fill_with(outputs.at(0).tensor(), creation::fill_value(a.value("value")));
}

}  // namespace

// ---- arange ----------------------------------------------------------------------------------

namespace creation {

double arange_double(const Scalar& s) {
  return s.is_bool() ? (s.to_bool() ? 1.0 : 0.0)
                     : (s.is_integral() ? static_cast<double>(s.to_int()) : s.to_double());
}

int64_t arange_int(const Scalar& s) {
  if (!s.is_floating()) return s.is_bool() ? int64_t{s.to_bool()} : s.to_int();
  const double v = s.to_double();
  CRUCIBLE_CHECK(std::isfinite(v) && std::fabs(v) < 9.2233720368547758e18,
                 "value cannot be converted to type int64_t without overflow");
  return static_cast<int64_t>(v);
}

ArangeSpec arange_spec(const Scalar& start, const Scalar& end, const Scalar& step,
                       const Value& dtype_value) {
  auto integral = [](const Scalar& s) { return s.is_integral() || s.is_bool(); };
  const bool all_integral = integral(start) && integral(end) && integral(step);
  const DType dtype = dtype_value.is_none() ? (all_integral ? DType::Int64 : DType::Float32)
                                            : dtype_value.to_dtype();
  if (dtype == DType::Bool) not_implemented_for("arange_cpu", DType::Bool);
  int64_t n = 0;
  if (is_floating(dtype)) {
    const double s = arange_double(start), e = arange_double(end), st = arange_double(step);
    const double size_d = std::ceil((e - s) / st);
    CRUCIBLE_CHECK(st > 0 || st < 0, "step must be nonzero");
    CRUCIBLE_CHECK(std::isfinite(s) && std::isfinite(e),
                   fmt::format("unsupported range: {} -> {}", s, e));
    CRUCIBLE_CHECK((st > 0 && e >= s) || (st < 0 && e <= s),
                   "upper bound and larger bound inconsistent with step sign");
    CRUCIBLE_CHECK(size_d >= 0 && size_d <= 9.2233720368547758e18,
                   "invalid size, possible overflow?");
    n = static_cast<int64_t>(size_d);
    if (n > (int64_t{1} << 40)) unsupported("arange: more than 2^40 elements");
    return {dtype, n};
  }
  // Integral dtypes accumulate in int64.
  const int64_t s = arange_int(start), e = arange_int(end), st = arange_int(step);
  CRUCIBLE_CHECK(st != 0, "step must be nonzero");
  CRUCIBLE_CHECK((st > 0 && e >= s) || (st < 0 && e <= s),
                 "upper bound and larger bound inconsistent with step sign");
  if (dtype == DType::Int64) {
    const int64_t sign = st > 0 ? 1 : -1;
    n = (e - s + st - sign) / st;
  } else {
    n = static_cast<int64_t>(
        std::ceil((arange_double(end) - arange_double(start)) / arange_double(step)));
  }
  CRUCIBLE_CHECK(n >= 0, "invalid size, possible overflow?");
  if (n > (int64_t{1} << 40)) unsupported("arange: more than 2^40 elements");
  return {dtype, n};
}

}  // namespace creation

namespace {

Tensor arange_impl(const Scalar& start, const Scalar& end, const Scalar& step,
                   const Value& dtype_value) {
  const auto [dtype, n] = creation::arange_spec(start, end, step, dtype_value);
  Tensor out = Tensor::empty({n}, dtype);
  if (is_floating(dtype)) {
    const double s = creation::arange_double(start), st = creation::arange_double(step);
    for (int64_t i = 0; i < n; ++i) out.set(i, s + st * static_cast<double>(i));
    return out;
  }
  const int64_t s = creation::arange_int(start), st = creation::arange_int(step);
  for (int64_t i = 0; i < n; ++i) {
    // Wrapping int64 arithmetic, as ATen's kernel (start + step * idx) does.
    const uint64_t v =
        static_cast<uint64_t>(s) + static_cast<uint64_t>(st) * static_cast<uint64_t>(i);
    out.set_int(i, static_cast<int64_t>(v));
  }
  return out;
}

// The (start, end, step, dtype) of an arange overload's arguments, its layout checked:
// arange(end, *, dtype, ...), arange.start(start, end, *, dtype, ...),
// arange.start_step(start, end, step=1, *, dtype, ...).
struct ArangeArgs {
  Scalar start, end, step;
  Value dtype;
};

ArangeArgs arange_args(const Args& a) {
  creation::check_layout(a, a.index("layout"));
  const Scalar start = a.has("start") ? a.scalar("start") : Scalar(int64_t{0});
  const Scalar end = a.scalar("end");
  const Scalar step = a.has("step") ? a.scalar("step") : Scalar(int64_t{1});
  return {start, end, step, a.value("dtype")};
}

RefFn arange_ref() {
  return [](const Args& a) {
    const ArangeArgs r = arange_args(a);
    return Values{Value(arange_impl(r.start, r.end, r.step, r.dtype))};
  };
}
MetaFn arange_meta() {
  return [](const Args& a) {
    const ArangeArgs r = arange_args(a);
    const creation::ArangeSpec spec = creation::arange_spec(r.start, r.end, r.step, r.dtype);
    return Values{meta::fresh({spec.n}, spec.dtype)};
  };
}

// ---- copy, lift_fresh_copy -------------------------------------------------------------------

// copy: src must broadcast to self's shape.
Values copy_meta(const Args& a) {
  copy_ops::check_broadcasts_to(a.tensor("self"), a.tensor("src"));
  return {like_copy_meta(a.tensor("self"))};
}

void copy_impl(const Args& a, const Values& outputs) {
  outputs.at(0).tensor().copy_from(a.tensor("src"));
}

void lift_fresh_copy_impl(const Args& a, const Values& outputs) {
  outputs.at(0).tensor().copy_from(a.tensor("self"));
}

// ---- samples ---------------------------------------------------------------------------------

using Kwargs = std::vector<std::pair<std::string, Literal>>;

// Layouts of `self` for fill and copy.
std::vector<std::pair<std::string, Literal>> layouts(DType t) {
  return {{"contiguous", T({7, 13}, t)},
          {"0-d", T({}, t)},
          {"empty", T({3, 0, 2}, t)},
          {"transposed", T_transposed(9, 12, t)},
          {"sliced with a step", T({6, 5}, t, {10, 2})},
          {"expanded (stride 0)", T({5, 8}, t, {0, 1})},
          {"permuted 3-d", T({4, 3, 5}, t, {1, 20, 4})},
          {"channels-last 4-d", T({2, 3, 4, 5}, t, {60, 1, 15, 3})}};
}

std::vector<Sample> fill_perf(bool tensor_value) {
  std::vector<Sample> out;
  for (DType t : {DType::Float32, DType::Float16, DType::BFloat16})
    out.push_back(make("bandwidth [4096, 4096] " + dtype_code_str(t),
                       {T({4096, 4096}, t), tensor_value ? T({}, t) : F(1.5)}));
  return out;
}

// fill with a Scalar value: every dtype x value kinds, layouts, conversions and overflow errors.
std::vector<Sample> fill_scalar_samples(const SampleContext& ctx) {
  if (ctx.performance) return fill_perf(false);
  std::vector<Sample> out;
  for (DType t : all_numeric_dtypes()) {
    out.push_back(make("int value " + dtype_code_str(t), {T({6, 7}, t), I(3)}));
    out.push_back(make((t == DType::UInt8 ? "error: " : "") + std::string("float value -2.75 ") +
                           dtype_code_str(t),
                       {T({6, 7}, t), F(-2.75)}));
    out.push_back(make("bool value " + dtype_code_str(t), {T({5}, t), B(true)}));
  }
  for (auto& [label, lit] : layouts(DType::Float32))
    out.push_back(make(label + " f32", {lit, F(0.25)}));
  for (auto& [label, lit] : layouts(DType::Int64))
    out.push_back(make(label + " i64", {lit, I(-7)}));
  out.push_back(
      make("inf into f16", {T({4}, DType::Float16), F(std::numeric_limits<double>::infinity())}));
  out.push_back(
      make("nan into f32", {T({4}, DType::Float32), F(std::numeric_limits<double>::quiet_NaN())}));
  out.push_back(make("-0.0 into f64", {T({4}, DType::Float64), F(-0.0)}));
  out.push_back(make("-1 wraps into u8", {T({4}, DType::UInt8), I(-1)}));
  out.push_back(make("-255 wraps into u8", {T({4}, DType::UInt8), I(-255)}));
  out.push_back(make("65504 into f16", {T({4}, DType::Float16), F(65504.0)}));
  out.push_back(make("7.9 truncates into i32", {T({4}, DType::Int32), F(7.9)}));
  out.push_back(make("-7.9 truncates into i8", {T({4}, DType::Int8), F(-7.9)}));
  out.push_back(make("0.5 into bool", {T({4}, DType::Bool), F(0.5)}));
  out.push_back(make("large int into i64", {T({4}, DType::Int64), I(int64_t{1} << 62)}));
  out.push_back(make("large int into f32", {T({4}, DType::Float32), I((int64_t{1} << 40) + 1)}));
  out.push_back(make("error: 300 into i8", {T({4}, DType::Int8), I(300)}));
  out.push_back(make("error: -256 into u8", {T({4}, DType::UInt8), I(-256)}));
  out.push_back(make("error: 256 into u8", {T({4}, DType::UInt8), I(256)}));
  out.push_back(make("error: 40000 into i16", {T({4}, DType::Int16), I(40000)}));
  out.push_back(make("error: 1e6 into f16", {T({4}, DType::Float16), F(1e6)}));
  out.push_back(make("error: 100000 into f16", {T({4}, DType::Float16), I(100000)}));
  out.push_back(make("error: 1e39 into bf16", {T({4}, DType::BFloat16), F(1e39)}));
  out.push_back(make("error: nan into i32",
                     {T({4}, DType::Int32), F(std::numeric_limits<double>::quiet_NaN())}));
  out.push_back(make("error: inf into i64",
                     {T({4}, DType::Int64), F(std::numeric_limits<double>::infinity())}));
  out.push_back(make("error: 3e9 into i32", {T({4}, DType::Int32), F(3e9)}));
  return out;
}

// fill with a 0-d tensor value: value dtypes and self dtypes crossed, layouts, errors.
std::vector<Sample> fill_tensor_samples(const SampleContext& ctx) {
  if (ctx.performance) return fill_perf(true);
  std::vector<Sample> out;
  for (DType t : all_numeric_dtypes()) {
    // A same-dtype value, and a value of another kind (positive: a negative float into u8 would
    // raise, depending on the drawn value).
    out.push_back(make("same dtype " + dtype_code_str(t), {T({6, 7}, t), T({}, t)}));
    out.push_back(make("f32 value into " + dtype_code_str(t),
                       {T({6, 7}, t), T_fill({}, DType::Float32, "positive")}));
    out.push_back(make("i64 value into " + dtype_code_str(t), {T({5}, t), T({}, DType::Int64)}));
  }
  out.push_back(make("bool value into f16", {T({5}, DType::Float16), T({}, DType::Bool)}));
  out.push_back(make("f64 value into bf16", {T({5}, DType::BFloat16), T({}, DType::Float64)}));
  for (auto& [label, lit] : layouts(DType::Float32))
    out.push_back(make(label + " f32", {lit, T({}, DType::Float16)}));
  out.push_back(make("as traced: sliced i64", {T({2}, DType::Int64, {128}), T({}, DType::Int64)}));
  out.push_back(make("special value into f32",
                     {T({9}, DType::Float32), T_fill({}, DType::Float32, "special")}));
  out.push_back(make("wrapped number value", {T({3, 4}, DType::Float32), F(2.5)}));
  out.push_back(make("error: 1-d value", {T({3, 4}, DType::Float32), T({1}, DType::Float32)}));
  out.push_back(make("error: 2-d value", {T({3, 4}, DType::Float32), T({2, 2}, DType::Float32)}));
  return out;
}

std::vector<Sample> arange_perf(std::vector<Literal> (*args)(Literal)) {
  std::vector<Sample> out;
  for (DType t : {DType::Float32, DType::Int64, DType::Float16})
    out.push_back(
        make("2^22 elements " + dtype_code_str(t), args(I(int64_t{1} << 22)), {{"dtype", DT(t)}}));
  return out;
}

std::vector<Sample> arange_end_samples(const SampleContext& ctx) {
  if (ctx.performance)
    return arange_perf([](Literal e) { return std::vector<Literal>{std::move(e)}; });
  std::vector<Sample> out;
  out.push_back(make("int end gives i64", {I(10)}));
  out.push_back(make("float end gives f32", {F(5.5)}));
  out.push_back(make("bool end gives i64", {B(true)}));
  out.push_back(make("end 0: empty", {I(0)}));
  out.push_back(make("end 1", {I(1)}));
  out.push_back(make("float end 2.0 (not included)", {F(2.0)}));
  for (DType t : all_numeric_dtypes()) {
    const bool err = t == DType::Bool;
    out.push_back(make((err ? "error: " : std::string()) + "dtype " + dtype_code_str(t), {I(17)},
                       {{"dtype", DT(t)}}));
  }
  out.push_back(make("300 into u8 wraps", {I(300)}, {{"dtype", DT(DType::UInt8)}}));
  out.push_back(make("float end 4.5 with dtype i64", {F(4.5)}, {{"dtype", DT(DType::Int64)}}));
  out.push_back(make("float end 4.5 with dtype i32", {F(4.5)}, {{"dtype", DT(DType::Int32)}}));
  out.push_back(make("as traced (device 'cuda')", {I(64)},
                     {{"dtype", DT(DType::Int64)},
                      {"layout", Literal::symbol("torch.strided")},
                      {"device", S("cuda")},
                      {"pin_memory", B(false)}}));
  out.push_back(make("error: negative end", {I(-3)}));
  out.push_back(make("error: inf end", {F(std::numeric_limits<double>::infinity())}));
  out.push_back(make("error: nan end", {F(std::numeric_limits<double>::quiet_NaN())}));
  return out;
}

std::vector<Sample> arange_start_samples(const SampleContext& ctx) {
  if (ctx.performance)
    return arange_perf([](Literal e) { return std::vector<Literal>{I(0), std::move(e)}; });
  std::vector<Sample> out;
  out.push_back(make("ints give i64", {I(-3), I(7)}));
  out.push_back(make("float end gives f32", {I(2), F(7.5)}));
  out.push_back(make("float start gives f32", {F(-1.5), I(3)}));
  out.push_back(make("start == end: empty", {I(5), I(5)}));
  out.push_back(make("large i64 values", {I((int64_t{1} << 53) + 1), I((int64_t{1} << 53) + 6)}));
  for (DType t : {DType::UInt8, DType::Int8, DType::Int16, DType::Int32, DType::Int64,
                  DType::Float16, DType::BFloat16, DType::Float32, DType::Float64})
    out.push_back(make("dtype " + dtype_code_str(t), {I(-4), I(9)}, {{"dtype", DT(t)}}));
  out.push_back(make("float start -1.5 with dtype i64 (truncated)", {F(-1.5), I(2)},
                     {{"dtype", DT(DType::Int64)}}));
  out.push_back(make("negative range into u8 wraps", {I(-5), I(5)}, {{"dtype", DT(DType::UInt8)}}));
  out.push_back(make("error: end < start", {I(5), I(1)}));
  out.push_back(make("error: dtype bool", {I(0), I(2)}, {{"dtype", DT(DType::Bool)}}));
  out.push_back(make("error: -inf start", {F(-std::numeric_limits<double>::infinity()), I(2)}));
  return out;
}

std::vector<Sample> arange_step_samples(const SampleContext& ctx) {
  if (ctx.performance)
    return arange_perf([](Literal e) { return std::vector<Literal>{I(0), std::move(e), I(1)}; });
  std::vector<Sample> out;
  auto add = [&](std::string label, double s, double e, double st, bool ints,
                 std::optional<DType> t = std::nullopt) {
    std::vector<Literal> args =
        ints ? std::vector<Literal>{I(static_cast<int64_t>(s)), I(static_cast<int64_t>(e)),
                                    I(static_cast<int64_t>(st))}
             : std::vector<Literal>{F(s), F(e), F(st)};
    Kwargs kw;
    if (t) kw.push_back({"dtype", DT(*t)});
    out.push_back(make(std::move(label), std::move(args), std::move(kw)));
  };
  add("ints, step 3", 0, 10, 3, true);
  add("ints, negative step", 10, 0, -3, true);
  add("ints, empty", 0, 0, 1, true);
  add("floats, step 0.3", 0, 1, 0.3, false);
  add("floats, negative step", 1, 0, -0.3, false);
  add("floats, step 0.7 from -3", -3, 3, 0.7, false);
  add("floats, step 0.1 (rounding of the length)", 0, 1, 0.1, false);
  add("f16, step 0.1", 0, 1, 0.1, false, DType::Float16);
  add("bf16, step 0.1", 0, 1, 0.1, false, DType::BFloat16);
  add("f64, step 0.1", 0, 1, 0.1, false, DType::Float64);
  add("f16 from ints", -8, 8, 3, true, DType::Float16);
  add("i8, step 2", 0, 10, 2, true, DType::Int8);
  add("i16, negative step", 5, -20, -4, true, DType::Int16);
  // i64 computes the length from the truncated scalars, the other integral dtypes from the
  // original doubles: [0, 3, 6, 9] against [0, 3, 6].
  add("i64, float step 3.5 truncated (length from ints)", 0, 10, 3.5, false, DType::Int64);
  add("i32, float step 3.5 truncated (length from doubles)", 0, 10, 3.5, false, DType::Int32);
  add("i64, float bounds truncated", 0.5, 10.5, 3, false, DType::Int64);
  add("i64, negative float step", 10, 0.5, -3, false, DType::Int64);
  add("u8, wraps", -5, 5, 1, true, DType::UInt8);
  out.push_back(make("mixed int start, float step", {I(1), I(4), F(0.5)}));
  out.push_back(make("step by default", {I(-2), I(3)}));
  out.push_back(make("bool step", {I(0), I(3), B(true)}));
  add("error: step 0", 0, 10, 0, true);
  add("error: float step 0.0", 0, 1, 0, false);
  add("error: step 0.3 truncates to 0 for i64", 0, 10, 0.3, false, DType::Int64);
  add("error: step 0.3 truncates to 0 for i32", 0, 10, 0.3, false, DType::Int32);
  add("error: positive step, end < start", 1, 0, 1, true);
  add("error: negative step, end > start", 1, 10, -1, true);
  add("error: inf end", 0, std::numeric_limits<double>::infinity(), 1, false);
  add("error: dtype bool", 0, 2, 1, true, DType::Bool);
  return out;
}

std::vector<Sample> copy_samples(const SampleContext& ctx) {
  if (ctx.performance) {
    std::vector<Sample> out;
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16})
      out.push_back(make("bandwidth [4096, 4096] " + dtype_code_str(t),
                         {T({4096, 4096}, t), T({4096, 4096}, t)}));
    return out;
  }
  std::vector<Sample> out;
  for (DType t : all_numeric_dtypes())
    out.push_back(make("same dtype " + dtype_code_str(t), {T({7, 13}, t), T({7, 13}, t)}));
  const std::pair<DType, DType> conversions[] = {
      {DType::Float16, DType::Float32}, {DType::Float32, DType::BFloat16},
      {DType::Int32, DType::Float32},   {DType::Float64, DType::Int64},
      {DType::Bool, DType::Float16},    {DType::UInt8, DType::Int64},
      {DType::Int8, DType::Int32},      {DType::Float32, DType::Bool},
  };
  for (auto [to, from] : conversions)
    out.push_back(make(dtype_code_str(from) + " into " + dtype_code_str(to),
                       {T({6, 7}, to), T({6, 7}, from)}));
  for (auto& [label, lit] : layouts(DType::Float32)) {
    out.push_back(make("self " + label, {lit, T(lit.tensor.shape, DType::Float16)}));
    out.push_back(make("src " + label, {T(lit.tensor.shape, DType::Float32), lit}));
  }
  out.push_back(make("broadcast src row", {T({6, 7}, DType::Float32), T({7}, DType::Float16)}));
  out.push_back(make("broadcast 0-d src", {T({4, 5}, DType::Int32), T({}, DType::Int64)}));
  out.push_back(make("broadcast into transposed self",
                     {T_transposed(5, 4, DType::Float64), T({5, 1}, DType::Float32)}));
  out.push_back(make("special values f32 into f16",
                     {T({64}, DType::Float16), T_fill({64}, DType::Float32, "special")}));
  out.push_back(make("special values f16 into f64",
                     {T({64}, DType::Float64), T_fill({64}, DType::Float16, "special")}));
  out.push_back(
      make("non_blocking given", {T({6, 7}, DType::Float32), T({6, 7}, DType::BFloat16), B(true)}));
  out.push_back(
      make("error: src does not broadcast", {T({7}, DType::Float32), T({6, 7}, DType::Float32)}));
  out.push_back(
      make("error: incompatible shapes", {T({3}, DType::Float32), T({4}, DType::Float32)}));
  return out;
}

std::vector<Sample> lift_fresh_copy_samples(const SampleContext& ctx) {
  if (ctx.performance) {
    std::vector<Sample> out;
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16})
      out.push_back(make("bandwidth [4096, 4096] " + dtype_code_str(t), {T({4096, 4096}, t)}));
    return out;
  }
  std::vector<Sample> out;
  for (DType t : all_numeric_dtypes())
    out.push_back(make("contiguous " + dtype_code_str(t), {T({64}, t)}));
  for (auto& [label, lit] : layouts(DType::Float32)) out.push_back(make(label, {lit}));
  for (DType t : floating_dtypes())
    out.push_back(make("special values " + dtype_code_str(t), {T_fill({64}, t, "special")}));
  return out;
}

// Costs: bytes read + written.
Cost fill_cost(const Values&, const Values& out) {
  return {0, creation::tensor_bytes(out.at(0).tensor())};
}
Cost arange_cost(const Values&, const Values& out) {
  const Tensor& t = out.at(0).tensor();
  return {static_cast<double>(t.numel()), creation::tensor_bytes(t)};
}
Cost copy_cost(const Args& a, const Values& out) {
  // copy reads src; lift_fresh_copy (no src) reads self.
  const Tensor& src =
      a.has("src") && a.value("src").is_tensor() ? a.tensor("src") : a.tensor("self");
  return {0, creation::real_bytes(src) + creation::tensor_bytes(out.at(0).tensor())};
}

OpDef op_def(std::string_view schema, MetaFn meta, RefFn ref, SampleFn samples, CostFn cost,
             std::vector<DType> dtypes) {
  OpDef op = OpDef::from_schema(schema, "creation");
  op.dtypes = std::move(dtypes);
  op.meta = std::move(meta);
  op.ref = std::move(ref);
  op.samples = std::move(samples);
  op.cost = std::move(cost);
  return op;
}

std::vector<DType> arange_dtypes() {
  return {DType::UInt8,   DType::Int8,     DType::Int16,   DType::Int32,  DType::Int64,
          DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
}

}  // namespace

void register_creation_fill_ops(OpRegistry& r) {
  const auto all = all_numeric_dtypes();
  r.add(op_def("aten::fill.Scalar(Tensor self, Scalar value) -> Tensor", fill_meta,
               structured_ref(fill_meta, fill_impl), fill_scalar_samples, fill_cost, all));
  OpDef fill_tensor = op_def("aten::fill.Tensor(Tensor self, Tensor value) -> Tensor",
                             fill_tensor_meta, structured_ref(fill_tensor_meta, fill_tensor_impl),
                             fill_tensor_samples, fill_cost, all);
  fill_tensor.value_checks = true;  // the value tensor's item must convert into self's dtype
  r.add(std::move(fill_tensor));
  r.add(op_def("aten::fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)", fill_inplace_meta,
               structured_ref(fill_inplace_meta, fill_impl), fill_scalar_samples, fill_cost, all));
  OpDef fill_tensor_ =
      op_def("aten::fill_.Tensor(Tensor(a!) self, Tensor value) -> Tensor(a!)",
             fill_tensor_inplace_meta, structured_ref(fill_tensor_inplace_meta, fill_tensor_impl),
             fill_tensor_samples, fill_cost, all);
  fill_tensor_.value_checks = true;
  r.add(std::move(fill_tensor_));
  const std::string kw =
      "*, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? "
      "pin_memory=None) -> Tensor";
  r.add(op_def("aten::arange(Scalar end, " + kw, arange_meta(), arange_ref(), arange_end_samples,
               arange_cost, arange_dtypes()));
  r.add(op_def("aten::arange.start(Scalar start, Scalar end, " + kw, arange_meta(), arange_ref(),
               arange_start_samples, arange_cost, arange_dtypes()));
  r.add(op_def("aten::arange.start_step(Scalar start, Scalar end, Scalar step=1, " + kw,
               arange_meta(), arange_ref(), arange_step_samples, arange_cost, arange_dtypes()));
  r.add(op_def("aten::copy(Tensor self, Tensor src, bool non_blocking=False) -> Tensor", copy_meta,
               structured_ref(copy_meta, copy_impl), copy_samples, copy_cost, all));
  const MetaFn lift_meta = [](const Args& a) { return Values{like_copy_meta(a.tensor("self"))}; };
  r.add(op_def("aten::lift_fresh_copy(Tensor self) -> Tensor", lift_meta,
               structured_ref(lift_meta, lift_fresh_copy_impl), lift_fresh_copy_samples, copy_cost,
               all));
}

}  // namespace crucible
