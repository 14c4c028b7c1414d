// The quantize and dequantize steps the quantization recipes lower to, with the schemas of
// PyTorch's quantized_decomposed library (torch/ao/quantization/fx/_decomposed.py):
// choose_qparams_per_token, quantize_per_token, dequantize_per_token, quantize_per_channel,
// dequantize_per_channel, quantize_per_channel_group, dequantize_per_channel_group.
//
// Semantics: q = clamp(round_half_even(x / scale + zero_point), quant_min, quant_max) in the
// integer dtype, x / scale computed exactly in double (PyTorch's decomposition multiplies by
// 1 / scale in the input's dtype, which rounds differently at ties; crucible's definition is
// the exact one; a NaN quantizes to 0 clamped into range), and x = (q - zero_point) * scale rounded
// once to the output dtype. choose_qparams_per_token: scale = max(amax(|x|, last dim), 1e-5) / 127
// (int8), of x's dtype (f32 for f16 inputs), zero points zeros of the scale's dtype and shape
// ([..., 1]).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/ops/destination.h"
#include "ops/meta_fn.h"
#include "ops/quantized_internal.h"
#include "ops/samples.h"

namespace crucible {
namespace {

using namespace samples;  // NOLINT(google-build-using-namespace): the sample vocabulary

bool is_input_float(DType t) {
  return t == DType::Float32 || t == DType::BFloat16 || t == DType::Float16;
}

// _quant_min_max_bounds_check.
void check_bounds(int64_t qmin, int64_t qmax, DType dtype) {
  int64_t lo = 0, hi = 0;
  switch (dtype) {
    case DType::UInt8:
      lo = 0, hi = 255;
      break;
    case DType::Int8:
      lo = -128, hi = 127;
      break;
    case DType::Int16:
      lo = -32768, hi = 32767;
      break;
    case DType::Int32:
      lo = INT32_MIN, hi = INT32_MAX;
      break;
    default:
      op_error("Unsupported dtype: " + std::string(dtype_code(dtype)));
  }
  if (qmin < lo)
    op_error("quant_min out of bound for dtype, quant_min_lower_bound: " + std::to_string(lo) +
             " quant_min: " + std::to_string(qmin));
  if (qmax > hi)
    op_error("quant_max out of bound for dtype, quant_max_upper_bound: " + std::to_string(hi) +
             " quant_max: " + std::to_string(qmax));
  if (qmin > qmax)
    op_error("quant_min (" + std::to_string(qmin) + ") must not exceed quant_max (" +
             std::to_string(qmax) + ")");
}

void check_input(const Tensor& x, const char* op) {
  if (!is_input_float(x.dtype()))
    op_error(std::string(op) +
             ": expecting input to be a float32, bfloat16 or float16 tensor, got " +
             scalar_type_name(x.dtype()));
}

// A NaN quantizes to 0 (clamped into range): a defined value where PyTorch's float-to-int
// conversion is undefined.
double quantize_one(double x, double scale, double zp, double qmin, double qmax) {
  const double v = std::nearbyint(x / scale + zp);
  return std::clamp(std::isnan(v) ? 0.0 : v, qmin, qmax);
}

// Per token: one parameter per row of the last dim.
Shape per_token_param_shape(const Tensor& x) {
  Shape s = x.shape();
  if (!s.empty()) s.back() = 1;
  return s;
}

void check_per_token_params(const Tensor& x, const Tensor& scales, const Tensor& zps) {
  const int64_t rows = x.dim() == 0 ? 1 : x.numel() / std::max<int64_t>(x.size(x.dim() - 1), 1);
  if (scales.numel() != rows || zps.numel() != rows)
    op_error("quantize_per_token: expect " + std::to_string(rows) +
             " scales and zero points (one per token), got " + std::to_string(scales.numel()) +
             " and " + std::to_string(zps.numel()));
}

void check_per_channel_params(const Tensor& x, const Tensor& scales,
                              const std::optional<Tensor>& zps, int64_t axis) {
  if (axis < 0 || axis >= x.dim())
    op_error("Expecting axis to be < " + std::to_string(x.dim()) + ", got " + std::to_string(axis));
  const int64_t c = x.size(axis);
  if (scales.dim() != 1 || scales.numel() != c || (zps && zps->numel() != c))
    op_error("Expecting scales and zero_points to have " + std::to_string(c) +
             " elements (input.size(axis)), got " + std::to_string(scales.numel()));
}

void check_group_params(const Tensor& x, const Tensor& scales, const std::optional<Tensor>& zps,
                        int64_t group) {
  if (group <= 1) op_error("group_size must be > 1, got " + std::to_string(group));
  if (x.dim() != 2) op_error("Expecting input to be a 2-d tensor, got " + std::to_string(x.dim()));
  if (x.size(1) % group != 0)
    op_error("input.shape[-1] (" + std::to_string(x.size(1)) +
             ") must be a multiple of group_size (" + std::to_string(group) + ")");
  const int64_t groups = x.numel() / group;
  if (scales.numel() != groups || (zps && zps->numel() != groups))
    op_error("Expecting " + std::to_string(groups) +
             " scales and zero points (one per group), got " + std::to_string(scales.numel()));
}

// Runs q or dq over a contiguous copy of `x` with parameter index param(i), into `out`
// (contiguous, shaped like x).
template <typename Param>
void map_params(const Tensor& x, const Tensor& out, const Tensor& scales,
                const std::optional<Tensor>& zps, Param param, bool quantize, double qmin,
                double qmax) {
  const Tensor xc = x.contiguous(), sc = scales.contiguous();
  const Tensor zc = zps ? zps->contiguous() : Tensor();
  for (int64_t i = 0; i < xc.numel(); ++i) {
    const int64_t p = param(i);
    const double s = sc.get(p), z = zps ? zc.get(p) : 0.0;
    if (quantize)
      out.set_int(i, static_cast<int64_t>(quantize_one(xc.get(i), s, z, qmin, qmax)));
    else
      out.set(i, (xc.get(i) - z) * s);
  }
}

// --- per token ---

Values choose_qparams_meta(const Args& args) {
  const Tensor& x = args.tensor("input");
  check_input(x, "choose_qparams_per_token");
  if (args.dtype("dtype") != DType::Int8)
    op_error("unsupported dtype in choose_qparams_per_token: " +
             std::string(dtype_code(args.dtype("dtype"))));
  if (x.dim() == 0) op_error("choose_qparams_per_token: expecting at least a 1-d input");
  const DType st = x.dtype() == DType::Float16 ? DType::Float32 : x.dtype();
  return {meta::fresh(per_token_param_shape(x), st), meta::fresh(per_token_param_shape(x), st)};
}

// Symmetric int8 parameters per row: scales from each row's largest magnitude, zero points 0
// (the second output, allocated zero-filled).
void choose_qparams_impl(const Args& args, const Values& outputs) {
  const Tensor x = args.tensor("input").contiguous();
  const int64_t k = x.size(x.dim() - 1), rows = k == 0 ? 0 : x.numel() / k;
  const Tensor& scales = outputs.at(0).tensor();
  for (int64_t r = 0; r < rows; ++r) {
    double amax = 0;
    for (int64_t q = 0; q < k; ++q) {
      const double v = std::abs(x.get(r * k + q));
      if (std::isnan(v) || v > amax) amax = v;  // amax propagates NaN
      if (std::isnan(amax)) break;
    }
    scales.set(r, (std::isnan(amax) ? amax : std::max(amax, 1e-5)) / 127.0);
  }
}

Values quantize_per_token_meta(const Args& args) {
  const Tensor& x = args.tensor("input");
  check_input(x, "quantize_per_token");
  check_bounds(args.integer("quant_min"), args.integer("quant_max"), args.dtype("dtype"));
  check_per_token_params(x, args.tensor("scales"), args.tensor("zero_points"));
  return {meta::fresh(x.shape(), args.dtype("dtype"))};
}

int64_t row_of(int64_t i, const Tensor& x) {
  const int64_t k = x.dim() == 0 ? 1 : x.size(x.dim() - 1);
  return k == 0 ? 0 : i / k;
}

void quantize_per_token_impl(const Args& args, const Values& outputs) {
  const Tensor& x = args.tensor("input");
  map_params(
      x, outputs.at(0).tensor(), args.tensor("scales"), args.tensor("zero_points"),
      [&](int64_t i) { return row_of(i, x); }, true, static_cast<double>(args.integer("quant_min")),
      static_cast<double>(args.integer("quant_max")));
}

Values dequantize_per_token_meta(const Args& args) {
  const Tensor& q = args.tensor("input");
  check_bounds(args.integer("quant_min"), args.integer("quant_max"), args.dtype("dtype"));
  if (q.dtype() != args.dtype("dtype"))
    op_error("Expecting input to have dtype " + std::string(dtype_code(args.dtype("dtype"))) +
             ", got " + std::string(dtype_code(q.dtype())));
  check_per_token_params(q, args.tensor("scales"), args.tensor("zero_points"));
  if (!is_input_float(args.dtype("output_dtype")) && args.dtype("output_dtype") != DType::Float64)
    op_error("dequantize_per_token: output_dtype must be floating");
  return {meta::fresh(q.shape(), args.dtype("output_dtype"))};
}

void dequantize_per_token_impl(const Args& args, const Values& outputs) {
  const Tensor& q = args.tensor("input");
  map_params(
      q, outputs.at(0).tensor(), args.tensor("scales"), args.tensor("zero_points"),
      [&](int64_t i) { return row_of(i, q); }, false, 0, 0);
}

// --- per channel ---

int64_t channel_of(int64_t i, const Tensor& x, int64_t axis) {
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < x.dim(); ++d) inner *= x.size(d);
  return (i / inner) % x.size(axis);
}

Values quantize_per_channel_meta(const Args& args) {
  const Tensor& x = args.tensor("input");
  check_input(x, "quantize_per_channel");
  check_bounds(args.integer("quant_min"), args.integer("quant_max"), args.dtype("dtype"));
  check_per_channel_params(x, args.tensor("scales"), args.tensor("zero_points"),
                           args.integer("axis"));
  return {meta::fresh(x.shape(), args.dtype("dtype"))};
}

void quantize_per_channel_impl(const Args& args, const Values& outputs) {
  const Tensor& x = args.tensor("input");
  const int64_t axis = args.integer("axis");
  map_params(
      x, outputs.at(0).tensor(), args.tensor("scales"), args.tensor("zero_points"),
      [&](int64_t i) { return channel_of(i, x, axis); }, true,
      static_cast<double>(args.integer("quant_min")),
      static_cast<double>(args.integer("quant_max")));
}

Values dequantize_per_channel_meta(const Args& args) {
  const Tensor& q = args.tensor("input");
  check_bounds(args.integer("quant_min"), args.integer("quant_max"), args.dtype("dtype"));
  if (q.dtype() != args.dtype("dtype"))
    op_error("Expecting input to have dtype " + std::string(dtype_code(args.dtype("dtype"))) +
             ", got " + std::string(dtype_code(q.dtype())));
  check_per_channel_params(q, args.tensor("scales"), args.opt_tensor("zero_points"),
                           args.integer("axis"));
  return {meta::fresh(q.shape(), args.opt_dtype("out_dtype").value_or(DType::Float32))};
}

void dequantize_per_channel_impl(const Args& args, const Values& outputs) {
  const Tensor& q = args.tensor("input");
  const int64_t axis = args.integer("axis");
  map_params(
      q, outputs.at(0).tensor(), args.tensor("scales"), args.opt_tensor("zero_points"),
      [&](int64_t i) { return channel_of(i, q, axis); }, false, 0, 0);
}

// --- per channel group ---

Values quantize_group_meta(const Args& args) {
  const Tensor& x = args.tensor("input");
  check_input(x, "quantize_per_channel_group");
  check_bounds(args.integer("quant_min"), args.integer("quant_max"), args.dtype("dtype"));
  check_group_params(x, args.tensor("scales"), args.tensor("zero_points"),
                     args.integer("group_size"));
  return {meta::fresh(x.shape(), args.dtype("dtype"))};
}

void quantize_group_impl(const Args& args, const Values& outputs) {
  const int64_t g = args.integer("group_size");
  map_params(
      args.tensor("input"), outputs.at(0).tensor(), args.tensor("scales"),
      args.tensor("zero_points"), [g](int64_t i) { return i / g; }, true,
      static_cast<double>(args.integer("quant_min")),
      static_cast<double>(args.integer("quant_max")));
}

Values dequantize_group_meta(const Args& args) {
  const Tensor& q = args.tensor("input");
  check_bounds(args.integer("quant_min"), args.integer("quant_max"), args.dtype("dtype"));
  if (q.dtype() != args.dtype("dtype"))
    op_error("Expecting input to have dtype " + std::string(dtype_code(args.dtype("dtype"))) +
             ", got " + std::string(dtype_code(q.dtype())));
  check_group_params(q, args.tensor("scales"), args.opt_tensor("zero_points"),
                     args.integer("group_size"));
  const DType out = args.dtype("output_dtype");
  if (!is_input_float(out) && out != DType::Float64)
    op_error("dequantize_per_channel_group: output_dtype must be floating");
  return {meta::fresh(q.shape(), out)};
}

void dequantize_group_impl(const Args& args, const Values& outputs) {
  const int64_t g = args.integer("group_size");
  map_params(
      args.tensor("input"), outputs.at(0).tensor(), args.tensor("scales"),
      args.opt_tensor("zero_points"), [g](int64_t i) { return i / g; }, false, 0, 0);
}

// --- samples ---

std::vector<Sample> choose_qparams_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    out.push_back(
        make("tokens [512, 4096] f32", {T({512, 4096}, DType::Float32), DT(DType::Int8)}));
    return out;
  }
  for (DType t : {DType::Float32, DType::BFloat16, DType::Float16})
    out.push_back(make("[7, 33] " + dtype_code_str(t), {T({7, 33}, t), DT(DType::Int8)}));
  out.push_back(make("3-d [2, 3, 16]", {T({2, 3, 16}, DType::Float32), DT(DType::Int8)}));
  out.push_back(
      make("integer values", {T_fill({3, 8}, DType::Float32, "integers"), DT(DType::Int8)}));
  out.push_back(
      make("special values", {T_fill({4, 9}, DType::Float32, "special"), DT(DType::Int8)}));
  out.push_back(make("non-contiguous", {T({16, 5}, DType::Float32, {1, 16}), DT(DType::Int8)}));
  out.push_back(make("error: int32 input", {T({3, 4}, DType::Int32), DT(DType::Int8)}));
  out.push_back(make("error: uint8 target", {T({3, 4}, DType::Float32), DT(DType::UInt8)}));
  return out;
}

