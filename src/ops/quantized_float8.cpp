// The float8 quantize and dequantize steps of the float8 recipes, as TorchAO registers them
// (torchao/quantization/quant_primitives.py, the custom ops that keep them whole in an exported
// graph):
//   torchao.quantize_affine_float8_non_decomposed(tensor, scale, float8_dtype):
//     fp8(clamp(tensor / scale, -max, max)), saturating to the float8 dtype's largest finite
//     value (NaN stays NaN);
//   torchao.dequantize_affine_float8_non_decomposed(tensor, scale, output_dtype):
//     tensor * scale, in the output dtype.
// The scale is one element (tensor-wise), or has the tensor's rank with each dim dividing the
// tensor's (block-wise: per row is [rows, 1], per group of 32 along the last dim [rows, K/32]);
// anything else raises TorchAO's ValueError messages. TorchAO computes in f32 and rounds twice
// (f32 quotient, then float8); the reference computes in double and rounds once, as for every
// op, and the comparison allows the float8 ulp that can differ.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/ops/destination.h"
#include "ops/meta_fn.h"
#include "ops/quantized_internal.h"
#include "ops/samples.h"

namespace crucible {
namespace {

using namespace samples;  // NOLINT(google-build-using-namespace): the sample vocabulary

bool is_real(DType t) { return !is_complex(t); }

// TorchAO's _expand_scale_to_tensor_shape: a scale of the tensor's shape or of one element is
// used as is; otherwise it must have the tensor's rank, and each of the tensor's dims must be a
// whole multiple (the block size) of the scale's.
void check_scale(const Tensor& x, const Tensor& scale, const char* op) {
  if (!is_floating(scale.dtype()))
    op_error(std::string(op) + ": expecting a floating-point scale, got " +
             scalar_type_name(scale.dtype()));
  if (scale.shape() == x.shape() || scale.numel() == 1) return;
  if (scale.dim() != x.dim())
    op_error(fmt::format("Scale tensor has {} dimensions but target has {}", scale.dim(), x.dim()));
  for (int64_t d = 0; d < x.dim(); ++d) {
    const int64_t t = x.size(d), s = scale.size(d);
    if (s == 0 || t != s * (t / s))
      op_error(
          fmt::format("Dimension {}: target size {} is not evenly divisible by scale size {} "
                      "(block size would be {})",
                      d, t, s, s == 0 ? 0.0 : static_cast<double>(t) / static_cast<double>(s)));
  }
}

// The scale's element for element i (row-major) of a tensor of shape `shape`.
int64_t scale_index(const Shape& shape, const Tensor& scale, int64_t i) {
  if (scale.numel() == 1) return 0;
  int64_t index = 0, stride = 1;
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    const int64_t n = shape[static_cast<size_t>(d)], s = scale.size(d);
    const int64_t at = i % n;
    i /= n;
    index += at / (n / s) * stride;
    stride *= s;
  }
  return index;
}

Values quantize_meta(const Args& a) {
  const Tensor& x = a.tensor("tensor");
  const DType dt = a.dtype("float8_dtype");
  // TorchAO converts any real tensor to f32 first, and takes the bound from torch.finfo, which
  // refuses a non-floating dtype.
  if (!is_real(x.dtype()))
    unsupported("quantize_affine_float8 of a " + scalar_type_name(x.dtype()) + " tensor");
  if (!is_floating(dt))
    op_error(
        "torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
        "'torch.finfo'");
  check_scale(x, a.tensor("scale"), "quantize_affine_float8");
  return {meta::fresh(x.shape(), dt)};
}

// The quotient, clamped to the float8 dtype's finite range, into the output quantize_meta
// describes (contiguous, of the float8 dtype).
void quantize_impl(const Args& a, const Values& outputs) {
  const Tensor& out = outputs.at(0).tensor();
  const Tensor x = a.tensor("tensor").contiguous(), s = a.tensor("scale").contiguous();
  const double mx = float_info(out.dtype()).max;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double v = x.get(i) / s.get(scale_index(x.shape(), s, i));
    out.set(i, std::isnan(v) ? v : std::clamp(v, -mx, mx));
  }
}

Values dequantize_meta(const Args& a) {
  const Tensor& q = a.tensor("tensor");
  const DType dt = a.dtype("output_dtype");
  // TorchAO converts any real tensor to f32 and the product to any dtype; the reference models
  // floating results only.
  if (!is_real(q.dtype()))
    unsupported("dequantize_affine_float8 of a " + scalar_type_name(q.dtype()) + " tensor");
  if (!is_floating(dt))
    unsupported("dequantize_affine_float8 to " + scalar_type_name(dt) +
                " (the float8 recipes dequantize to floating dtypes)");
  check_scale(q, a.tensor("scale"), "dequantize_affine_float8");
  return {meta::fresh(q.shape(), dt)};
}

// The product, into the output dequantize_meta describes (contiguous, of the output dtype).
void dequantize_impl(const Args& a, const Values& outputs) {
  const Tensor& out = outputs.at(0).tensor();
  const Tensor q = a.tensor("tensor").contiguous(), s = a.tensor("scale").contiguous();
  for (int64_t i = 0; i < q.numel(); ++i)
    out.set(i, q.get(i) * s.get(scale_index(q.shape(), s, i)));
}

