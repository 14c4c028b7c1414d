// Layer normalisation: aten.native_layer_norm.default -> (out, mean, rstd).
//
// Reference semantics (PyTorch 2.x, CPU; layer_norm.cpp, layer_norm.h, cpu/mixed_data_type.h):
//  - normalized_shape must be non-empty, weight and bias (optional) must have exactly that
//    shape, and the input's trailing dims must equal it (_check_layer_norm_inputs).
//  - M = product of the leading dims, N = product of normalized_shape. mean and rstd have the
//    input's leading dims followed by one 1 per normalized dim (e.g. [4, 1024, 1]).
//  - mean = E[x], var = E[(x - mean)^2] (biased), rstd = 1 / sqrt(var + eps),
//    out = (x - mean) * rstd * weight + bias.
//  - dtypes: f16, bf16, f32, f64. Mixed types: a reduced-precision input (f16/bf16) may take
//    f32 weight/bias ("mixed type"); then mean and rstd are f32. Otherwise mean and rstd have the
//    input's dtype -- on the CPU an f16 input with f16 weights gives f16 mean/rstd (CUDA gives
//    f32; traces recorded on CUDA show f32). Any other dtype mismatch raises.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/ops/destination.h"
#include "ops/families.h"
#include "ops/meta_fn.h"
#include "ops/samples.h"

