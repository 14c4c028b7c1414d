// The cpu backend's pointwise ops: unary math, binary arithmetic, comparisons, selection,
// through the shared elementwise engine. Activations are in pointwise_activation.cpp.
#include <algorithm>
#include <map>

#include "backends/cpu/pointwise_complex.h"
#include "backends/cpu/pointwise_engine.h"
#include "backends/cpu/pointwise_ops.h"
#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"
#include "crucible/ops/rules/arithmetic.h"
#include "ops/util.h"

namespace crucible::cpu {

namespace {

std::map<std::string, PwSpec>& specs() {
  static std::map<std::string, PwSpec> m;
  return m;
}

// Whether any element of t is zero (every bit of it), for integer division and modulo.
bool any_zero(const Tensor& t) {
  const Tensor c = t.contiguous();
  const auto* p = static_cast<const unsigned char*>(c.data_ptr());
  const auto n = static_cast<size_t>(c.numel()), is = c.itemsize();
  auto scan = [&]<typename U>(U) {
    const U* q = reinterpret_cast<const U*>(p);
    bool zero = false;
    for (size_t i = 0; i < n; ++i) zero |= q[i] == U(0);
    return zero;
  };
  switch (is) {
    case 1:
      return scan(uint8_t{});
    case 2:
      return scan(uint16_t{});
    case 4:
      return scan(uint32_t{});
    default:
      return scan(uint64_t{});
  }
}

void run_pointwise(const OpDef& op, const Args& a, const Values& outputs) {
  pw_execute_into(op, a, outputs, specs().at(op.name));
}

void layout_pointwise(const OpDef& op, const Args& a, Values& out) {
  pw_layout(a, out, specs().at(op.name));
}

}  // namespace

void pw_layout(const Args& a, Values& specs, const PwSpec& s) {
  if (s.mode != PwMode::Functional || !specs.at(0).is_tensor()) return;
  const Tensor& m = specs[0].tensor();
  std::vector<Tensor> ins;
  for (int i : s.operands) {
    const Value& v = a.values().at(static_cast<size_t>(i));
    if (v.is_tensor()) ins.push_back(v.tensor());
  }
  specs[0] = Value(Tensor::meta_strided(m.shape(), pw_output_strides(m.shape(), ins), m.dtype()));
}

void pw_execute_into(const OpDef& op, const Args& a, const Values& outputs, const PwSpec& s) {
  // The catalog's meta function has raised ATen's argument errors and allocated (or named) the
  // output: a fresh tensor of the result's shape, strides and dtype, self, or the out= argument.
  const Values& args = a.values();
  const Tensor& out = outputs.at(0).tensor();
  std::vector<Tensor> ins;
  for (int i : s.operands) ins.push_back(arith::operand(args.at(static_cast<size_t>(i))));
  // The dtype the loop computes in: the result dtype (the meta output's, for a functional op),
  // which an in-place or out= op then converts into its destination's dtype.
  DType rt;
  if (s.result == PwResult::Self) {
    rt = ins.at(0).dtype();
  } else if (s.mode == PwMode::Functional && s.result != PwResult::Bool) {
    rt = out.dtype();
  } else {
    std::vector<Value> pv;
    for (int i : s.promote.empty() ? s.operands : s.promote)
      if (!args.at(static_cast<size_t>(i)).is_none()) pv.push_back(args.at(static_cast<size_t>(i)));
    rt = opsutil::result_type(pv);
    if (s.result == PwResult::Float) rt = opsutil::to_float_dtype(rt);
  }
  if (is_complex(rt)) {
    pw_execute_complex_into(op, a, out, s, rt);
    return;
  }
  arith::require_modelled(rt, op.name);
  const Compute compute = compute_for(rt);
  // Operands are cast to the common dtype first (ATen's TensorIterator): a wider 0-d operand
  // wraps (u8 compared with 256 compares with 0); `cast_scalars`: floating ones too (a base of
  // 0.1 raised to an f16 tensor is f16(0.1)).
  const bool integral = is_integral_compute(compute);
  for (Tensor& in : ins)
    if (in.dtype() != rt && in.numel() == 1 &&
        ((integral && dtype_category(in.dtype()) != DTypeCategory::Bool) ||
         (s.cast_scalars && in.dim() == 0)))
      in = in.to(rt);
  if (integral && s.divisor >= 0)
    CRUCIBLE_CHECK(!any_zero(ins.at(static_cast<size_t>(s.divisor))), "ZeroDivisionError");
  PwParams p;
  PwOp pw = s.op;
  if (s.params) s.params(a, rt, p, pw);
  if (!pw_has_loop(pw, compute)) not_implemented_for(op_base_name(op.name) + "_cpu", rt);
  pw_run(pw, ins, out, compute, p);
}

namespace {

// Parameter helpers.
void alpha_param(const Args& a, DType rt, PwParams& p, bool negate) {
  // Its dtype against the result's was checked by the meta function.
  const Scalar al = a.given("alpha") ? a.scalar("alpha") : Scalar(int64_t{1});
  p.s[0] = negate ? -al.to_double() : al.to_double();
  if (rt == DType::Bool) {
    p.i[0] = al.to_double() != 0 ? 1 : 0;
    return;
  }
  const int64_t ai = al.is_floating() ? 0 : al.to_int();
  p.i[0] = negate ? static_cast<int64_t>(0 - static_cast<uint64_t>(ai)) : ai;
}

}  // namespace

void clamp_bounds(const Args& a, DType rt, PwParams& p, PwOp&) {
  clamp_bounds_of(a.value("min"), a.value("max"), rt, p);
}

void clamp_bounds_of(const Value& lo, const Value& hi, DType rt, PwParams& p) {
  const bool has_lo = !lo.is_none(), has_hi = !hi.is_none();
  if (is_floating(rt)) {
    // Bounds are converted to the result dtype first.
    p.s[0] = has_lo ? arith::scalar_as_double(lo.to_scalar(), rt) : -INFINITY;
    p.s[1] = has_hi ? arith::scalar_as_double(hi.to_scalar(), rt) : INFINITY;
  } else {
    const int bits = 8 * static_cast<int>(itemsize(rt));
    const bool sign = rt != DType::UInt8 && rt != DType::Bool;
    const int64_t hi_max =
        sign ? static_cast<int64_t>((uint64_t{1} << (bits - 1)) - 1) : (int64_t{1} << bits) - 1;
    const int64_t lo_min = sign ? -hi_max - 1 : 0;
    p.i[0] = has_lo ? arith::scalar_as_int(lo.to_scalar(), rt) : lo_min;
    p.i[1] = has_hi ? arith::scalar_as_int(hi.to_scalar(), rt) : hi_max;
  }
}

std::vector<DType> pw_float_dtypes() {
  return {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
}
std::vector<DType> pw_int_dtypes() {
  return {DType::UInt8, DType::Int8, DType::Int16, DType::Int32, DType::Int64};
}
std::vector<DType> pw_all_dtypes() {
  std::vector<DType> v{DType::Bool};
  for (DType t : pw_int_dtypes()) v.push_back(t);
  for (DType t : pw_float_dtypes()) v.push_back(t);
  return v;
}

void add_pointwise(KernelTable& t, const std::string& name, PwSpec spec) {
  KernelEntry e;
  e.run_into = &run_pointwise;
  e.layout = &layout_pointwise;
  e.dtypes = spec.dtypes;
  if (pw_has_complex(name)) e.dtypes.insert(e.dtypes.end(), {DType::Complex64, DType::Complex128});
  specs()[name] = std::move(spec);
  t.add(name, std::move(e));
}

void register_pointwise_kernels(KernelTable& t) {
  const auto F = pw_float_dtypes();
  const auto all = pw_all_dtypes();
  auto ints_floats = pw_int_dtypes();
  for (DType d : F) ints_floats.push_back(d);
  using R = PwResult;
  using M = PwMode;
  auto spec = [](PwOp op, std::vector<int> operands, R r, std::vector<DType> dt,
                 M m = M::Functional, PwParamFn fn = nullptr) {
    PwSpec s;
    s.op = op;
    s.operands = std::move(operands);
    s.result = r;
    s.dtypes = std::move(dt);
    s.mode = m;
    s.params = fn;
    return s;
  };

  // Float math (integral and bool inputs give f32) and rounding (integers: unchanged, bool
  // raises): name, loop.
  const std::pair<const char*, PwOp> fmath[] = {{"exp", PwOp::Exp},
                                                {"log", PwOp::Log},
                                                {"sqrt", PwOp::Sqrt},
                                                {"rsqrt", PwOp::Rsqrt},
                                                {"sigmoid", PwOp::Sigmoid},
                                                {"tanh", PwOp::Tanh},
                                                {"reciprocal", PwOp::Reciprocal},
                                                {"floor", PwOp::Floor},
                                                {"ceil", PwOp::Ceil},
                                                {"trunc", PwOp::Trunc},
                                                {"round", PwOp::Round},
                                                {"erf", PwOp::Erf}};
  auto rounding = [](PwOp op) {
    return op == PwOp::Floor || op == PwOp::Ceil || op == PwOp::Trunc || op == PwOp::Round;
  };
  for (auto [n, op] : fmath) {
    const std::string base = std::string("aten.") + n;
    const R r = rounding(op) ? R::Self : R::Float;
    for (const std::string& name : {base + ".default", base + "_.default", base + ".out"}) {
      if (!OpRegistry::catalog().find(name) || (name == base + "_.default" && base == "aten.erf"))
        continue;
      const M m = name == base + ".default" ? M::Functional
                  : name == base + ".out"   ? M::Out
                                            : M::Inplace;
      PwSpec s = spec(op, {0}, r, all, m);
      add_pointwise(t, name, std::move(s));
    }
  }
  add_pointwise(t, "aten.neg.default", spec(PwOp::Neg, {0}, R::Self, ints_floats));
  add_pointwise(t, "aten.neg_.default", spec(PwOp::Neg, {0}, R::Self, ints_floats, M::Inplace));
  add_pointwise(t, "aten.abs.default", spec(PwOp::Abs, {0}, R::Self, ints_floats));
  add_pointwise(t, "aten.abs_.default", spec(PwOp::Abs, {0}, R::Self, ints_floats, M::Inplace));
  for (auto [n, op] :
       {std::pair{"aten.neg.out", PwOp::Neg}, std::pair{"aten.abs.out", PwOp::Abs}}) {
    PwSpec s = spec(op, {0}, R::Self, ints_floats, M::Out);
    add_pointwise(t, n, std::move(s));
  }
  add_pointwise(t, "aten.isnan.default", spec(PwOp::IsNan, {0}, R::Bool, all));
  add_pointwise(t, "aten.isinf.default", spec(PwOp::IsInf, {0}, R::Bool, all));
  {
    PwSpec s = spec(PwOp::PowScalar, {0}, R::Promote, all, M::Functional,
                    [](const Args& a, DType rt, PwParams& p, PwOp& op) {
                      const Scalar es = a.scalar("exponent");
                      const double e = es.to_double();
                      p.s[0] = e;
                      p.i[0] = is_floating(rt) ? 0 : es.to_int();
                      op = e == 2      ? PwOp::Square
                           : e == 3    ? PwOp::Cube
                           : e == 1    ? PwOp::Identity
                           : e == 0.5  ? PwOp::PowHalf
                           : e == -0.5 ? PwOp::PowMinusHalf
                           : e == -1   ? PwOp::Reciprocal
                                       : PwOp::PowScalar;
                    });
    s.promote = {0, 1};
    add_pointwise(t, "aten.pow.Tensor_Scalar", std::move(s));
  }

  // add / sub / rsub / mul / div.
  auto add_fn = [](const Args& a, DType rt, PwParams& p, PwOp&) { alpha_param(a, rt, p, false); };
  auto sub_fn = [](const Args& a, DType rt, PwParams& p, PwOp&) { alpha_param(a, rt, p, true); };
  add_pointwise(t, "aten.add.Tensor",
                spec(PwOp::Add, {0, 1}, R::Promote, all, M::Functional, add_fn));
  add_pointwise(t, "aten.add.Scalar",
                spec(PwOp::Add, {0, 1}, R::Promote, all, M::Functional, add_fn));
  add_pointwise(t, "aten.add_.Tensor",
                spec(PwOp::Add, {0, 1}, R::Promote, all, M::Inplace, add_fn));
  add_pointwise(t, "aten.add.out", spec(PwOp::Add, {0, 1}, R::Promote, all, M::Out, add_fn));
  add_pointwise(t, "aten.sub.Tensor",
                spec(PwOp::Add, {0, 1}, R::Promote, all, M::Functional, sub_fn));
  add_pointwise(t, "aten.sub.Scalar",
                spec(PwOp::Add, {0, 1}, R::Promote, all, M::Functional, sub_fn));
  add_pointwise(t, "aten.sub_.Tensor",
                spec(PwOp::Add, {0, 1}, R::Promote, all, M::Inplace, sub_fn));
  add_pointwise(t, "aten.sub.out", spec(PwOp::Add, {0, 1}, R::Promote, all, M::Out, sub_fn));
  add_pointwise(t, "aten.rsub.Tensor",
                spec(PwOp::Add, {1, 0}, R::Promote, all, M::Functional, sub_fn));
  add_pointwise(t, "aten.rsub.Scalar",
                spec(PwOp::Add, {1, 0}, R::Promote, all, M::Functional, sub_fn));
  add_pointwise(t, "aten.mul.Tensor", spec(PwOp::Mul, {0, 1}, R::Promote, all));
  add_pointwise(t, "aten.mul.Scalar", spec(PwOp::Mul, {0, 1}, R::Promote, all));
  add_pointwise(t, "aten.mul_.Tensor", spec(PwOp::Mul, {0, 1}, R::Promote, all, M::Inplace));
  add_pointwise(t, "aten.mul_.Scalar", spec(PwOp::Mul, {0, 1}, R::Promote, all, M::Inplace));
  add_pointwise(t, "aten.mul.out", spec(PwOp::Mul, {0, 1}, R::Promote, all, M::Out));
  add_pointwise(t, "aten.div.Tensor", spec(PwOp::Div, {0, 1}, R::Float, all));
  add_pointwise(t, "aten.div.Scalar", spec(PwOp::Div, {0, 1}, R::Float, all));
  add_pointwise(t, "aten.div_.Tensor", spec(PwOp::Div, {0, 1}, R::Float, all, M::Inplace));
  add_pointwise(t, "aten.div.out", spec(PwOp::Div, {0, 1}, R::Float, all, M::Out));
  auto mode_fn = [](const Args& a, DType, PwParams&, PwOp& op) {
    if (!a.given("rounding_mode")) return;
    // "trunc" or "floor": the meta function refused any other.
    op = a.str("rounding_mode") == "trunc" ? PwOp::DivTrunc : PwOp::DivFloor;
  };
  for (const char* n : {"aten.div.Tensor_mode", "aten.div.Scalar_mode"}) {
    PwSpec s = spec(PwOp::Div, {0, 1}, R::Promote, all, M::Functional, mode_fn);
    s.divisor = 1;
    add_pointwise(t, n, std::move(s));
  }
  add_pointwise(t, "aten.maximum.default", spec(PwOp::Maximum, {0, 1}, R::Promote, all));
  add_pointwise(t, "aten.minimum.default", spec(PwOp::Minimum, {0, 1}, R::Promote, all));

  // Comparisons and logical/bitwise ops.
  const std::pair<const char*, PwOp> cmp[] = {{"eq", PwOp::Eq}, {"ne", PwOp::Ne}, {"lt", PwOp::Lt},
                                              {"le", PwOp::Le}, {"gt", PwOp::Gt}, {"ge", PwOp::Ge}};
  // Both operands are cast to the promoted dtype first: an f16 tensor compares with f16(0.1).
  for (auto [n, op] : cmp)
    for (const char* ov : {".Tensor", ".Scalar"}) {
      PwSpec s = spec(op, {0, 1}, R::Bool, all);
      s.cast_scalars = true;
      add_pointwise(t, std::string("aten.") + n + ov, s);
      // In place: 0 or 1 written in self's dtype.
      s.mode = M::Inplace;
      add_pointwise(t, std::string("aten.") + n + "_" + ov, std::move(s));
    }
  add_pointwise(t, "aten.logical_and.default", spec(PwOp::LogicalAnd, {0, 1}, R::Bool, all));
  add_pointwise(t, "aten.logical_or.default", spec(PwOp::LogicalOr, {0, 1}, R::Bool, all));
  std::vector<DType> bits{DType::Bool};
  for (DType d : pw_int_dtypes()) bits.push_back(d);
  const std::pair<const char*, PwOp> bw[] = {
      {"bitwise_and", PwOp::BitAnd}, {"bitwise_or", PwOp::BitOr}, {"bitwise_xor", PwOp::BitXor}};
  for (auto [n, op] : bw)
    for (const char* ov : {".Tensor", ".Scalar"})
      add_pointwise(t, std::string("aten.") + n + ov, spec(op, {0, 1}, R::Promote, bits));

  // Selection.
  {
    PwSpec s = spec(PwOp::Where, {0, 1, 2}, R::Promote, all);
    s.promote = {1, 2};
    add_pointwise(t, "aten.where.self", std::move(s));
  }
  for (const char* n : {"aten.masked_fill.Scalar", "aten.masked_fill.Tensor",
                        "aten.masked_fill_.Scalar", "aten.masked_fill_.Tensor"}) {
    const bool inplace = std::string(n).find("_.") != std::string::npos;
    // A Tensor value is converted into self's dtype as a Scalar one is (a check on its data).
    auto value_fits = [](const Args& a, DType, PwParams&, PwOp&) {
      const Value& v = a.value("value");
      if (v.is_tensor())
        arith::check_scalar_fits(arith::item_of(v.tensor()), a.tensor("self").dtype());
    };
    PwSpec s = spec(PwOp::Where, {1, 2, 0}, R::Self, all, inplace ? M::Inplace : M::Functional,
                    value_fits);
    s.result = R::Promote;
    s.promote = {0};
    add_pointwise(t, n, std::move(s));
  }
  for (const char* n : {"aten.clamp.default", "aten.clamp_.default"}) {
    const bool inplace = std::string(n) == "aten.clamp_.default";
    PwSpec s = spec(PwOp::Hardtanh, {0}, R::Promote, all, inplace ? M::Inplace : M::Functional,
                    &clamp_bounds);
    s.promote = {0, 1, 2};
    add_pointwise(t, n, std::move(s));
  }
  auto value_fn = [](const Args& a, DType rt, PwParams& p, PwOp&) {
    const Scalar v = a.given("value") ? a.scalar("value") : Scalar(int64_t{1});
    p.s[0] = v.to_double();
    // Integral results take the value truncated toward zero.
    if (!is_floating(rt))
      p.i[0] =
          arith::wrap_to(v.is_floating() ? static_cast<int64_t>(v.to_double()) : v.to_int(), rt);
  };
  {
    PwSpec s = spec(PwOp::Addcmul, {0, 1, 2}, R::Promote, all, M::Functional, value_fn);
    add_pointwise(t, "aten.addcmul.default", std::move(s));
  }
  {
    // Integral and bool operands promote with a floating one (all integral raises).
    PwSpec s = spec(PwOp::Addcdiv, {0, 1, 2}, R::Promote, all, M::Functional, value_fn);
    add_pointwise(t, "aten.addcdiv.default", std::move(s));
  }
  add_pointwise(t, "aten.lerp.Scalar", spec(PwOp::Lerp, {0, 1, 2}, R::Self, F));
  add_pointwise(t, "aten.lerp.Tensor", spec(PwOp::Lerp, {0, 1, 2}, R::Self, F));

  register_pointwise_activation_kernels(t);
  register_pointwise_math_kernels(t);
  register_copy_kernels(t);
}

}  // namespace crucible::cpu