std::vector<Sample> quantize_per_token_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  const DType f32 = DType::Float32, i8 = DType::Int8;
  if (ctx.performance) {
    out.push_back(make("tokens [512, 4096]", {T({512, 4096}, f32), T({512, 1}, f32),
                                              T({512, 1}, f32), I(-128), I(127), DT(i8)}));
    return out;
  }
  for (DType t : {f32, DType::BFloat16, DType::Float16})
    out.push_back(
        make("[7, 33] " + dtype_code_str(t), {T({7, 33}, t), T({7, 1}, DType::Float32),
                                              T({7, 1}, DType::Int64), I(-128), I(127), DT(i8)}));
  out.push_back(make("3-d", {T({2, 3, 16}, f32), T({2, 3, 1}, f32), T({2, 3, 1}, DType::Int64),
                             I(-128), I(127), DT(i8)}));
  out.push_back(make("saturates (narrow range)", {T_fill({5, 8}, f32, "wide"), T({5, 1}, f32),
                                                  T({5, 1}, DType::Int64), I(-8), I(7), DT(i8)}));
  out.push_back(make("uint8 asymmetric", {T({4, 12}, f32), T({4, 1}, f32), T({4, 1}, DType::Int64),
                                          I(0), I(255), DT(DType::UInt8)}));
  out.push_back(make("non-contiguous input", {T({16, 5}, f32, {1, 16}), T({16, 1}, f32),
                                              T({16, 1}, DType::Int64), I(-128), I(127), DT(i8)}));
  out.push_back(
      make("error: quant_min below int8",
           {T({2, 4}, f32), T({2, 1}, f32), T({2, 1}, DType::Int64), I(-200), I(127), DT(i8)}));
  out.push_back(
      make("error: one scale for two tokens",
           {T({2, 4}, f32), T({1, 1}, f32), T({1, 1}, DType::Int64), I(-128), I(127), DT(i8)}));
  out.push_back(
      make("error: f64 dtype target", {T({2, 4}, f32), T({2, 1}, f32), T({2, 1}, DType::Int64),
                                       I(-128), I(127), DT(DType::Float64)}));
  return out;
}

