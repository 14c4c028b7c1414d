// Activation functions (forward): silu, hardswish, hardsigmoid, hardtanh, leaky_relu, elu, mish,
// softplus, threshold, relu6 and gelu_, with their in-place overloads. References compute in
// double and round once to self's dtype (every activation keeps self's dtype).
//
// ATen's rules (PyTorch 2.x CPU; 1.13 lacks the f16 kernels, which 2.x has):
//  - silu, hardswish, hardsigmoid, leaky_relu, elu, mish, softplus, gelu: floating dtypes only.
//  - hardtanh (and relu6 = hardtanh(x, 0, 6)): every dtype but bool; on integral dtypes the
//    limits are truncated to integers first ("legacy behavior of boundaries not causing type
//    promotion"), and u8 raises when a truncated limit is negative. clamp: min(max(x, lo), hi),
//    so lo > hi gives hi; NaN propagates.
//  - threshold: x <= threshold ? value : x, every dtype but bool; the scalars are converted to
//    self's dtype (truncated toward zero for integers). NaN is kept.
//  - elu: x <= 0 ? (exp(x * input_scale) - 1) * alpha * scale : x * scale.
//  - softplus: x * beta > threshold ? x : log1p(exp(x * beta)) / beta.
//  - In place: a self with internal overlap (an expanded dim) raises, except for threshold_,
//    whose TensorIterator does not check memory overlap (each aliased element gets the same
//    value).
//  - ATen computes f16/bf16/f32 in float: hardswish's x * clamp(x + 3, 0, 6) overflows to inf
//    there for x near float's max before the division by 6; the reference follows.
#include <algorithm>
#include <cmath>
#include <functional>
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