std::vector<Sample> quantize_samples(const SampleContext& ctx) {
  const DType f32 = DType::Float32, e4 = DType::Float8E4M3FN, e5 = DType::Float8E5M2;
  std::vector<Sample> out;
  if (ctx.performance) {
    out.push_back(
        make("tokens [512, 4096] per row", {T({512, 4096}, f32), T({512, 1}, f32), DT(e4)}));
    return out;
  }
  for (DType t : {f32, DType::BFloat16, DType::Float16})
    out.push_back(make("[7, 33] tensor-wise " + std::string(dtype_code(t)),
                       {T({7, 33}, t), T({}, f32), DT(e4)}));
  out.push_back(make("per row", {T({7, 33}, f32), T({7, 1}, f32), DT(e4)}));
  out.push_back(make("blocks of [2, 16]", {T({6, 64}, f32), T({3, 4}, f32), DT(e4)}));
  out.push_back(make("one scale per element", {T({3, 5}, f32), T({3, 5}, f32), DT(e4)}));
  out.push_back(make("bf16 scale", {T({4, 8}, f32), T({}, DType::BFloat16), DT(e4)}));
  out.push_back(make("e5m2", {T({5, 16}, f32), T({5, 1}, f32), DT(e5)}));
  out.push_back(make("saturates", {T_fill({6, 8}, f32, "wide"), T({1}, f32), DT(e4)}));
  out.push_back(make("special values", {T_fill({6, 8}, f32, "special"), T({6, 1}, f32), DT(e4)}));
  out.push_back(make("non-contiguous", {T({16, 5}, f32, {1, 16}), T({16, 1}, f32), DT(e4)}));
  out.push_back(make("error: scale of another rank", {T({4, 8}, f32), T({8}, f32), DT(e4)}));
  out.push_back(make("error: blocks that do not divide", {T({4, 8}, f32), T({4, 3}, f32), DT(e4)}));
  out.push_back(make("error: int32 scale", {T({4, 8}, f32), T({}, DType::Int32), DT(e4)}));
  out.push_back(make("error: int8 target", {T({4, 8}, f32), T({}, f32), DT(DType::Int8)}));
  out.push_back(make("int32 tensor", {T({4, 8}, DType::Int32), T({}, f32), DT(e4)}));
  out.push_back(make("to f16", {T({4, 8}, f32), T({4, 1}, f32), DT(DType::Float16)}));
  return out;
}

std::vector<Sample> dequantize_samples(const SampleContext& ctx) {
  const DType f32 = DType::Float32, e4 = DType::Float8E4M3FN, e5 = DType::Float8E5M2;
  std::vector<Sample> out;
  if (ctx.performance) {
    out.push_back(
        make("weight [4096, 4096] per channel", {T({4096, 4096}, e4), T({4096, 1}, f32), DT(f32)}));
    return out;
  }
  for (DType t : {f32, DType::BFloat16, DType::Float16})
    out.push_back(make("weight [33, 16] per channel to " + std::string(dtype_code(t)),
                       {T({33, 16}, e4), T({33, 1}, f32), DT(t)}));
  out.push_back(make("tensor-wise e5m2", {T({5, 16}, e5), T({}, f32), DT(f32)}));
  out.push_back(make("blocks of [1, 8]", {T({4, 32}, e4), T({4, 4}, f32), DT(DType::BFloat16)}));
  out.push_back(make("f32 tensor", {T({4, 8}, f32), T({}, f32), DT(f32)}));
  out.push_back(make("error: scale of another rank", {T({4, 8}, e4), T({4}, f32), DT(f32)}));
  out.push_back(make("error: blocks that do not divide", {T({4, 8}, e4), T({3, 8}, f32), DT(f32)}));
  return out;
}

Cost cost(const Args& a, const Values& out) {
  Cost c;
  const Tensor& x = a.tensor("tensor");
  c.bytes = static_cast<double>(x.numel() * x.itemsize());
  if (!out.empty()) {
    c.bytes += static_cast<double>(out[0].tensor().numel() * out[0].tensor().itemsize());
    c.flops = static_cast<double>(out[0].tensor().numel());
  }
  return c;
}

}  // namespace

void register_float8_quantize_ops(OpRegistry& r) {
  {
    OpDef op = OpDef::from_schema(
        "torchao::quantize_affine_float8_non_decomposed(Tensor tensor, Tensor scale, ScalarType "
        "float8_dtype) -> Tensor",
        "quantized");
    op.dtypes = {DType::Float32, DType::BFloat16, DType::Float16, DType::Int32};
    op.meta = quantize_meta;
    op.ref = structured_ref(quantize_meta, quantize_impl);
    op.samples = quantize_samples;
    op.roles["scale"] = ArgRole::positive();
    op.cost = cost;
    r.add(std::move(op));
  }
  {
    OpDef op = OpDef::from_schema(
        "torchao::dequantize_affine_float8_non_decomposed(Tensor tensor, Tensor scale, ScalarType "
        "output_dtype) -> Tensor",
        "quantized");
    op.dtypes = {DType::Float8E4M3FN, DType::Float8E5M2, DType::Float32};
    op.meta = dequantize_meta;
    op.ref = structured_ref(dequantize_meta, dequantize_impl);
    op.samples = dequantize_samples;
    op.roles["scale"] = ArgRole::positive();
    op.cost = cost;
    r.add(std::move(op));
  }
}

}  // namespace crucible