std::vector<Sample> dequantize_per_token_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  const DType f32 = DType::Float32, i8 = DType::Int8;
  if (ctx.performance) return out;
  for (DType t : {f32, DType::BFloat16, DType::Float16})
    out.push_back(make(
        "[7, 33] to " + dtype_code_str(t),
        {T({7, 33}, i8), T({7, 1}, f32), T({7, 1}, DType::Int64), I(-128), I(127), DT(i8), DT(t)}));
  out.push_back(make("error: input not of dtype",
                     {T({2, 4}, DType::Int32), T({2, 1}, f32), T({2, 1}, DType::Int64), I(-128),
                      I(127), DT(i8), DT(f32)}));
  return out;
}

std::vector<Sample> quantize_per_channel_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  const DType f32 = DType::Float32, i8 = DType::Int8, i64 = DType::Int64;
  if (ctx.performance) {
    out.push_back(make("weight [4096, 4096]", {T({4096, 4096}, f32), T({4096}, f32), T({4096}, i64),
                                               I(0), I(-128), I(127), DT(i8)}));
    return out;
  }
  for (DType t : {f32, DType::BFloat16, DType::Float16})
    out.push_back(
        make("weight [33, 16] axis 0 " + dtype_code_str(t),
             {T({33, 16}, t), T({33}, f32), T({33}, i64), I(0), I(-128), I(127), DT(i8)}));
  out.push_back(
      make("axis 1", {T({5, 12}, f32), T({12}, f32), T({12}, i64), I(1), I(-128), I(127), DT(i8)}));
  out.push_back(make("3-d axis 1", {T({2, 3, 4}, f32), T({3}, f32), T({3}, i64), I(1), I(0), I(255),
                                    DT(DType::UInt8)}));
  out.push_back(make("special values", {T_fill({6, 8}, f32, "special"), T({6}, f32), T({6}, i64),
                                        I(0), I(-128), I(127), DT(i8)}));
  out.push_back(make("error: axis out of range",
                     {T({5, 12}, f32), T({12}, f32), T({12}, i64), I(2), I(-128), I(127), DT(i8)}));
  out.push_back(make("error: scales of the wrong size",
                     {T({5, 12}, f32), T({4}, f32), T({4}, i64), I(0), I(-128), I(127), DT(i8)}));
  out.push_back(make("error: quant_max above uint8", {T({5, 12}, f32), T({5}, f32), T({5}, i64),
                                                      I(0), I(0), I(300), DT(DType::UInt8)}));
  return out;
}

