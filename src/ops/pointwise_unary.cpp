// Pointwise unary ops: relu, relu_, neg, exp, tanh, sigmoid, gelu. Each entry holds its schema,
// meta function (ATen's checks), reference (computed in double, or exactly in int64 for integer
// outputs, rounded once, into the outputs the meta function described: destination.h), samples,
// cost model and comparison policy.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <string>

#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/ops/destination.h"
#include "ops/families.h"
#include "ops/meta_fn.h"
#include "ops/pointwise_math_internal.h"
#include "ops/samples.h"
#include "ops/util.h"

namespace crucible {

namespace {

using namespace samples;  // NOLINT(google-build-using-namespace): the sample vocabulary

// ATen's ScalarType name, as its error messages spell it.

using mathops::check_no_internal_overlap;
using mathops::real_bytes;

// A floating op computed into its output (f32 for integral and bool inputs: the meta's dtype).
ImplFn float_unary(double (*f)(double)) {
  return [f](const Args& args, const Values& out) {
    opsutil::map_unary(args.tensor("self"), out.at(0).tensor(), f);
  };
}

double relu_f(double x) { return x < 0 ? 0.0 : x; }  // keeps NaN and -0.0, as clamp_min does
double neg_f(double x) { return -x; }
double exp_f(double x) { return std::exp(x); }
double tanh_f(double x) { return std::tanh(x); }
double sigmoid_f(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double gelu_none(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double gelu_tanh(double x) {
  const double k = std::sqrt(2.0 / std::numbers::pi);
  return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}

void check_relu(const Tensor& x) {
  CRUCIBLE_CHECK(x.dtype() != DType::Bool, "Boolean inputs not supported for relu");
}

// relu of `x` into `out` (of x's dtype; `out` may be `x` itself: each element is read before it
// is written).
void relu_into(const Tensor& x, const Tensor& out) {
  if (is_floating(x.dtype()))
    opsutil::map_unary(x, out, relu_f);
  else
    opsutil::map_unary_int(x, out, [](int64_t v) { return v < 0 ? int64_t{0} : v; });
}

void check_neg(const Tensor& x) {
  CRUCIBLE_CHECK(x.dtype() != DType::Bool,
                 "Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
                 "to invert a mask, use the `~` or `logical_not()` operator instead.");
}

void neg_impl(const Args& args, const Values& outputs) {
  const Tensor& x = args.tensor("self");
  const Tensor& out = outputs.at(0).tensor();
  if (is_floating(x.dtype())) {
    opsutil::map_unary(x, out, neg_f);
  } else {
    // Two's complement: neg(INT_MIN) == INT_MIN, as ATen's wrapping arithmetic gives.
    opsutil::map_unary_int(
        x, out, [](int64_t v) { return static_cast<int64_t>(0 - static_cast<uint64_t>(v)); });
  }
}

// ATen's checks of gelu: the approximation's name, a floating input.
void check_gelu(const Args& args) {
  const std::string approximate =
      args.given("approximate") ? args.str("approximate") : std::string("none");
  CRUCIBLE_CHECK(approximate == "none" || approximate == "tanh",
                 "approximate argument must be either none or tanh.");
  if (!is_floating(args.tensor("self").dtype()))
    not_implemented_for("GeluKernelImpl", args.tensor("self").dtype());
}

void gelu_impl(const Args& args, const Values& outputs) {
  const bool tanh = args.given("approximate") && args.str("approximate") == "tanh";
  opsutil::map_unary(args.tensor("self"), outputs.at(0).tensor(), tanh ? gelu_tanh : gelu_none);
}

// Cost of an out-of-place unary op: `flops_per_element` per output element, the input's real
// bytes read and the output written.
CostFn unary_cost(double flops_per_element) {
  return [flops_per_element](const Args& args, const Values& outputs) {
    Cost c;
    const Tensor& out = outputs.at(0).tensor();
    c.flops = flops_per_element * static_cast<double>(out.numel());
    c.bytes = real_bytes(args.tensor("self")) + static_cast<double>(out.numel() * out.itemsize());
    return c;
  };
}

std::vector<DType> without_bool() {
  std::vector<DType> out;
  for (DType t : all_numeric_dtypes())
    if (t != DType::Bool) out.push_back(t);
  return out;
}

std::vector<DType> perf_dtypes() { return {DType::Float32, DType::Float16, DType::BFloat16}; }

// Samples of an op defined on `dtypes`, with `error_dtypes` as inputs where ATen must raise.
SampleFn unary_sample_fn(std::vector<DType> dtypes, std::vector<DType> error_dtypes = {}) {
  return [dtypes = std::move(dtypes),
          error_dtypes = std::move(error_dtypes)](const SampleContext& ctx) {
    if (ctx.performance) return elementwise_perf_samples(1, perf_dtypes());
    std::vector<Sample> out = unary_samples(dtypes);
    for (DType t : error_dtypes) {
      const std::string d(dtype_code(t));
      out.push_back(make("error: unsupported dtype " + d, {T({4, 5}, t)}));
      out.push_back(make("error: unsupported dtype, 0-d " + d, {T({}, t)}));
    }
    return out;
  };
}

OpDef unary_op(std::string_view schema, std::vector<DType> dtypes, MetaFn meta, ImplFn impl,
               double flops, std::vector<DType> error_dtypes = {}) {
  OpDef op = OpDef::from_schema(schema, "pointwise.unary");
  op.dtypes = dtypes;
  op.meta = std::move(meta);
  op.ref = structured_ref(op.meta, std::move(impl));
  op.samples = unary_sample_fn(std::move(dtypes), std::move(error_dtypes));
  op.cost = unary_cost(flops);
  return op;
}

void register_relu_(OpRegistry& r) {
  OpDef op = OpDef::from_schema("aten::relu_(Tensor(a!) self) -> Tensor(a!)", "pointwise.unary");
  op.dtypes = without_bool();
  op.meta = [](const Args& args) {
    const Tensor& self = args.tensor("self");
    check_relu(self);
    check_no_internal_overlap(self);
    return Values{args.value("self")};
  };
  op.ref = structured_ref(op.meta, [](const Args& args, const Values& outputs) {
    relu_into(args.tensor("self"), outputs.at(0).tensor());
  });
  op.samples = [](const SampleContext& ctx) {
    if (ctx.performance) return elementwise_perf_samples(1, perf_dtypes());
    std::vector<Sample> out;
    for (Sample& s : unary_samples(without_bool())) {
      // A written-to tensor with stride 0 is an error in ATen: keep those as error cases (self
      // is the case's first positional literal).
      const auto& strides = s.call.args[0].tensor.strides;
      bool expanded = strides && std::find(strides->begin(), strides->end(), 0) != strides->end();
      if (expanded) s.label = "error: self expanded (internal overlap), " + s.label;
      out.push_back(std::move(s));
    }
    out.push_back(make("error: bool self", {T({4, 5}, DType::Bool)}));
    return out;
  };
  op.cost = [](const Args& args, const Values&) {
    const Tensor& self = args.tensor("self");
    return Cost{static_cast<double>(self.numel()), 2 * real_bytes(self)};
  };
  r.add(std::move(op));
}

void register_gelu(OpRegistry& r) {
  OpDef op = OpDef::from_schema("aten::gelu(Tensor self, *, str approximate=\"none\") -> Tensor",
                                "pointwise.unary");
  op.dtypes = floating_dtypes();
  op.meta = [](const Args& args) {
    check_gelu(args);
    return Values{meta::fresh_like(args.tensor("self"))};
  };
  op.ref = structured_ref(op.meta, gelu_impl);
  op.samples = [](const SampleContext& ctx) {
    if (ctx.performance) {
      std::vector<Sample> out = elementwise_perf_samples(1, perf_dtypes());
      for (Sample& s : elementwise_perf_samples(1, {DType::Float32, DType::BFloat16})) {
        s.call.kwargs.emplace_back("approximate", S("tanh"));
        s.label += ", approximate='tanh'";
        out.push_back(std::move(s));
      }
      return out;
    }
    std::vector<Sample> out = unary_samples(floating_dtypes());
    for (Sample& s : unary_samples(floating_dtypes(), {}, {{"approximate", S("tanh")}})) {
      s.label += ", approximate='tanh'";
      out.push_back(std::move(s));
    }
    for (DType t : floating_dtypes())
      out.push_back(make("approximate='none' given, " + std::string(dtype_code(t)), {T({5, 9}, t)},
                         {{"approximate", S("none")}}));
    for (DType t : integral_dtypes(true))
      out.push_back(make("error: integral input " + std::string(dtype_code(t)), {T({4, 5}, t)}));
    out.push_back(make("error: unknown approximation", {T({4, 5}, DType::Float32)},
                       {{"approximate", S("erf")}}));
    return out;
  };
  op.cost = unary_cost(8);
  r.add(std::move(op));
}

}  // namespace

void register_pointwise_unary_ops(OpRegistry& r) {
  // The meta of an op whose output is shaped like its input, of the input's dtype or of the
  // float op dtype.
  auto same_meta = [](void (*check)(const Tensor&)) {
    return [check](const Args& args) {
      check(args.tensor("self"));
      return Values{meta::fresh_like(args.tensor("self"))};
    };
  };
  const MetaFn float_meta = [](const Args& args) {
    const Tensor& x = args.tensor("self");
    return Values{meta::fresh_like(x, opsutil::to_float_dtype(x.dtype()))};
  };
  r.add(unary_op("aten::relu(Tensor self) -> Tensor", without_bool(), same_meta(check_relu),
                 [](const Args& args, const Values& out) {
                   relu_into(args.tensor("self"), out.at(0).tensor());
                 },
                 1, {DType::Bool}));
  register_relu_(r);
  r.add(unary_op("aten::neg(Tensor self) -> Tensor", without_bool(), same_meta(check_neg), neg_impl,
                 1, {DType::Bool}));
  r.add(unary_op("aten::exp(Tensor self) -> Tensor", all_numeric_dtypes(), float_meta,
                 float_unary(exp_f), 1));
  r.add(unary_op("aten::tanh(Tensor self) -> Tensor", all_numeric_dtypes(), float_meta,
                 float_unary(tanh_f), 1));
  r.add(unary_op("aten::sigmoid(Tensor self) -> Tensor", all_numeric_dtypes(), float_meta,
                 float_unary(sigmoid_f), 4));
  register_gelu(r);
}

}  // namespace crucible