namespace {

using namespace samples;  // NOLINT(google-build-using-namespace): the sample vocabulary

// A scalar as the kernel sees it: converted to the dtype (rounded for floating dtypes).
double as_scalar_of(double v, DType t) { return Tensor::scalar(v, t).get(0); }

// An activation's argument checks (dtype, parameters), run by its meta function and its
// reference alike before anything is computed.
using ActCheck = std::function<void(const Args&)>;

// The check of a floating-only activation: other dtypes raise ATen's dispatch error.
ActCheck floating_only(std::string_view kernel) {
  return [kernel](const Args& a) {
    const DType t = a.tensor("self").dtype();
    if (!is_floating(t)) not_implemented_for(kernel, t);
  };
}

// Applies `f` (in double) to a floating self (checked already), into `out`.
void floating_act(const Tensor& x, const Tensor& out, const std::function<double(double)>& f) {
  opsutil::map_unary(x, out, f);
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

void silu(const Args& a, const Tensor& out) {
  floating_act(a.tensor("self"), out, [](double x) { return x * sigmoid(x); });
}

void hardswish(const Args& a, const Tensor& out) {
  const Tensor& x = a.tensor("self");
  const DType t = x.dtype();
  floating_act(x, out, [t](double v) {
    return mathops::opmath(v * std::min(std::max(v + 3.0, 0.0), 6.0), t) / 6.0;
  });
}

void hardsigmoid(const Args& a, const Tensor& out) {
  floating_act(a.tensor("self"), out,
               [](double v) { return std::min(std::max(v + 3.0, 0.0), 6.0) / 6.0; });
}

double clamp(double v, double lo, double hi) {
  if (std::isnan(v)) return v;
  return std::min(std::max(v, lo), hi);
}

// hardtanh's checks: no bool, and no negative (truncated) limit on u8.
void check_hardtanh_of(const Tensor& x, const Scalar& min_val, const Scalar& max_val) {
  const DType t = x.dtype();
  CRUCIBLE_CHECK(t != DType::Bool, "Bool inputs not supported for hardtanh");
  if (is_integral(t, false)) {
    const int64_t lo = min_val.to_int(), hi = max_val.to_int();
    CRUCIBLE_CHECK(t != DType::UInt8 || (lo >= 0 && hi >= 0),
                   "cannot do hardtanh on an unsigned type with negative limits");
  }
}

void check_hardtanh(const Args& a) {
  check_hardtanh_of(a.tensor("self"), a.scalar("min_val"), a.scalar("max_val"));
}

void check_relu6(const Args& a) {
  check_hardtanh_of(a.tensor("self"), Scalar(int64_t{0}), Scalar(int64_t{6}));
}

void hardtanh_of(const Tensor& x, const Tensor& out, const Scalar& min_val, const Scalar& max_val) {
  const DType t = x.dtype();
  if (is_integral(t, false)) {
    const int64_t lo = min_val.to_int(), hi = max_val.to_int();
    // The limits are converted to self's dtype (wrapping), as clamp's kernel does.
    Tensor lim = Tensor::empty({2}, t);
    lim.set_int(0, lo);
    lim.set_int(1, hi);
    const int64_t l = lim.get_int(0), h = lim.get_int(1);
    opsutil::map_unary_int(x, out, [l, h](int64_t v) { return std::min(std::max(v, l), h); });
  } else {
    const double lo = as_scalar_of(min_val.to_double(), t);
    const double hi = as_scalar_of(max_val.to_double(), t);
    opsutil::map_unary(x, out, [lo, hi](double v) { return clamp(v, lo, hi); });
  }
}

void hardtanh(const Args& a, const Tensor& out) {
  hardtanh_of(a.tensor("self"), out, a.scalar("min_val"), a.scalar("max_val"));
}

void relu6(const Args& a, const Tensor& out) {
  hardtanh_of(a.tensor("self"), out, Scalar(int64_t{0}), Scalar(int64_t{6}));
}

void leaky_relu(const Args& a, const Tensor& out) {
  const double slope = a.real("negative_slope");
  floating_act(a.tensor("self"), out, [slope](double x) { return x > 0 ? x : x * slope; });
}

void elu(const Args& a, const Tensor& out) {
  const double alpha = a.real("alpha"), scale = a.real("scale");
  const double input_scale = a.real("input_scale");
  floating_act(a.tensor("self"), out, [=](double x) {
    return x <= 0 ? std::expm1(x * input_scale) * alpha * scale : x * scale;
  });
}

void mish(const Args& a, const Tensor& out) {
  floating_act(a.tensor("self"), out,
               [](double x) { return x * std::tanh(std::log1p(std::exp(x))); });
}

void softplus(const Args& a, const Tensor& out) {
  const double beta = a.real("beta"), threshold = a.real("threshold");
  floating_act(a.tensor("self"), out, [=](double x) {
    return x * beta > threshold ? x : std::log1p(std::exp(x * beta)) / beta;
  });
}

void check_threshold(const Args& a) {
  const DType t = a.tensor("self").dtype();
  if (t == DType::Bool) not_implemented_for("threshold_cpu", t);
}

void threshold(const Args& a, const Tensor& out) {
  const Tensor& x = a.tensor("self");
  const DType t = x.dtype();
  if (is_integral(t, false)) {
    Tensor s = Tensor::empty({2}, t);
    s.set_int(0, a.scalar("threshold").to_int());
    s.set_int(1, a.scalar("value").to_int());
    const int64_t th = s.get_int(0), value = s.get_int(1);
    opsutil::map_unary_int(x, out, [th, value](int64_t v) { return v <= th ? value : v; });
  } else {
    const double th = as_scalar_of(a.real("threshold"), t);
    const double value = as_scalar_of(a.real("value"), t);
    opsutil::map_unary(x, out, [th, value](double v) { return v <= th ? value : v; });
  }
}

// ATen's checks of gelu: the approximation's name, a floating self.
void check_gelu(const Args& a) {
  const std::string& approximate = a.str("approximate");
  CRUCIBLE_CHECK(approximate == "none" || approximate == "tanh",
                 "approximate argument must be either none or tanh.");
  floating_only("GeluKernelImpl")(a);
}

void gelu(const Args& a, const Tensor& out) {
  const Tensor& x = a.tensor("self");
  if (a.str("approximate") == "tanh") {
    const DType t = x.dtype();
    floating_act(x, out, [t](double v) {
      const double k = std::sqrt(2.0 / std::numbers::pi);
      const double cube = mathops::opmath(mathops::opmath(v * v, t) * v, t);
      return 0.5 * v * (1.0 + std::tanh(k * (v + 0.044715 * cube)));
    });
    return;
  }
  floating_act(x, out,
               [](double v) { return 0.5 * v * (1.0 + std::erf(v / std::numbers::sqrt2)); });
}

// An activation computed into `out` (self's shape and dtype; possibly self itself): the
// arguments were checked by the meta function.
using ActFn = void (*)(const Args&, const Tensor& out);

// The meta function of an activation (self's shape and dtype) and of its in-place overload
// (self itself, after the overlap check where ATen makes it).
MetaFn act_meta(ActCheck check) {
  return [check = std::move(check)](const Args& a) {
    check(a);
    return Values{meta::fresh_like(a.tensor("self"))};
  };
}

MetaFn inplace_meta(ActCheck check, bool overlap_raises) {
  return [check = std::move(check), overlap_raises](const Args& a) {
    check(a);  // dtype errors first, as ATen's dispatch raises them
    if (overlap_raises) mathops::check_no_internal_overlap(a.tensor("self"));
    return Values{a.value("self")};
  };
}

// The reference of `f` into the outputs its meta function describes: a fresh tensor, or self in
// place. Each element is read before it is written, so self is its own destination, unless
// several of its elements share memory (threshold_ allows that): then every one gets f of the
// value they shared, computed out of place first.
RefFn act_ref(MetaFn meta, ActFn f) {
  return structured_ref(std::move(meta), [f](const Args& a, const Values& outputs) {
    const Tensor& out = outputs.at(0).tensor();
    if (!mathops::has_internal_overlap(out)) return f(a, out);
    const Tensor fresh = Tensor::empty(out.shape(), out.dtype());
    f(a, fresh);
    out.copy_from(fresh);
  });
}

// Standard cases over `dtypes` with the given trailing arguments, plus error cases for the
// dtypes in `error_dtypes`.
std::vector<Sample> act_samples(const std::vector<DType>& dtypes,
                                const std::vector<DType>& error_dtypes,
                                const std::vector<Literal>& extra = {},
                                const std::vector<std::pair<std::string, Literal>>& kw = {}) {
  std::vector<Sample> out = unary_samples(dtypes, extra, kw);
  // A wide range of values: the kinks of hardswish / hardsigmoid at +-3 are reached.
  for (DType t : dtypes) {
    if (!is_floating(t)) continue;
    std::vector<Literal> args{T({64, 64}, t)};
    args.insert(args.end(), extra.begin(), extra.end());
    out.push_back(
        make("4096 elements (tails beyond +-3) " + dtype_code_str(t), std::move(args), kw));
  }
  for (DType t : error_dtypes) {
    std::vector<Literal> args{T({4, 5}, t)};
    args.insert(args.end(), extra.begin(), extra.end());
    out.push_back(make("error: unsupported dtype " + dtype_code_str(t), std::move(args), kw));
  }
  return out;
}

std::vector<DType> integral_and_bool() { return integral_dtypes(true); }
std::vector<DType> without_bool() {
  std::vector<DType> out;
  for (DType t : all_numeric_dtypes())
    if (t != DType::Bool) out.push_back(t);
  return out;
}

// Parameter variations: label suffix, positional trailing args, keyword args.
struct Variant {
  std::string label;
  std::vector<Literal> args;
  std::vector<std::pair<std::string, Literal>> kwargs;
};

std::vector<Sample> with_variants(std::vector<Sample> base, const std::vector<DType>& dtypes,
                                  const std::vector<Variant>& variants) {
  for (const Variant& v : variants) {
    for (DType t : dtypes) {
      std::vector<Literal> args{T({6, 11}, t)};
      args.insert(args.end(), v.args.begin(), v.args.end());
      base.push_back(make(v.label + " " + dtype_code_str(t), std::move(args), v.kwargs));
    }
    std::vector<Literal> args{T_fill({48}, DType::Float32, "special")};
    args.insert(args.end(), v.args.begin(), v.args.end());
    base.push_back(make(v.label + ", special values f32", std::move(args), v.kwargs));
  }
  return base;
}

struct ActSpec {
  std::string_view schema;
  std::string_view inplace_schema;  // empty: no in-place overload in this family
  ActCheck check;
  ActFn fn;  // computes (the arguments checked by `check`)
  double flops;
  std::vector<DType> dtypes;
  std::vector<DType> error_dtypes;
  std::vector<Variant> variants;
  bool inplace_overlap_raises = true;
  std::vector<Literal> base_args;                   // trailing arguments of the standard cases
  std::vector<DType> sample_dtypes;                 // dtypes of the standard cases (empty: dtypes)
  std::function<void(std::vector<Sample>&)> extra;  // op-specific cases
};

SampleFn spec_samples(const ActSpec& spec, bool inplace) {
  return [spec, inplace](const SampleContext& ctx) {
    if (ctx.performance) {
      std::vector<Sample> out;
      for (DType t : mathops::perf_dtypes())
        if (std::ranges::find(spec.dtypes, t) != spec.dtypes.end())
          for (Sample& s : elementwise_perf_samples(1, {t})) {
            s.call.args.insert(s.call.args.end(), spec.base_args.begin(), spec.base_args.end());
            out.push_back(std::move(s));
          }
      return out;
    }
    std::vector<Sample> out =
        act_samples(spec.sample_dtypes.empty() ? spec.dtypes : spec.sample_dtypes,
                    spec.error_dtypes, spec.base_args);
    if (spec.extra) spec.extra(out);
    out = with_variants(std::move(out), {DType::Float32, DType::BFloat16}, spec.variants);
    if (!inplace) return out;
    return mathops::mark_inplace_errors(
        std::move(out),
        [&spec](DType t) {
          return std::ranges::find(spec.error_dtypes, t) != spec.error_dtypes.end()
                     ? "unsupported dtype"
                     : nullptr;
        },
        spec.inplace_overlap_raises);
  };
}

void register_spec(OpRegistry& r, const ActSpec& spec) {
  OpDef op = OpDef::from_schema(spec.schema, "activation");
  op.dtypes = spec.dtypes;
  op.meta = act_meta(spec.check);
  op.ref = act_ref(op.meta, spec.fn);
  op.samples = spec_samples(spec, false);
  op.cost = mathops::unary_cost(spec.flops);
  r.add(std::move(op));
  if (spec.inplace_schema.empty()) return;
  OpDef ip = OpDef::from_schema(spec.inplace_schema, "activation");
  ip.dtypes = spec.dtypes;
  ip.meta = inplace_meta(spec.check, spec.inplace_overlap_raises);
  ip.ref = act_ref(ip.meta, spec.fn);
  ip.samples = spec_samples(spec, true);
  ip.cost = mathops::inplace_cost(spec.flops);
  r.add(std::move(ip));
}

void register_gelu_(OpRegistry& r) {
  OpDef op = OpDef::from_schema(
      "aten::gelu_(Tensor(a!) self, *, str approximate=\"none\") -> Tensor(a!)", "activation");
  op.dtypes = floating_dtypes();
  op.meta = inplace_meta(check_gelu, true);
  op.ref = act_ref(op.meta, gelu);
  op.samples = [](const SampleContext& ctx) {
    if (ctx.performance) return elementwise_perf_samples(1, mathops::perf_dtypes());
    std::vector<Sample> out = act_samples(floating_dtypes(), integral_and_bool());
    for (Sample& s : act_samples(floating_dtypes(), {}, {}, {{"approximate", S("tanh")}})) {
      s.label += ", approximate='tanh'";
      out.push_back(std::move(s));
    }
    out.push_back(make("approximate='none' given", {T({5, 9}, DType::Float32)},
                       {{"approximate", S("none")}}));
    out.push_back(make("error: unknown approximation", {T({4, 5}, DType::Float32)},
                       {{"approximate", S("erf")}}));
    return mathops::mark_inplace_errors(
        std::move(out), [](DType t) { return is_floating(t) ? nullptr : "unsupported dtype"; });
  };
  op.cost = mathops::inplace_cost(8);
  r.add(std::move(op));
}

}  // namespace

void register_activation_ops(OpRegistry& r) {
  const std::vector<DType> fl = floating_dtypes();
  const std::vector<DType> ints = integral_and_bool();
  register_spec(r, {.schema = "aten::silu(Tensor self) -> Tensor",
                    .inplace_schema = "aten::silu_(Tensor(a!) self) -> Tensor(a!)",
                    .check = floating_only("silu_cpu"),
                    .fn = silu,
                    .flops = 5,
                    .dtypes = fl,
                    .error_dtypes = ints,
                    .variants = {}});
  register_spec(r, {.schema = "aten::hardswish(Tensor self) -> Tensor",
                    .inplace_schema = "aten::hardswish_(Tensor(a!) self) -> Tensor(a!)",
                    .check = floating_only("hardswish_cpu"),
                    .fn = hardswish,
                    .flops = 5,
                    .dtypes = fl,
                    .error_dtypes = ints,
                    .variants = {}});
  register_spec(r, {.schema = "aten::hardsigmoid(Tensor self) -> Tensor",
                    .inplace_schema = "aten::hardsigmoid_(Tensor(a!) self) -> Tensor(a!)",
                    .check = floating_only("hardsigmoid_cpu"),
                    .fn = hardsigmoid,
                    .flops = 4,
                    .dtypes = fl,
                    .error_dtypes = ints,
                    .variants = {}});
  const std::vector<Variant> hardtanh_variants = {
      {"min=-0.5, max=0.5", {F(-0.5), F(0.5)}, {}},
      {"min=0, max=6 as keywords", {}, {{"min_val", I(0)}, {"max_val", I(6)}}},
      {"min > max (gives max)", {F(2.0), F(1.0)}, {}},
      {"max only, keyword", {}, {{"max_val", F(0.25)}}},
  };
  ActSpec ht{
      .schema = "aten::hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor",
      .inplace_schema =
          "aten::hardtanh_(Tensor(a!) self, Scalar min_val=-1, Scalar max_val=1) -> Tensor(a!)",
      .check = check_hardtanh,
      .fn = hardtanh,
      .flops = 2,
      .dtypes = without_bool(),
      .error_dtypes = {DType::Bool},
      .variants = hardtanh_variants};
  // On u8 the default limits (-1, 1) are negative: ATen raises; the u8 cases get (0, 6).
  ht.sample_dtypes = without_bool();
  std::erase(ht.sample_dtypes, DType::UInt8);
  ht.extra = [](std::vector<Sample>& out) {
    const DType u8 = DType::UInt8;
    out.push_back(make("error: u8 with the default (negative) limits", {T({4, 5}, u8)}));
    out.push_back(make("error: u8 with min=-2", {T({4, 5}, u8), I(-2), I(3)}));
    out.push_back(make("u8 with min=0, max=6", {T({6, 7}, u8), I(0), I(6)}));
    out.push_back(
        make("u8 with min=-0.5 (truncated to 0), max=4.5", {T({6, 7}, u8), F(-0.5), F(4.5)}));
    out.push_back(make("u8 transposed, min=2, max=9", {T_transposed(5, 8, u8), I(2), I(9)}));
    out.push_back(
        make("i64 with min=-0.5, max=2.5 (truncated)", {T({6, 7}, DType::Int64), F(-0.5), F(2.5)}));
    out.push_back(make("i8 with min=-3, max=4", {T({6, 7}, DType::Int8), I(-3), I(4)}));
    out.push_back(make("i32 extremes, min=-1000, max=1000",
                       {T_fill({48}, DType::Int32, "special"), I(-1000), I(1000)}));
    out.push_back(make("i16 min > max", {T({6, 7}, DType::Int16), I(3), I(-3)}));
  };
  register_spec(r, ht);
  register_spec(r,
                {.schema = "aten::leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor",
                 .inplace_schema =
                     "aten::leaky_relu_(Tensor(a!) self, Scalar negative_slope=0.01) -> Tensor(a!)",
                 .check = floating_only("leaky_relu_cpu"),
                 .fn = leaky_relu,
                 .flops = 2,
                 .dtypes = fl,
                 .error_dtypes = ints,
                 .variants = {{"negative_slope=0.2", {F(0.2)}, {}},
                              {"negative_slope=-0.5", {F(-0.5)}, {}},
                              {"negative_slope=0", {I(0)}, {}},
                              {"negative_slope=3 keyword", {}, {{"negative_slope", I(3)}}}}});
  register_spec(
      r,
      {.schema =
           "aten::elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor",
       .inplace_schema =
           "aten::elu_(Tensor(a!) self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> "
           "Tensor(a!)",
       .check = floating_only("elu_cpu"),
       .fn = elu,
       .flops = 4,
       .dtypes = fl,
       .error_dtypes = ints,
       .variants = {{"alpha=0.5", {F(0.5)}, {}},
                    {"alpha=1.5, scale=2, input_scale=0.5", {F(1.5), F(2.0), F(0.5)}, {}},
                    {"negative alpha", {F(-1.0)}, {}},
                    {"scale keyword", {}, {{"scale", F(1.0507009873554805)}}}}});
  register_spec(r, {.schema = "aten::mish(Tensor self) -> Tensor",
                    .inplace_schema = "aten::mish_(Tensor(a!) self) -> Tensor(a!)",
                    .check = floating_only("mish_cpu"),
                    .fn = mish,
                    .flops = 6,
                    .dtypes = fl,
                    .error_dtypes = ints,
                    .variants = {}});
  register_spec(
      r, {.schema = "aten::softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor",
          .check = floating_only("softplus_cpu"),
          .fn = softplus,
          .flops = 5,
          .dtypes = fl,
          .error_dtypes = ints,
          .variants = {{"beta=2, threshold=1 (both branches)", {F(2.0), F(1.0)}, {}},
                       {"beta=0.5", {F(0.5)}, {}},
                       {"threshold=0 keyword", {}, {{"threshold", I(0)}}},
                       {"beta=25", {I(25)}, {}}}});
  ActSpec th{.schema = "aten::threshold(Tensor self, Scalar threshold, Scalar value) -> Tensor",
             .inplace_schema =
                 "aten::threshold_(Tensor(a!) self, Scalar threshold, Scalar value) -> Tensor(a!)",
             .check = check_threshold,
             .fn = threshold,
             .flops = 1,
             .dtypes = without_bool(),
             .error_dtypes = {DType::Bool},
             .variants = {{"threshold=0, value=0", {I(0), I(0)}, {}},
                          {"threshold=-0.5, value=7", {F(-0.5), F(7.0)}, {}},
                          {"keywords", {}, {{"threshold", F(0.25)}, {"value", F(-1.5)}}}},
             .inplace_overlap_raises = false,
             .base_args = {F(0.5), F(2.0)}};
  th.extra = [](std::vector<Sample>& out) {
    out.push_back(make("i64, threshold=1.5 (truncated to 1), value=-2.5 (to -2)",
                       {T({6, 7}, DType::Int64), F(1.5), F(-2.5)}));
    out.push_back(make("i8 extremes, threshold=0, value=100",
                       {T_fill({48}, DType::Int8, "special"), I(0), I(100)}));
    out.push_back(make("u8, threshold=9, value=0", {T({6, 7}, DType::UInt8), I(9), I(0)}));
    out.push_back(make("i32 transposed, threshold=-3, value=-9",
                       {T_transposed(5, 8, DType::Int32), I(-3), I(-9)}));
    out.push_back(
        make("f16, threshold=0.1, value=inf",
             {T({6, 7}, DType::Float16), F(0.1), F(std::numeric_limits<double>::infinity())}));
  };
  register_spec(r, th);
  register_spec(r, {.schema = "aten::relu6(Tensor self) -> Tensor",
                    .check = check_relu6,
                    .fn = relu6,
                    .flops = 2,
                    .dtypes = without_bool(),
                    .error_dtypes = {DType::Bool},
                    .variants = {}});
  register_gelu_(r);
}

}  // namespace crucible
