// The cpu backend's pointwise math beyond pointwise.cpp: trigonometric, hyperbolic, exponential
// and logarithmic functions (f32 through glibc's vector math), sign/sgn, logical and bitwise not,
// logical_xor, round.decimals, atan2, pow with a tensor exponent, floor_divide, fmod, remainder,
// and clamp with Tensor bounds, clamp_min, clamp_max. Argument errors and result dtypes come from
// the catalog's meta functions; integer division and modulo check their divisor for zeros.
#include <cmath>
#include <string>

#include "backends/cpu/pointwise_ops.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"
#include "crucible/ops/variants.h"

namespace crucible::cpu {

namespace {

PwSpec make_spec(PwOp op, std::vector<int> operands, PwResult r, PwMode m = PwMode::Functional,
                 PwParamFn fn = nullptr) {
  PwSpec s;
  s.op = op;
  s.operands = std::move(operands);
  s.result = r;
  s.mode = m;
  s.params = fn;
  s.dtypes = pw_all_dtypes();
  return s;
}

// clamp.Tensor: self with the bounds given; one bound is maximum/minimum (bool included), both
// the ternary clamp.
void clamp_tensor(const OpDef& op, const Args& a, const Values& outputs) {
  static const PwSpec both = make_spec(PwOp::Clamp, {0, 1, 2}, PwResult::Promote);
  static const PwSpec lo = make_spec(PwOp::Maximum, {0, 1}, PwResult::Promote);
  static const PwSpec hi = make_spec(PwOp::Minimum, {0, 2}, PwResult::Promote);
  static const PwSpec none = make_spec(PwOp::Identity, {0}, PwResult::Promote);
  const bool has_lo = a.given("min");
  const bool has_hi = a.given("max");
  // Neither bound: the meta function has raised.
  pw_execute_into(op, a, outputs, has_lo && has_hi ? both : has_lo ? lo : has_hi ? hi : none);
}

void clamp_tensor_layout(const OpDef&, const Args& a, Values& specs) {
  static const PwSpec all = make_spec(PwOp::Clamp, {0, 1, 2}, PwResult::Promote);
  pw_layout(a, specs, all);
}

}  // namespace

void register_pointwise_math_kernels(KernelTable& t) {
  using R = PwResult;
  const std::pair<const char*, PwOp> fmath[] = {
      {"sin", PwOp::Sin},     {"cos", PwOp::Cos},     {"tan", PwOp::Tan},
      {"asin", PwOp::Asin},   {"acos", PwOp::Acos},   {"atan", PwOp::Atan},
      {"sinh", PwOp::Sinh},   {"cosh", PwOp::Cosh},   {"asinh", PwOp::Asinh},
      {"acosh", PwOp::Acosh}, {"atanh", PwOp::Atanh}, {"expm1", PwOp::Expm1},
      {"log2", PwOp::Log2},   {"log10", PwOp::Log10}, {"log1p", PwOp::Log1p}};
  for (auto [n, op] : fmath) {
    const std::string base = std::string("aten.") + n;
    add_pointwise(t, base + ".default", make_spec(op, {0}, R::Float));
    // In-place and out= overloads the catalog writes by hand (the others are derived).
    auto by_hand = [](const std::string& name) {
      return OpRegistry::catalog().find(name) && !derived_variant(name);
    };
    if (by_hand(base + "_.default"))
      add_pointwise(t, base + "_.default", make_spec(op, {0}, R::Float, PwMode::Inplace));
    if (by_hand(base + ".out"))
      add_pointwise(t, base + ".out", make_spec(op, {0}, R::Float, PwMode::Out));
  }

  add_pointwise(t, "aten.sign.default", make_spec(PwOp::Sign, {0}, R::Self));
  add_pointwise(t, "aten.sgn.default", make_spec(PwOp::Sign, {0}, R::Self));
  add_pointwise(t, "aten.logical_not.default", make_spec(PwOp::LogicalNot, {0}, R::Bool));
  add_pointwise(t, "aten.bitwise_not.default",
                make_spec(PwOp::BitNot, {0}, R::Self, PwMode::Functional,
                          [](const Args&, DType rt, PwParams&, PwOp& op) {
                            if (rt == DType::Bool) op = PwOp::LogicalNot;
                          }));
  add_pointwise(t, "aten.round.decimals",
                make_spec(PwOp::RoundDecimals, {0}, R::Self, PwMode::Functional,
                          [](const Args& a, DType, PwParams& p, PwOp&) {
                            const int64_t d = a.integer("decimals");
                            p.s[0] = std::pow(10.0, static_cast<double>(d < 0 ? -d : d));
                            p.s[1] = d < 0 ? 1.0 : 0.0;
                          }));

  add_pointwise(t, "aten.logical_xor.default", make_spec(PwOp::LogicalXor, {0, 1}, R::Bool));
  add_pointwise(t, "aten.atan2.default", make_spec(PwOp::Atan2, {0, 1}, R::Float));
  add_pointwise(t, "aten.atan2.out", make_spec(PwOp::Atan2, {0, 1}, R::Float, PwMode::Out));
  add_pointwise(t, "aten.pow.Tensor_Tensor", make_spec(PwOp::Pow, {0, 1}, R::Promote));
  {
    // The base is cast to the result dtype first.
    PwSpec s = make_spec(PwOp::Pow, {0, 1}, R::Promote);
    s.cast_scalars = true;
    add_pointwise(t, "aten.pow.Scalar", std::move(s));
  }
  const std::pair<const char*, PwOp> division[] = {{"aten.floor_divide.default", PwOp::DivFloor},
                                                   {"aten.fmod.Tensor", PwOp::Fmod},
                                                   {"aten.fmod.Scalar", PwOp::Fmod},
                                                   {"aten.remainder.Tensor", PwOp::Remainder},
                                                   {"aten.remainder.Scalar", PwOp::Remainder}};
  for (auto [n, op] : division) {
    PwSpec s = make_spec(op, {0, 1}, R::Promote);
    s.cast_scalars = true;
    s.divisor = 1;
    add_pointwise(t, n, std::move(s));
  }

  KernelEntry clamp;
  clamp.run_into = &clamp_tensor;
  clamp.layout = &clamp_tensor_layout;
  clamp.dtypes = pw_all_dtypes();
  t.add("aten.clamp.Tensor", std::move(clamp));
  add_pointwise(t, "aten.clamp_min.default",
                make_spec(PwOp::Hardtanh, {0}, R::Promote, PwMode::Functional,
                          [](const Args& a, DType rt, PwParams& p, PwOp&) {
                            clamp_bounds_of(a.value("min"), Value(), rt, p);
                          }));
  add_pointwise(t, "aten.clamp_max.default",
                make_spec(PwOp::Hardtanh, {0}, R::Promote, PwMode::Functional,
                          [](const Args& a, DType rt, PwParams& p, PwOp&) {
                            clamp_bounds_of(Value(), a.value("max"), rt, p);
                          }));
}

}  // namespace crucible::cpu