std::vector<Sample> dequantize_per_channel_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  const DType f32 = DType::Float32, i8 = DType::Int8, i64 = DType::Int64;
  if (ctx.performance) return out;
  out.push_back(make("weight [33, 16] axis 0",
                     {T({33, 16}, i8), T({33}, f32), T({33}, i64), I(0), I(-128), I(127), DT(i8)}));
  out.push_back(make("no zero points, bf16 out",
                     {T({33, 16}, i8), T({33}, f32), None(), I(0), I(-128), I(127), DT(i8)},
                     {{"out_dtype", DT(DType::BFloat16)}}));
  out.push_back(make("axis 1 uint8", {T({5, 12}, DType::UInt8), T({12}, f32), T({12}, i64), I(1),
                                      I(0), I(255), DT(DType::UInt8)}));
  out.push_back(make("error: input dtype differs", {T({5, 12}, DType::Int32), T({5}, f32),
                                                    T({5}, i64), I(0), I(-128), I(127), DT(i8)}));
  return out;
}

std::vector<Sample> quantize_group_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  const DType f32 = DType::Float32, u8 = DType::UInt8;
  if (ctx.performance) return out;
  for (DType t : {f32, DType::BFloat16, DType::Float16})
    out.push_back(make("[8, 64] groups of 32, 4-bit " + dtype_code_str(t),
                       {T({8, 64}, t), T({16}, f32), T({16}, f32), I(0), I(15), DT(u8), I(32)}));
  out.push_back(make("[4, 96] groups of 16, 3-bit",
                     {T({4, 96}, f32), T({24}, f32), T({24}, f32), I(0), I(7), DT(u8), I(16)}));
  out.push_back(make("error: K not a multiple of the group",
                     {T({4, 40}, f32), T({8}, f32), T({8}, f32), I(0), I(15), DT(u8), I(32)}));
  out.push_back(make("error: too few scales",
                     {T({4, 64}, f32), T({4}, f32), T({4}, f32), I(0), I(15), DT(u8), I(32)}));
  out.push_back(make("error: 3-d input",
                     {T({2, 4, 64}, f32), T({16}, f32), T({16}, f32), I(0), I(15), DT(u8), I(32)}));
  return out;
}

