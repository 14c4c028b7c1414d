// The float8 quantize and dequantize steps of the float8 recipes:
//   quantized_decomposed.quantize_float8(input, scale, dtype): fp8(clamp(input / scale, -max,
//     max)), saturating to the fp8 dtype's largest finite value (NaN stays NaN);
//   quantized_decomposed.dequantize_float8(input, scale, output_dtype): input * scale.
// The scale is tensor-wise (one element) or per row (the input's shape with a last dim of 1).
// Computed in double and rounded once.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "ops/meta_fn.h"
#include "ops/quantized_internal.h"
#include "ops/samples.h"

namespace crucible {
namespace {

using namespace samples;  // NOLINT(google-build-using-namespace): the sample vocabulary

bool is_fp8(DType t) { return t == DType::Float8E4M3FN || t == DType::Float8E5M2; }
bool is_float(DType t) {
  return t == DType::Float32 || t == DType::BFloat16 || t == DType::Float16;
}

// The scale's element for each element of a contiguous input.
void check_scale(const Tensor& x, const Tensor& scale, const char* op) {
  if (scale.dtype() != DType::Float32)
    op_error(std::string(op) + ": expecting a float32 scale, got " +
             scalar_type_name(scale.dtype()));
  if (scale.numel() == 1) return;
  Shape want = x.shape();
  if (!want.empty()) want.back() = 1;
  if (scale.shape() != want)
    op_error(std::string(op) + ": expecting a scale of one element or of shape " + shape_str(want) +
             " (one per row), got " + shape_str(scale.shape()));
}

int64_t row_len(const Tensor& x) {
  return x.dim() == 0 ? 1 : std::max<int64_t>(x.size(x.dim() - 1), 1);
}

Values quantize_meta(const Values& a) {
  const Tensor& x = a.at(0).tensor();
  const DType dt = a.at(2).to_dtype();
  if (!is_float(x.dtype()))
    op_error("quantize_float8: expecting a float32, bfloat16 or float16 input, got " +
             scalar_type_name(x.dtype()));
  if (!is_fp8(dt))
    op_error("quantize_float8: dtype must be a float8 type, got " + scalar_type_name(dt));
  check_scale(x, a.at(1).tensor(), "quantize_float8");
  return {meta::fresh(x.shape(), dt)};
}

Values quantize_ref(const Values& a) {
  quantize_meta(a);
  const Tensor x = a.at(0).tensor().contiguous(), s = a.at(1).tensor().contiguous();
  const DType dt = a.at(2).to_dtype();
  const double mx = float_info(dt).max;
  const int64_t k = row_len(x);
  Tensor out = Tensor::uninitialized(x.shape(), dt);
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double v = x.get(i) / s.get(s.numel() == 1 ? 0 : i / k);
    out.set(i, std::isnan(v) ? v : std::clamp(v, -mx, mx));
  }
  return {out};
}

Values dequantize_meta(const Values& a) {
  const Tensor& q = a.at(0).tensor();
  const DType dt = a.at(2).to_dtype();
  if (!is_fp8(q.dtype()))
    op_error("dequantize_float8: expecting a float8 input, got " + scalar_type_name(q.dtype()));
  if (!is_float(dt))
    op_error("dequantize_float8: output_dtype must be float32, bfloat16 or float16, got " +
             scalar_type_name(dt));
  check_scale(q, a.at(1).tensor(), "dequantize_float8");
  return {meta::fresh(q.shape(), dt)};
}

Values dequantize_ref(const Values& a) {
  dequantize_meta(a);
  const Tensor q = a.at(0).tensor().contiguous(), s = a.at(1).tensor().contiguous();
  const int64_t k = row_len(q);
  Tensor out = Tensor::uninitialized(q.shape(), a.at(2).to_dtype());
  for (int64_t i = 0; i < q.numel(); ++i) out.set(i, q.get(i) * s.get(s.numel() == 1 ? 0 : i / k));
  return {out};
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
  out.push_back(make("e5m2", {T({5, 16}, f32), T({5, 1}, f32), DT(e5)}));
  out.push_back(make("saturates", {T_fill({6, 8}, f32, "wide"), T({1}, f32), DT(e4)}));
  out.push_back(make("special values", {T_fill({6, 8}, f32, "special"), T({6, 1}, f32), DT(e4)}));
  out.push_back(make("non-contiguous", {T({16, 5}, f32, {1, 16}), T({16, 1}, f32), DT(e4)}));
  out.push_back(make("error: scale of the wrong shape", {T({4, 8}, f32), T({8}, f32), DT(e4)}));
  out.push_back(make("error: bf16 scale", {T({4, 8}, f32), T({}, DType::BFloat16), DT(e4)}));
  out.push_back(make("error: int8 target", {T({4, 8}, f32), T({}, f32), DT(DType::Int8)}));
  out.push_back(make("error: int32 input", {T({4, 8}, DType::Int32), T({}, f32), DT(e4)}));
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
  out.push_back(make("error: f32 input", {T({4, 8}, f32), T({}, f32), DT(f32)}));
  out.push_back(make("error: scale of the wrong shape", {T({4, 8}, e4), T({4}, f32), DT(f32)}));
  out.push_back(make("error: int8 output", {T({4, 8}, e4), T({}, f32), DT(DType::Int8)}));
  return out;
}

Cost cost(const Values& a, const Values& out) {
  Cost c;
  c.bytes = static_cast<double>(a.at(0).tensor().numel() * a.at(0).tensor().itemsize());
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
        "quantized_decomposed::quantize_float8(Tensor input, Tensor scale, ScalarType dtype) -> "
        "Tensor",
        "quantized");
    op.dtypes = {DType::Float32, DType::BFloat16, DType::Float16};
    op.meta = quantize_meta;
    op.ref = quantize_ref;
    op.samples = quantize_samples;
    op.roles["scale"] = ArgRole::positive();
    op.cost = cost;
    r.add(std::move(op));
  }
  {
    OpDef op = OpDef::from_schema(
        "quantized_decomposed::dequantize_float8(Tensor input, Tensor scale, ScalarType "
        "output_dtype) -> Tensor",
        "quantized");
    op.dtypes = {DType::Float8E4M3FN, DType::Float8E5M2};
    op.meta = dequantize_meta;
    op.ref = dequantize_ref;
    op.samples = dequantize_samples;
    op.roles["scale"] = ArgRole::positive();
    op.cost = cost;
    r.add(std::move(op));
  }
}

}  // namespace crucible
