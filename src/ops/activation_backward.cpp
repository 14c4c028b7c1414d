// Activation backward ops: gelu_backward, sigmoid_backward, tanh_backward, threshold_backward,
// silu_backward, hardswish_backward, hardsigmoid_backward, hardtanh_backward,
// leaky_relu_backward, elu_backward, softplus_backward, mish_backward.
//
// ATen builds each as a binary TensorIterator op over (grad_output, self-or-output): the two
// tensors broadcast and are promoted to their common dtype (cast to it before computing), and the
// result has that dtype. Floating dtypes only, except threshold_backward (every dtype but bool).
// References compute in double and round once; where ATen's float opmath overflows an
// intermediate (x^2 in gelu's tanh form, out^2 in tanh_backward, exp(x * beta) in softplus) the
// reference takes the overflowed value too, so the inf/NaN pattern matches ATen's.
// Formulas (ATen 2.x CPU kernels):
//  gelu (none):   g * (Phi(x) + x * phi(x))
//  gelu (tanh):   k = sqrt(2/pi), u = k (x + 0.044715 x^3), t = tanh(u):
//                 g * (0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 * 0.044715 x^2))
//  sigmoid:       g * (1 - y) * y            tanh: g * (1 - y^2)
//  threshold:     x <= threshold ? 0 : g     silu: g * s * (1 + x (1 - s)), s = sigmoid(x)
//  hardswish:     x < -3 ? 0 : x >= 3 ? g : g * (x / 3 + 0.5)  (ATen's vectorized kernel; its
//                 scalar tail loop tests x <= 3, which differs at x == 3 and for NaN)
//  hardsigmoid:   -3 < x < 3 ? g / 6 : 0     hardtanh: x <= min || x >= max ? 0 : g
//  leaky_relu:    x > 0 ? g : g * slope (self_is_result with slope < 0 raises)
//  elu:           (the vectorized kernel's test x > 0: NaN gives NaN)
//                 is_result: y <= 0 ? g * input_scale * (y + alpha * scale) : g * scale
//                 else:      x <= 0 ? g * input_scale * alpha * scale * exp(x * input_scale)
//                                   : g * scale          (is_result with alpha < 0 raises)
//  softplus:      x * beta > threshold ? g : g * z / (z + 1), z = exp(x * beta)
//  mish:          t = tanh(softplus(x)): g * (t + x * sigmoid(x) * (1 - t^2))
#include <algorithm>
#include <cmath>
#include <functional>
#include <numbers>
#include <span>
#include <string>

#include "crucible/compare/compare.h"
#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "ops/families.h"
#include "ops/meta_fn.h"
#include "ops/pointwise_math_internal.h"
#include "ops/util.h"