std::vector<Sample> dequantize_group_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  const DType f32 = DType::Float32, u8 = DType::UInt8;
  if (ctx.performance) return out;
  for (DType t : {f32, DType::BFloat16, DType::Float16})
    out.push_back(
        make("[8, 64] groups of 32 to " + dtype_code_str(t),
             {T({8, 64}, u8), T({16}, f32), T({16}, f32), I(0), I(15), DT(u8), I(32), DT(t)}));
  out.push_back(make("no zero points",
                     {T({8, 64}, u8), T({16}, f32), None(), I(0), I(15), DT(u8), I(32), DT(f32)}));
  out.push_back(make("error: group of 1",
                     {T({8, 64}, u8), T({512}, f32), None(), I(0), I(15), DT(u8), I(1), DT(f32)}));
  return out;
}

Cost elementwise_cost(const Values& a, const Values& out) {
  Cost c;
  for (const Value& v : a)
    if (v.is_tensor()) c.bytes += static_cast<double>(v.tensor().numel() * v.tensor().itemsize());
  for (const Value& v : out)
    if (v.is_tensor()) {
      c.bytes += static_cast<double>(v.tensor().numel() * v.tensor().itemsize());
      c.flops += 3.0 * static_cast<double>(v.tensor().numel());
    }
  return c;
}