namespace crucible {
namespace {

using namespace samples;

bool is_reduced(DType t) { return t == DType::Float16 || t == DType::BFloat16; }

// The checks of native_layer_norm and its outputs (out, mean, rstd) as meta tensors.
Values layer_norm_meta(const Args& args) {
  const Tensor& input = args.tensor("input");
  const std::vector<int64_t> normalized = args.ints("normalized_shape");
  const std::optional<Tensor> weight = args.opt_tensor("weight");
  const std::optional<Tensor> bias = args.opt_tensor("bias");

  // Mixed types (is_mixed_type / check_mixed_data_type): the first given parameter decides.
  const std::optional<Tensor>& first = weight ? weight : bias;
  const bool mixed = first && first->dtype() != input.dtype();
  if (mixed) {
    for (const auto* p : {&weight, &bias}) {
      if (*p && (*p)->dtype() != DType::Float32) {
        op_error("mixed dtype (CPU): expect parameter to have scalar type of Float");
      }
    }
    if (!is_reduced(input.dtype()))
      op_error("mixed dtype (CPU): all inputs must share same datatype.");
  }

  const std::string ns = shape_str(normalized);
  CRUCIBLE_CHECK(!normalized.empty(),
                 "Expected normalized_shape to be at least 1-dimensional, i.e., containing at "
                 "least one element, but got normalized_shape = " +
                     ns);
  if (weight && weight->shape() != normalized) {
    op_error("Expected weight to be of same shape as normalized_shape, but got weight of shape " +
             shape_str(weight->shape()) + " and normalized_shape = " + ns);
  }
  if (bias && bias->shape() != normalized) {
    op_error("Expected bias to be of same shape as normalized_shape, but got bias of shape " +
             shape_str(bias->shape()) + " and normalized_shape = " + ns);
  }
  const int64_t nd = input.dim();
  const int64_t nn = static_cast<int64_t>(normalized.size());
  bool matches = nd >= nn;
  for (int64_t i = 0; matches && i < nn; ++i) matches = input.size(nd - nn + i) == normalized[i];
  if (!matches) {
    std::string tail;
    for (int64_t s : normalized) tail += ", " + std::to_string(s);
    op_error("Given normalized_shape=" + ns + ", expected input with shape [*" + tail +
             "], but got input of size" + shape_str(input.shape()));
  }
  const DType t = input.dtype();
  if (t != DType::Float16 && t != DType::BFloat16 && t != DType::Float32 && t != DType::Float64) {
    not_implemented_for("LayerNormKernelImpl", t);
  }
  if (!mixed) {
    // The kernel reads weight and bias as the input's element type.
    for (const auto* p : {&weight, &bias}) {
      if (*p && (*p)->dtype() != t) {
        op_error("expected scalar type " + scalar_type_name(t) + " but found " +
                 scalar_type_name((*p)->dtype()));
      }
    }
  }

  const int64_t axis = nd - nn;
  Shape stat_shape;
  for (int64_t d = 0; d < axis; ++d) stat_shape.push_back(input.size(d));
  for (int64_t d = axis; d < nd; ++d) stat_shape.push_back(1);
  const DType stat_dt = mixed ? DType::Float32 : t;
  return {meta::fresh(input.shape(), t), meta::fresh(stat_shape, stat_dt),
          meta::fresh(stat_shape, stat_dt)};
}

// native_layer_norm into its three outputs (meta: layer_norm_meta).
void layer_norm_impl(const Args& args, const Values& outputs) {
  const Tensor& input = args.tensor("input");
  const int64_t nn = static_cast<int64_t>(args.ints("normalized_shape").size());
  const std::optional<Tensor> weight = args.opt_tensor("weight");
  const std::optional<Tensor> bias = args.opt_tensor("bias");
  const double eps = args.real("eps");
  const int64_t axis = input.dim() - nn;
  int64_t m = 1, n = 1;
  for (int64_t d = 0; d < axis; ++d) m *= input.size(d);
  for (int64_t d = axis; d < input.dim(); ++d) n *= input.size(d);
  const Tensor& out = outputs.at(0).tensor();
  const Tensor& mean_t = outputs.at(1).tensor();
  const Tensor& rstd_t = outputs.at(2).tensor();
  std::vector<double> x(static_cast<size_t>(n));
  for (int64_t row = 0; row < m; ++row) {
    double sum = 0;
    for (int64_t j = 0; j < n; ++j) {
      x[j] = input.get(row * n + j);
      sum += x[j];
    }
    const double mean = sum / static_cast<double>(n);
    double sq = 0;
    for (int64_t j = 0; j < n; ++j) sq += (x[j] - mean) * (x[j] - mean);
    const double rstd = 1.0 / std::sqrt(sq / static_cast<double>(n) + eps);
    for (int64_t j = 0; j < n; ++j) {
      double y = (x[j] - mean) * rstd;
      if (weight) y *= weight->get(j);
      if (bias) y += bias->get(j);
      out.set(row * n + j, y);
    }
    mean_t.set(row, mean);
    rstd_t.set(row, rstd);
  }
}

int64_t normalized_size(const Args& a) {
  if (a.size() < 2 || a.value("normalized_shape").kind() != ValueKind::IntList) return 1;
  int64_t n = 1;
  for (int64_t s : a.ints("normalized_shape")) n *= std::max<int64_t>(s, 1);
  return n;
}

// mean and variance are sums over the N normalized elements; their rounding in the candidate's
// accumulator costs about sqrt(N) roundoffs (independent errors), which carries into out and
// rstd. The tolerance grows by sqrt(N): enough for f32 accumulation or Welford, not for
// accumulating an f32 result in f16.
ComparePolicy layer_norm_compare(const Schema& schema) {
  ComparePolicy c;
  c.tol_scale = [schema](const Values& a) {
    return std::sqrt(static_cast<double>(normalized_size(Args(a, schema))));
  };
  return c;
}

// Two passes for the moments, then normalise and scale: about 8 operations per element. Bytes:
// input read, output written, weight and bias read once, mean and rstd written.
Cost layer_norm_cost(const Args& a, const Values& out) {
  Cost c;
  if (a.size() == 0 || !a.value("input").is_tensor()) return c;
  const Tensor& x = a.tensor("input");
  c.flops = 8.0 * static_cast<double>(x.numel());
  c.bytes = 2.0 * static_cast<double>(x.numel() * x.itemsize());
  for (const char* param : {"weight", "bias"}) {
    if (a.value(param).is_tensor()) {
      c.bytes += static_cast<double>(a.tensor(param).numel() * a.tensor(param).itemsize());
    }
  }
  for (size_t i = 1; i < out.size(); ++i) {
    if (out[i].is_tensor())
      c.bytes += static_cast<double>(out[i].tensor().numel() * out[i].tensor().itemsize());
  }
  return c;
}

std::vector<Sample> layer_norm_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  const DType f32 = DType::Float32;
  const Literal eps = F(1e-05);
  if (ctx.performance) {
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16}) {
      out.push_back(make("BERT [8192, 768] " + dtype_code_str(t),
                         {T({8192, 768}, t), L({768}), T({768}, t), T({768}, t), F(1e-12)}));
      out.push_back(make("GPT [4, 1024, 1024] " + dtype_code_str(t),
                         {T({4, 1024, 1024}, t), L({1024}), T({1024}, t), T({1024}, t), eps}));
      out.push_back(make("wide [2048, 4096] " + dtype_code_str(t),
                         {T({2048, 4096}, t), L({4096}), T({4096}, t), T({4096}, t), eps}));
    }
    out.push_back(
        make("mixed bf16 input, f32 params [8192, 768]",
             {T({8192, 768}, DType::BFloat16), L({768}), T({768}, f32), T({768}, f32), eps}));
    return out;
  }
  for (DType t : floating_dtypes()) {
    const std::string d = " " + dtype_code_str(t);
    out.push_back(make("rows with weight and bias" + d,
                       {T({4, 33}, t), L({33}), T({33}, t), T({33}, t), eps}));
    out.push_back(
        make("3-d, no weight or bias" + d, {T({2, 3, 16}, t), L({16}), None(), None(), eps}));
    out.push_back(make("special values" + d,
                       {T_fill({4, 24}, t, "special"), L({24}), T({24}, t), T({24}, t), eps}));
  }
  for (DType t : {DType::Float16, DType::BFloat16}) {
    out.push_back(make("mixed " + dtype_code_str(t) + " input, f32 params",
                       {T({4, 33}, t), L({33}), T({33}, f32), T({33}, f32), eps}));
    out.push_back(make("mixed " + dtype_code_str(t) + " input, f32 weight only",
                       {T({4, 33}, t), L({33}), T({33}, f32), None(), eps}));
  }
  out.push_back(make("two normalized dims",
                     {T({2, 3, 8}, f32), L({3, 8}), T({3, 8}, f32), T({3, 8}, f32), eps}));
  out.push_back(make("all dims normalized", {T({3, 8}, f32), L({3, 8}), None(), None(), eps}));
  out.push_back(make("1-d input", {T({16}, f32), L({16}), T({16}, f32), T({16}, f32), eps}));
  out.push_back(make("weight only", {T({5, 12}, f32), L({12}), T({12}, f32), None(), eps}));
  out.push_back(make("bias only", {T({5, 12}, f32), L({12}), None(), T({12}, f32), eps}));
  out.push_back(
      make("long rows", {T({3, 1031}, f32), L({1031}), T({1031}, f32), T({1031}, f32), eps}));
  out.push_back(make("one element per row (var 0)", {T({6, 1}, f32), L({1}), None(), None(), eps}));
  out.push_back(
      make("eps=1e-12", {T({4, 33}, f32), L({33}), T({33}, f32), T({33}, f32), F(1e-12)}));
  out.push_back(make("eps=0.1", {T({4, 33}, DType::Float64), L({33}), None(), None(), F(0.1)}));
  out.push_back(
      make("transposed input", {T_transposed(9, 7, f32), L({7}), T({7}, f32), T({7}, f32), eps}));
  out.push_back(
      make("expanded input (stride 0)", {T({4, 10}, f32, {0, 1}), L({10}), None(), None(), eps}));
  out.push_back(
      make("sliced weight", {T({4, 5}, f32), L({5}), T({5}, f32, {2}), T({5}, f32), eps}));
  out.push_back(make("empty rows", {T({0, 8}, f32), L({8}), T({8}, f32), T({8}, f32), eps}));
  out.push_back(make("special values, mixed bf16", {T_fill({4, 24}, DType::BFloat16, "special"),
                                                    L({24}), T({24}, f32), T({24}, f32), eps}));
  out.push_back(make("error: normalized_shape does not match input",
                     {T({4, 33}, f32), L({32}), None(), None(), eps}));
  out.push_back(make("error: normalized_shape longer than input",
                     {T({8}, f32), L({2, 8}), None(), None(), eps}));
  out.push_back(
      make("error: empty normalized_shape", {T({4, 8}, f32), L({}), None(), None(), eps}));
  out.push_back(make("error: weight shape", {T({4, 8}, f32), L({8}), T({7}, f32), None(), eps}));
  out.push_back(make("error: bias shape", {T({4, 8}, f32), L({8}), None(), T({2, 4}, f32), eps}));
  out.push_back(
      make("error: integral input", {T({4, 8}, DType::Int64), L({8}), None(), None(), eps}));
  out.push_back(make("error: f32 input, f16 weight",
                     {T({4, 8}, f32), L({8}), T({8}, DType::Float16), None(), eps}));
  out.push_back(make("error: mixed, f64 bias", {T({4, 8}, DType::BFloat16), L({8}), T({8}, f32),
                                                T({8}, DType::Float64), eps}));
  out.push_back(make("error: f16 weight, f32 bias", {T({4, 8}, DType::Float16), L({8}),
                                                     T({8}, DType::Float16), T({8}, f32), eps}));
  return out;
}

}  // namespace

void register_norm_ops(OpRegistry& r) {
  OpDef op = OpDef::from_schema(
      "aten::native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? "
      "bias, float eps) -> (Tensor, Tensor, Tensor)",
      "norm");
  op.dtypes = floating_dtypes();
  op.meta = layer_norm_meta;
  op.ref = structured_ref(op.meta, layer_norm_impl);
  op.samples = layer_norm_samples;
  op.cost = layer_norm_cost;
  op.compare = layer_norm_compare(op.schema);
  r.add(std::move(op));
}

}  // namespace crucible