namespace crucible {

namespace {

using namespace samples;  // NOLINT(google-build-using-namespace): the sample vocabulary
using mathops::opmath;

// What a backward op returns: the broadcast shape of grad and x, their common dtype.
struct Spec {
  Shape shape;
  DType dtype;
};

// An op's argument checks, returning its output's spec: run by its meta function and by its
// reference before computing.
using SpecFn = std::function<Spec(const Args&)>;
// The computation, given the checked spec.
using ComputeFn = Tensor (*)(const Args&, const Spec&);

// The spec of (grad = grad_output, x = the argument named `x_name`) for a floating-only kernel:
// other common dtypes raise ATen's dispatch error.
Spec floating_spec(const Args& a, std::string_view kernel, std::string_view x_name = "self") {
  const Tensor& grad = a.tensor("grad_output");
  const Tensor& x = a.tensor(x_name);
  const DType ct = opsutil::result_type(grad, x);
  if (!is_floating(ct)) not_implemented_for(kernel, ct);
  return {broadcast_shapes(grad.shape(), x.shape()), ct};
}

SpecFn floating_only(std::string_view kernel, std::string_view x_name = "self") {
  return [kernel, x_name](const Args& a) { return floating_spec(a, kernel, x_name); };
}

// f(grad, x, dtype) over the broadcast of grad and x, in their common dtype (the spec `s`).
Tensor backward_map(const Spec& s, const Tensor& grad, const Tensor& x,
                    const std::function<double(double, double, DType)>& f) {
  const DType ct = s.dtype;
  Tensor out = Tensor::empty(s.shape, ct);
  opsutil::map_binary(mathops::as_dtype(grad, ct), mathops::as_dtype(x, ct), out,
                      [&f, ct](double g, double v) { return f(g, v, ct); });
  return out;
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

std::string gelu_approximate(const Args& a) { return a.str("approximate"); }

Spec gelu_backward_spec(const Args& a) {
  const std::string approximate = gelu_approximate(a);
  CRUCIBLE_CHECK(approximate == "none" || approximate == "tanh",
                 "approximate argument must be either none or tanh.");
  return floating_spec(a, "GeluBackwardKernelImpl");
}

Tensor gelu_backward(const Args& a, const Spec& s) {
  if (gelu_approximate(a) == "tanh") {
    return backward_map(
        s, a.tensor("grad_output"), a.tensor("self"), [](double g, double x, DType t) {
          const double k = std::sqrt(2.0 / std::numbers::pi), kappa = 0.044715;
          const double x2 = opmath(x * x, t);
          const double inner = k * (x + kappa * opmath(x2 * x, t));
          const double th = std::tanh(inner);
          const double left = 0.5 * x, right = 1.0 + th;
          const double left_derivative = 0.5 * right;
          const double right_derivative = left * (1.0 - th * th) * k * (1.0 + 3.0 * kappa * x2);
          return g * (left_derivative + right_derivative);
        });
  }
  return backward_map(s, a.tensor("grad_output"), a.tensor("self"), [](double g, double x, DType) {
    const double cdf = 0.5 * (1.0 + std::erf(x / std::numbers::sqrt2));
    const double pdf = std::exp(-0.5 * x * x) / std::sqrt(2.0 * std::numbers::pi);
    return g * (cdf + x * pdf);
  });
}

Tensor sigmoid_backward(const Args& a, const Spec& s) {
  return backward_map(s, a.tensor("grad_output"), a.tensor("output"),
                      [](double g, double y, DType t) { return opmath(g * (1.0 - y), t) * y; });
}

Tensor tanh_backward(const Args& a, const Spec& s) {
  return backward_map(s, a.tensor("grad_output"), a.tensor("output"),
                      [](double g, double y, DType t) { return g * (1.0 - opmath(y * y, t)); });
}

// threshold_backward: every common dtype but bool.
Spec threshold_backward_spec(const Args& a) {
  const Tensor& grad = a.tensor("grad_output");
  const Tensor& x = a.tensor("self");
  const DType ct = opsutil::result_type(grad, x);
  if (ct == DType::Bool) not_implemented_for("threshold_cpu", ct);
  return {broadcast_shapes(grad.shape(), x.shape()), ct};
}

Tensor threshold_backward(const Args& a, const Spec& spec) {
  const Tensor& grad = a.tensor("grad_output");
  const Tensor& x = a.tensor("self");
  const DType ct = spec.dtype;
  Tensor out = Tensor::empty(spec.shape, ct);
  const Tensor g = mathops::as_dtype(grad, ct), v = mathops::as_dtype(x, ct);
  if (is_floating(ct)) {
    const double th = Tensor::scalar(a.real("threshold"), ct).get(0);
    opsutil::map_binary(g, v, out, [th](double gv, double xv) { return xv <= th ? 0.0 : gv; });
  } else {
    // The threshold is converted to the integral dtype (truncated toward zero, wrapping).
    Tensor s = Tensor::empty({1}, ct);
    s.set_int(0, a.scalar("threshold").to_int());
    const int64_t th = s.get_int(0);
    opsutil::map_binary_int(g, v, out,
                            [th](int64_t gv, int64_t xv) { return xv <= th ? int64_t{0} : gv; });
  }
  return out;
}

Tensor silu_backward(const Args& a, const Spec& spec) {
  return backward_map(spec, a.tensor("grad_output"), a.tensor("self"),
                      [](double g, double x, DType) {
                        const double s = sigmoid(x);
                        return g * s * (1.0 + x * (1.0 - s));
                      });
}

Tensor hardswish_backward(const Args& a, const Spec& s) {
  return backward_map(s, a.tensor("grad_output"), a.tensor("self"), [](double g, double x, DType) {
    // ATen's vectorized kernel (every element but a loop's tail): x >= 3 gives grad, NaN falls
    // to the middle branch.
    if (x < -3.0) return 0.0;
    if (x >= 3.0) return g;
    return g * (x / 3.0 + 0.5);
  });
}

Tensor hardsigmoid_backward(const Args& a, const Spec& s) {
  return backward_map(s, a.tensor("grad_output"), a.tensor("self"), [](double g, double x, DType) {
    return (x > -3.0 && x < 3.0) ? g / 6.0 : 0.0;
  });
}

Tensor hardtanh_backward(const Args& a, const Spec& s) {
  const DType ct = s.dtype;
  // The limits as the kernel sees them (converted to the dtype).
  const double lo = Tensor::scalar(a.real("min_val"), ct).get(0);
  const double hi = Tensor::scalar(a.real("max_val"), ct).get(0);
  return backward_map(
      s, a.tensor("grad_output"), a.tensor("self"),
      [lo, hi](double g, double v, DType) { return (v <= lo || v >= hi) ? 0.0 : g; });
}

Spec leaky_relu_backward_spec(const Args& a) {
  const double slope = a.real("negative_slope");
  const bool self_is_result = a.flag("self_is_result");
  CRUCIBLE_CHECK(
      !self_is_result || slope >= 0.0,
      "In-place leakyReLu backward calculation is triggered with a negative slope which is not "
      "supported. This is caused by calling in-place forward function with a negative slope, "
      "please call out-of-place version instead. File an issue at "
      "https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu "
      "backward calculation with negative slope");
  return floating_spec(a, "leaky_relu_backward_cpu");
}

Tensor leaky_relu_backward(const Args& a, const Spec& s) {
  const double slope = a.real("negative_slope");
  return backward_map(s, a.tensor("grad_output"), a.tensor("self"),
                      [slope](double g, double x, DType) { return x > 0 ? g : g * slope; });
}

Spec elu_backward_spec(const Args& a) {
  const double alpha = a.real("alpha");
  const bool is_result = a.flag("is_result");
  CRUCIBLE_CHECK(!is_result || alpha >= 0.0,
                 "In-place elu backward calculation is triggered with a negative slope which is "
                 "not supported. This is caused by calling in-place forward function with a "
                 "negative slope, please call out-of-place version instead.");
  return floating_spec(a, "elu_backward_cpu", "self_or_result");
}

Tensor elu_backward(const Args& a, const Spec& s) {
  const double alpha = a.real("alpha"), scale = a.real("scale");
  const double input_scale = a.real("input_scale");
  const bool is_result = a.flag("is_result");
  const double negcoef = alpha * scale;
  return backward_map(s, a.tensor("grad_output"), a.tensor("self_or_result"),
                      [=](double g, double x, DType) {
                        // ATen's vectorized kernel tests x > 0: NaN takes the negative branch
                        // (NaN).
                        if (x > 0) return g * scale;
                        if (is_result) return g * input_scale * (x + negcoef);
                        return g * input_scale * negcoef * std::exp(x * input_scale);
                      });
}

Tensor softplus_backward(const Args& a, const Spec& s) {
  const double beta = a.real("beta"), threshold = a.real("threshold");
  return backward_map(s, a.tensor("grad_output"), a.tensor("self"),
                      [=](double g, double x, DType t) {
                        const double xb = opmath(x * beta, t);
                        if (xb > threshold) return g;
                        const double z = opmath(std::exp(xb), t);
                        return g * z / (z + 1.0);
                      });
}

Tensor mish_backward(const Args& a, const Spec& s) {
  return backward_map(s, a.tensor("grad_output"), a.tensor("self"), [](double g, double x, DType) {
    const double t = std::tanh(std::log1p(std::exp(x)));
    return g * (t + x * sigmoid(x) * (1.0 - t * t));
  });
}

// Builds the argument list of one case from (grad_output, self-or-output).
using ArgBuilder = std::function<std::vector<Literal>(Literal grad, Literal self)>;

// The standard cases of a backward op over `dtypes`: same shapes, 0-d, empty, non-contiguous
// grad or self, expanded grad, broadcasting both ways, type promotion, special values, plus
// error cases for `error_dtypes`.
std::vector<Sample> backward_samples(const std::vector<DType>& dtypes,
                                     const std::vector<DType>& error_dtypes,
                                     const ArgBuilder& build, const std::string& suffix = "",
                                     const std::vector<std::pair<std::string, Literal>>& kw = {}) {
  std::vector<Sample> out;
  auto add = [&](std::string label, Literal g, Literal x) {
    out.push_back(make(std::move(label) + suffix, build(std::move(g), std::move(x)), kw));
  };
  for (DType t : dtypes) {
    const std::string d = " " + dtype_code_str(t);
    add("same shape" + d, T({7, 13}, t), T({7, 13}, t));
    add("0-d" + d, T({}, t), T({}, t));
    add("transposed self" + d, T({9, 12}, t), T_transposed(9, 12, t));
    if (is_floating(t))
      add("special values" + d, T_fill({96}, t, "special"), T_fill({96}, t, "special"));
    if (t != DType::Float32 && t != DType::Float16 && t != DType::Int64) continue;
    add("vector tail" + d, T({1031}, t), T({1031}, t));
    add("4096 elements" + d, T({64, 64}, t), T({64, 64}, t));
    add("transposed grad" + d, T_transposed(9, 12, t), T({9, 12}, t));
    add("sliced with a step" + d, T({6, 5}, t, {10, 2}), T({6, 5}, t, {1, 12}));
    add("expanded grad (stride 0)" + d, T({5, 8}, t, {0, 1}), T({5, 8}, t));
    add("expanded self middle dim" + d, T({3, 4, 5}, t), T({3, 4, 5}, t, {5, 0, 1}));
    add("empty" + d, T({0, 3}, t), T({0, 3}, t));
    add("empty 3-d" + d, T({3, 0, 2}, t), T({3, 0, 2}, t));
    add("grad broadcast" + d, T({5}, t), T({4, 5}, t));
    add("self broadcast" + d, T({4, 5}, t), T({4, 1}, t));
    if (is_floating(t))
      add("special grad, ordinary self" + d, T_fill({8, 12}, t, "special"), T({8, 12}, t));
  }
  auto has = [&](DType t) { return std::ranges::find(dtypes, t) != dtypes.end(); };
  const std::pair<DType, DType> pairs[] = {{DType::Float32, DType::Float64},
                                           {DType::Float16, DType::Float32},
                                           {DType::BFloat16, DType::Float16},
                                           {DType::Float64, DType::BFloat16}};
  for (auto [a, b] : pairs)
    if (has(a) && has(b))
      add("promotion " + dtype_code_str(a) + " grad with " + dtype_code_str(b) + " self",
          T({6, 7}, a), T({6, 7}, b));
  if (has(DType::Float32))
    add("promotion i64 grad with f32 self", T({6, 7}, DType::Int64), T({6, 7}, DType::Float32));
  for (DType t : error_dtypes)
    out.push_back(make("error: unsupported dtype " + dtype_code_str(t) + suffix,
                       build(T({4, 5}, t), T({4, 5}, t)), kw));
  if (!error_dtypes.empty())
    out.push_back(make("error: shapes that do not broadcast" + suffix,
                       build(T({3}, DType::Float32), T({4}, DType::Float32)), kw));
  return out;
}

ArgBuilder plain() {
  return [](Literal g, Literal x) { return std::vector<Literal>{std::move(g), std::move(x)}; };
}
ArgBuilder then(std::vector<Literal> tail) {
  return [tail](Literal g, Literal x) {
    std::vector<Literal> v{std::move(g), std::move(x)};
    v.insert(v.end(), tail.begin(), tail.end());
    return v;
  };
}

CostFn binary_cost(double flops) {
  return [flops](const Values& args, const Values& outputs) {
    const Tensor& out = outputs.at(0).tensor();
    double in_bytes = 0;
    for (const Value& v : args)
      if (v.is_tensor()) in_bytes += mathops::real_bytes(v.tensor());
    return Cost{flops * static_cast<double>(out.numel()), in_bytes + mathops::real_bytes(out)};
  };
}

std::vector<Sample> perf_samples(const ArgBuilder& build,
                                 const std::vector<std::pair<std::string, Literal>>& kw = {}) {
  std::vector<Sample> out;
  for (DType t : mathops::perf_dtypes()) {
    for (const Shape& s : {Shape{int64_t{1} << 22}, Shape{64, 512, 512}})
      out.push_back(
          make("bandwidth " + shape_str(s) + " " + dtype_code_str(t), build(T(s, t), T(s, t)), kw));
  }
  return out;
}

// The comparison of backward ops. ATen computes them in float (f16/bf16/f32) or double, and
// the formulas cancel (gelu's 0.5 (1 + tanh(u)) or Phi(x) for x << 0) or underflow (silu's
// sigmoid(-100)), so a correct float kernel is off by about eps(opmath) * |grad| * (1 + |x|):
// relative to the output that is unbounded when the derivative is tiny and grad huge. Each
// element passes within the dtype's atol + rtol |r| plus 8 eps(opmath) |grad| min(1 + |x|, 16).
// NaN must meet NaN and inf the same inf, as everywhere.
ComparePolicy grad_scaled_compare(size_t grad_arg, size_t x_arg) {
  ComparePolicy p;
  p.kind = ComparePolicy::Kind::Custom;
  p.custom = [grad_arg, x_arg](const Values& inputs, const Values& ref_out,
                               const Values& cand_out) {
    std::vector<TensorCheck> checks;
    for (size_t k = 0; k < ref_out.size() && k < cand_out.size(); ++k) {
      const std::string what = "output " + std::to_string(k);
      const Tensor& r = ref_out[k].tensor();
      const Tensor& c = cand_out[k].tensor();
      TensorCheck check = compare_tensors(r, c, 1.0, what);
      if (check.passed || r.shape() != c.shape() || r.dtype() != c.dtype()) {
        checks.push_back(std::move(check));
        continue;
      }
      const Tensor& g = inputs.at(grad_arg).tensor();
      const Tensor& x = inputs.at(x_arg).tensor();
      const double eps = r.dtype() == DType::Float64 ? 0x1p-52 : 0x1p-23;
      const Tolerance tol = default_tolerance(r.dtype());
      const Tensor ops[] = {r, c, g, x};
      int64_t mismatches = 0;
      opsutil::for_each_offset(r.shape(), ops, [&](std::span<const int64_t> o) {
        auto load = [](const Tensor& t, int64_t off) {
          return load_as_double(static_cast<const char*>(t.storage()->data()) +
                                    off * static_cast<int64_t>(t.itemsize()),
                                t.dtype());
        };
        const double rv = load(r, o[0]), cv = load(c, o[1]);
        const double gv = load(g, o[2]), xv = load(x, o[3]);
        bool ok = false;
        if (std::isnan(rv) || std::isnan(cv) || std::isinf(rv) || std::isinf(cv)) {
          ok = (std::isnan(rv) && std::isnan(cv)) || rv == cv;
        } else {
          const double allowed = tol.atol + tol.rtol * std::fabs(rv) +
                                 8 * eps * std::fabs(gv) * std::min(1 + std::fabs(xv), 16.0);
          ok = std::fabs(cv - rv) <= allowed;
        }
        if (!ok) ++mismatches;
      });
      if (mismatches == 0) {
        check.passed = true;
        check.reason.clear();
        check.mismatches = 0;
      }
      checks.push_back(std::move(check));
    }
    return checks;
  };
  return p;
}

void add_op(OpRegistry& r, std::string_view schema, SpecFn spec, ComputeFn compute, double flops,
            std::function<std::vector<Sample>()> correctness, ArgBuilder perf_build,
            std::vector<DType> dtypes = floating_dtypes(),
            std::vector<std::pair<std::string, Literal>> perf_kw = {}) {
  OpDef op = OpDef::from_schema(schema, "activation.backward");
  op.dtypes = std::move(dtypes);
  op.meta = [spec](const Args& a) {
    const Spec s = spec(a);
    return Values{meta::fresh(s.shape, s.dtype)};
  };
  op.ref = [spec, compute](const Args& a) { return Values{Value(compute(a, spec(a)))}; };
  op.samples = [correctness = std::move(correctness), perf_build = std::move(perf_build),
                perf_kw = std::move(perf_kw)](const SampleContext& ctx) {
    return ctx.performance ? perf_samples(perf_build, perf_kw) : correctness();
  };
  op.cost = binary_cost(flops);
  // elu_backward: grad is argument 0, self_or_result argument 5.
  const int x_arg = op.schema.find_argument("self_or_result");
  op.compare = grad_scaled_compare(0, x_arg >= 0 ? static_cast<size_t>(x_arg) : 1);
  r.add(std::move(op));
}

std::vector<Sample> concat(std::vector<Sample> a, std::vector<Sample> b) {
  for (Sample& s : b) a.push_back(std::move(s));
  return a;
}

// Cases of a (grad, self) op with extra variants on f32 / bf16.
std::vector<Sample> simple_samples(const std::vector<std::pair<std::string, ArgBuilder>>& variants,
                                   const ArgBuilder& base) {
  const std::vector<DType> ints = integral_dtypes(true);
  std::vector<Sample> out = backward_samples(floating_dtypes(), ints, base);
  for (const auto& [label, build] : variants)
    out = concat(std::move(out),
                 backward_samples({DType::Float32, DType::BFloat16}, {}, build, ", " + label));
  return out;
}

}  // namespace

void register_activation_backward_ops(OpRegistry& r) {
  const std::vector<DType> ints = integral_dtypes(true);
  add_op(
      r,
      "aten::gelu_backward(Tensor grad_output, Tensor self, *, str approximate=\"none\") -> Tensor",
      gelu_backward_spec, gelu_backward, 12,
      [ints] {
        std::vector<Sample> out = backward_samples(floating_dtypes(), ints, plain());
        out = concat(std::move(out),
                     backward_samples(floating_dtypes(), {}, plain(), ", approximate='tanh'",
                                      {{"approximate", S("tanh")}}));
        out.push_back(make("approximate='none' given",
                           {T({5, 9}, DType::Float32), T({5, 9}, DType::Float32)},
                           {{"approximate", S("none")}}));
        out.push_back(make("error: unknown approximation",
                           {T({4, 5}, DType::Float32), T({4, 5}, DType::Float32)},
                           {{"approximate", S("erf")}}));
        return out;
      },
      plain());
  add_op(
      r, "aten::sigmoid_backward(Tensor grad_output, Tensor output) -> Tensor",
      floating_only("sigmoid_backward_cpu", "output"), sigmoid_backward, 3,
      [] { return simple_samples({}, plain()); }, plain());
  add_op(
      r, "aten::tanh_backward(Tensor grad_output, Tensor output) -> Tensor",
      floating_only("tanh_backward_cpu", "output"), tanh_backward, 3,
      [] { return simple_samples({}, plain()); }, plain());
  add_op(
      r, "aten::threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> Tensor",
      threshold_backward_spec, threshold_backward, 1,
      [] {
        std::vector<DType> dts = all_numeric_dtypes();
        std::erase(dts, DType::Bool);
        std::vector<Sample> out = backward_samples(dts, {DType::Bool}, then({I(0)}));
        out = concat(std::move(out), backward_samples({DType::Float32, DType::BFloat16}, {},
                                                      then({F(0.5)}), ", threshold=0.5"));
        out.push_back(make("i64, threshold=1.5 (truncated to 1)",
                           {T({6, 7}, DType::Int64), T({6, 7}, DType::Int64), F(1.5)}));
        out.push_back(
            make("u8, threshold=9", {T({6, 7}, DType::UInt8), T({6, 7}, DType::UInt8), I(9)}));
        out.push_back(make("i32 grad with f32 self -> f32",
                           {T({6, 7}, DType::Int32), T({6, 7}, DType::Float32), F(-0.25)}));
        out.push_back(make("u8 grad with i8 self -> i16",
                           {T({6, 7}, DType::UInt8), T({6, 7}, DType::Int8), I(-2)}));
        out.push_back(make("error: bool grad and bool self",
                           {T({6, 7}, DType::Bool), T({6, 7}, DType::Bool), I(0)}));
        return out;
      },
      then({I(0)}), all_numeric_dtypes());
  add_op(
      r, "aten::silu_backward(Tensor grad_output, Tensor self) -> Tensor",
      floating_only("silu_backward_cpu"), silu_backward, 6,
      [] { return simple_samples({}, plain()); }, plain());
  add_op(
      r, "aten::hardswish_backward(Tensor grad_output, Tensor self) -> Tensor",
      floating_only("hardswish_backward_cpu"), hardswish_backward, 3,
      [] { return simple_samples({}, plain()); }, plain());
  add_op(
      r, "aten::hardsigmoid_backward(Tensor grad_output, Tensor self) -> Tensor",
      floating_only("hardsigmoid_backward_cpu"), hardsigmoid_backward, 2,
      [] { return simple_samples({}, plain()); }, plain());
  add_op(
      r,
      "aten::hardtanh_backward(Tensor grad_output, Tensor self, Scalar min_val, Scalar max_val) -> "
      "Tensor",
      floating_only("hardtanh_backward_cpu"), hardtanh_backward, 2,
      [] {
        return simple_samples({{"min=-0.5, max=0.5", then({F(-0.5), F(0.5)})},
                               {"min=0, max=6", then({I(0), I(6)})},
                               {"min > max", then({F(1.0), F(-1.0)})}},
                              then({I(-1), I(1)}));
      },
      then({I(-1), I(1)}));
  add_op(
      r,
      "aten::leaky_relu_backward(Tensor grad_output, Tensor self, Scalar negative_slope, bool "
      "self_is_result) -> Tensor",
      leaky_relu_backward_spec, leaky_relu_backward, 2,
      [] {
        std::vector<Sample> out =
            simple_samples({{"self_is_result, slope 0.2", then({F(0.2), B(true)})},
                            {"negative slope -0.5", then({F(-0.5), B(false)})},
                            {"slope 0, self_is_result", then({I(0), B(true)})}},
                           then({F(0.01), B(false)}));
        out.push_back(
            make("error: self_is_result with a negative slope",
                 {T({4, 5}, DType::Float32), T({4, 5}, DType::Float32), F(-0.5), B(true)}));
        return out;
      },
      then({F(0.01), B(false)}));
  auto elu_build = [](double alpha, double scale, double input_scale, bool is_result) {
    return ArgBuilder([=](Literal g, Literal x) {
      return std::vector<Literal>{std::move(g),   F(alpha),     F(scale),
                                  F(input_scale), B(is_result), std::move(x)};
    });
  };
  add_op(
      r,
      "aten::elu_backward(Tensor grad_output, Scalar alpha, Scalar scale, Scalar input_scale, bool "
      "is_result, Tensor self_or_result) -> Tensor",
      elu_backward_spec, elu_backward, 4,
      [elu_build] {
        std::vector<Sample> out = simple_samples(
            {{"is_result", elu_build(1.0, 1.0, 1.0, true)},
             {"alpha=1.5, scale=2, input_scale=0.5", elu_build(1.5, 2.0, 0.5, false)},
             {"alpha=1.5, scale=2, input_scale=0.5, is_result", elu_build(1.5, 2.0, 0.5, true)},
             {"negative alpha", elu_build(-1.0, 1.0, 1.0, false)}},
            elu_build(1.0, 1.0, 1.0, false));
        out.push_back(make(
            "error: is_result with a negative alpha",
            elu_build(-1.0, 1.0, 1.0, true)(T({4, 5}, DType::Float32), T({4, 5}, DType::Float32))));
        return out;
      },
      elu_build(1.0, 1.0, 1.0, false));
  add_op(
      r,
      "aten::softplus_backward(Tensor grad_output, Tensor self, Scalar beta, Scalar threshold) -> "
      "Tensor",
      floating_only("softplus_backward_cpu"), softplus_backward, 5,
      [] {
        return simple_samples({{"beta=2, threshold=1", then({F(2.0), F(1.0)})},
                               {"beta=0.5, threshold=0", then({F(0.5), I(0)})}},
                              then({I(1), I(20)}));
      },
      then({I(1), I(20)}));
  add_op(
      r, "aten::mish_backward(Tensor grad_output, Tensor self) -> Tensor",
      floating_only("mish_backward_cpu"), mish_backward, 10,
      [] { return simple_samples({}, plain()); }, plain());
}

}  // namespace crucible