void add_op(OpRegistry& r, const char* schema, std::vector<DType> dtypes, MetaFn meta, ImplFn impl,
            SampleFn samples, const std::map<std::string, ArgRole>& roles) {
  OpDef op = OpDef::from_schema(schema, "quantized");
  op.dtypes = std::move(dtypes);
  op.meta = std::move(meta);
  op.ref = structured_ref(op.meta, std::move(impl));
  op.samples = std::move(samples);
  op.roles = roles;
  op.cost = elementwise_cost;
  r.add(std::move(op));
}

}  // namespace

void register_quantize_ops(OpRegistry& r) {
  const std::vector<DType> floats = {DType::Float32, DType::BFloat16, DType::Float16};
  const std::vector<DType> ints = {DType::Int8, DType::UInt8, DType::Int32};
  const std::map<std::string, ArgRole> pos = {{"scales", ArgRole::positive()}};
  add_op(r,
         "quantized_decomposed::choose_qparams_per_token(Tensor input, ScalarType dtype) -> "
         "(Tensor, Tensor)",
         floats, choose_qparams_meta, choose_qparams_impl, choose_qparams_samples, {});
  add_op(r,
         "quantized_decomposed::quantize_per_token(Tensor input, Tensor scales, Tensor "
         "zero_points, int quant_min, int quant_max, ScalarType dtype) -> Tensor",
         floats, quantize_per_token_meta, quantize_per_token_impl, quantize_per_token_samples, pos);
  add_op(r,
         "quantized_decomposed::dequantize_per_token(Tensor input, Tensor scales, Tensor "
         "zero_points, int quant_min, int quant_max, ScalarType dtype, ScalarType "
         "output_dtype) -> Tensor",
         ints, dequantize_per_token_meta, dequantize_per_token_impl, dequantize_per_token_samples,
         pos);
  add_op(r,
         "quantized_decomposed::quantize_per_channel(Tensor input, Tensor scales, Tensor "
         "zero_points, int axis, int quant_min, int quant_max, ScalarType dtype) -> Tensor",
         floats, quantize_per_channel_meta, quantize_per_channel_impl, quantize_per_channel_samples,
         pos);
  add_op(r,
         "quantized_decomposed::dequantize_per_channel(Tensor input, Tensor scales, Tensor? "
         "zero_points, int axis, int quant_min, int quant_max, ScalarType dtype, *, "
         "ScalarType? out_dtype=None) -> Tensor",
         ints, dequantize_per_channel_meta, dequantize_per_channel_impl,
         dequantize_per_channel_samples, pos);
  add_op(r,
         "quantized_decomposed::quantize_per_channel_group(Tensor input, Tensor scales, Tensor "
         "zero_points, int quant_min, int quant_max, ScalarType dtype, int group_size) -> "
         "Tensor",
         floats, quantize_group_meta, quantize_group_impl, quantize_group_samples, pos);
  add_op(r,
         "quantized_decomposed::dequantize_per_channel_group(Tensor input, Tensor scales, "
         "Tensor? zero_points, int quant_min, int quant_max, ScalarType dtype, int group_size, "
         "ScalarType output_dtype) -> Tensor",
         ints, dequantize_group_meta, dequantize_group_impl, dequantize_group_samples, pos);
}

}  // namespace crucible
