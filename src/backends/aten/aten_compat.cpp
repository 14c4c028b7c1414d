// The aten backend's compatibility table: ops PyTorch 2.x exports that libtorch 1.13 lacks,
// computed by compositions of libtorch 1.13 ops that do what PyTorch 2.x's kernels do
// (docs/aten-backend.md, "Ops libtorch 1.13 lacks, composed"), and the quantize/dequantize
// steps PyTorch and TorchAO register from Python only (quantized_decomposed, torchao), which
// no libtorch has.
//
// Every composition first runs the catalog's meta function: it raises ATen 2.x's errors for
// invalid calls (libtorch 1.13 has no checks of its own for these ops) and describes each fresh
// output (shape, strides, dtype), into which the composition's result is copied, so outputs come
// in the layouts PyTorch 2.x's kernels return (the attention ops' [B, L, H, E] outputs, for
// instance). A composition never changes a result's shape: a computed shape that differs from
// the meta function's is an internal error.
#include "backends/aten/aten_compat.h"

#include <ATen/ATen.h>
#include <c10/core/WrapDimMinimal.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string_view>

#include "crucible/core/error.h"

namespace crucible::aten {
namespace {

// The bound value of argument `name` (its schema default when the call leaves it out).
const Value& arg(const OpDef& op, const Values& args, std::string_view name) {
  const int j = op.schema.find_argument(name);
  if (j < 0) internal_error(op.name + " has no argument '" + std::string(name) + "'");
  if (static_cast<size_t>(j) < args.size()) return args[static_cast<size_t>(j)];
  const auto& d = op.schema.arguments[static_cast<size_t>(j)].default_value;
  if (d) return *d;
  static const Value none;
  return none;
}

// A tensor argument as an at::Tensor over the same memory (undefined for None).
at::Tensor tensor_arg(const OpDef& op, const Values& args, std::string_view name,
                      CallContext& ctx) {
  const Value& v = arg(op, args, name);
  if (v.is_none() || !v.tensor().defined()) return at::Tensor();
  return ctx.to_aten(v.tensor());
}

// Each computed result copied into a fresh tensor laid out as the meta function's output (its
// shape, strides and dtype); outputs the meta function gives as numbers or None are taken from it.
Values as_meta_says(const OpDef& op, const Values& meta, const std::vector<at::Tensor>& computed,
                    CallContext& ctx) {
  if (meta.size() != computed.size())
    internal_error(op.name + ": the composition computes " + std::to_string(computed.size()) +
                   " outputs, the meta function describes " + std::to_string(meta.size()));
  Values out;
  out.reserve(meta.size());
  for (size_t i = 0; i < meta.size(); ++i) {
    const Value& m = meta[i];
    if (!m.is_tensor() || !m.tensor().defined()) {
      out.push_back(m);
      continue;
    }
    const Tensor& spec = m.tensor();
    const at::Tensor& c = computed[i];
    if (!c.defined() || c.sizes() != at::IntArrayRef(spec.shape()))
      internal_error(op.name + ": the composition's output " + std::to_string(i) +
                     " does not have the meta function's shape");
    const auto dtype = to_scalar_type(spec.dtype());
    if (!dtype)
      unsupported("libtorch " TORCH_VERSION " has no dtype " +
                  std::string(dtype_code(spec.dtype())));
    at::Tensor r = at::empty_strided(spec.shape(), spec.strides(), c.options().dtype(*dtype));
    r.copy_(c);
    out.push_back(Value(ctx.from_aten(r)));
  }
  return out;
}

// squeeze.dims: each listed dim (wrapped; a 0-d tensor takes dims 0 and -1) removed where its
// size is 1, in descending order; the result is a view of self even when nothing is removed.
Values squeeze_dims(const OpDef& op, const Values& args, CallContext& ctx) {
  op.run_meta(args);
  const at::Tensor self = tensor_arg(op, args, "self", ctx);
  const int64_t nd = self.dim();
  std::vector<int64_t> dims;
  for (int64_t d : arg(op, args, "dim").to_int_list())
    dims.push_back(c10::maybe_wrap_dim(d, std::max<int64_t>(nd, 1)));
  std::sort(dims.begin(), dims.end(), std::greater<>());
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  at::Tensor r = at::alias(self);
  if (nd > 0)
    for (int64_t d : dims)
      if (r.size(d) == 1) r = r.squeeze(d);
  return {Value(ctx.from_aten(r))};
}

std::vector<at::Tensor> tensors(const std::tuple<at::Tensor, at::Tensor, at::Tensor>& t) {
  return {std::get<0>(t), std::get<1>(t), std::get<2>(t)};
}

bool reduced_float(const at::Tensor& t) {
  return t.defined() && (t.scalar_type() == at::kHalf || t.scalar_type() == at::kBFloat16);
}

// native_batch_norm as PyTorch 2.x's CPU kernel computes it: f16 and bf16 tensors in f32 (2.x's
// accumulation type; 1.13 has no f16 kernel and keeps bf16 intermediates in bf16), rounded once
// into the outputs; running stats updated in place when training. An empty input in evaluation
// mode gives empty outputs (1.13 divides by zero; the meta function raises for training).
std::vector<at::Tensor> batch_norm(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b,
                                   const at::Tensor& mean, const at::Tensor& var, bool training,
                                   double momentum, double eps) {
  if (x.numel() == 0) {
    const at::Tensor none = at::empty({0}, x.options());
    return {at::empty_like(x), none, none};
  }
  auto up = [](const at::Tensor& t) { return reduced_float(t) ? t.to(at::kFloat) : t; };
  const at::Tensor mean_up = up(mean), var_up = up(var);
  const auto r =
      at::native_batch_norm(up(x), up(w), up(b), mean_up, var_up, training, momentum, eps);
  if (training && reduced_float(mean)) mean.copy_(mean_up);
  if (training && reduced_float(var)) var.copy_(var_up);
  return tensors(r);
}

// _native_batch_norm_legit(input, weight, bias, running_mean!, running_var!, training, momentum,
// eps): native_batch_norm, which updates the running stats in place when training.
Values bn_legit(const OpDef& op, const Values& args, CallContext& ctx) {
  const Values meta = op.run_meta(args);
  const auto r =
      batch_norm(tensor_arg(op, args, "input", ctx), tensor_arg(op, args, "weight", ctx),
                 tensor_arg(op, args, "bias", ctx), tensor_arg(op, args, "running_mean", ctx),
                 tensor_arg(op, args, "running_var", ctx), arg(op, args, "training").to_bool(),
                 arg(op, args, "momentum").to_double(), arg(op, args, "eps").to_double());
  return as_meta_says(op, meta, r, ctx);
}

// _native_batch_norm_legit.no_stats: native_batch_norm without running stats.
Values bn_legit_no_stats(const OpDef& op, const Values& args, CallContext& ctx) {
  const Values meta = op.run_meta(args);
  const auto r =
      batch_norm(tensor_arg(op, args, "input", ctx), tensor_arg(op, args, "weight", ctx),
                 tensor_arg(op, args, "bias", ctx), at::Tensor(), at::Tensor(),
                 arg(op, args, "training").to_bool(), arg(op, args, "momentum").to_double(),
                 arg(op, args, "eps").to_double());
  return as_meta_says(op, meta, r, ctx);
}

// _native_batch_norm_legit_no_training: native_batch_norm with training=false (PyTorch 2.x calls
// _native_batch_norm_legit with train=false; save_mean and save_rstd are empty).
Values bn_legit_no_training(const OpDef& op, const Values& args, CallContext& ctx) {
  const Values meta = op.run_meta(args);
  const auto r =
      batch_norm(tensor_arg(op, args, "input", ctx), tensor_arg(op, args, "weight", ctx),
                 tensor_arg(op, args, "bias", ctx), tensor_arg(op, args, "running_mean", ctx),
                 tensor_arg(op, args, "running_var", ctx), false,
                 arg(op, args, "momentum").to_double(), arg(op, args, "eps").to_double());
  return as_meta_says(op, meta, r, ctx);
}

// _native_batch_norm_legit_functional: native_batch_norm on clones of the running stats, the
// updated clones returned (the arguments are not written).
Values bn_legit_functional(const OpDef& op, const Values& args, CallContext& ctx) {
  const Values meta = op.run_meta(args);
  const at::Tensor mean = tensor_arg(op, args, "running_mean", ctx).clone();
  const at::Tensor var = tensor_arg(op, args, "running_var", ctx).clone();
  std::vector<at::Tensor> out =
      batch_norm(tensor_arg(op, args, "input", ctx), tensor_arg(op, args, "weight", ctx),
                 tensor_arg(op, args, "bias", ctx), mean, var, arg(op, args, "training").to_bool(),
                 arg(op, args, "momentum").to_double(), arg(op, args, "eps").to_double());
  out.push_back(mean);
  out.push_back(var);
  return as_meta_says(op, meta, out, ctx);
}

// empty_permuted(size, physical_layout): an empty tensor of the permuted sizes (dims in
// physical_layout's order), permuted back to the logical order.
Values empty_permuted(const OpDef& op, const Values& args, CallContext& ctx) {
  op.run_meta(args);
  const std::vector<int64_t> size = arg(op, args, "size").to_int_list();
  const std::vector<int64_t> perm = arg(op, args, "physical_layout").to_int_list();
  std::vector<int64_t> physical(size.size());
  std::vector<int64_t> inverse(size.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    physical[i] = size[static_cast<size_t>(perm[i])];
    inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  }
  const auto dtype = arg(op, args, "dtype").opt_dtype();
  const auto scalar = to_scalar_type(dtype.value_or(DType::Float32));
  if (!scalar)
    unsupported("libtorch " TORCH_VERSION " has no dtype " + std::string(dtype_code(*dtype)));
  const at::Tensor t = at::empty(physical, at::TensorOptions().dtype(*scalar).device(ctx.device()));
  return {Value(ctx.from_aten(t.permute(inverse)))};
}

// ---- scaled-dot-product attention (src/ops/attention.cpp states the semantics) ----

// f16, bf16 and f32 inputs accumulate in f32 (as ATen's kernels do), f64 in f64.
at::ScalarType accumulate_type(const at::Tensor& t) {
  return t.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
}

// Key or value heads repeated for the query heads that read them (grouped-query attention:
// query head h reads head h / (Hq / Hk)).
at::Tensor query_heads(const at::Tensor& kv, int64_t hq, at::ScalarType acc) {
  const int64_t group = hq / kv.size(1);
  at::Tensor t = kv.to(acc);
  return group == 1 ? t : t.repeat_interleave(group, 1);
}

double attention_scale(const OpDef& op, const Values& args, const at::Tensor& q) {
  const auto s = arg(op, args, "scale").opt_double();
  return s ? *s : 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
}

// Scores q k^T * scale + mask, the causal mask on top (key j > i + causal_offset masked: 0 aligns
// it at the top left, S - L at the bottom right), in `acc`.
at::Tensor attention_scores(const at::Tensor& q, const at::Tensor& k, const at::Tensor& mask,
                            bool causal, double scale, at::ScalarType acc,
                            int64_t causal_offset = 0) {
  at::Tensor s = at::matmul(q.to(acc), query_heads(k, q.size(1), acc).transpose(-2, -1)).mul(scale);
  if (mask.defined()) s = s.add(mask.to(acc));
  if (causal) {
    const at::Tensor above =
        at::ones({s.size(-2), s.size(-1)}, s.options().dtype(at::kBool)).triu(1 + causal_offset);
    s = s.masked_fill(above, -std::numeric_limits<double>::infinity());
  }
  return s;
}

// exp(s - lse) per row; a row whose scores are all -inf (lse -inf) gives 0.
at::Tensor attention_probs(const at::Tensor& s, const at::Tensor& lse) {
  const double inf = std::numeric_limits<double>::infinity();
  const at::Tensor safe = at::where(lse.eq(-inf), at::zeros_like(lse), lse);
  return at::exp(s.sub(safe.unsqueeze(-1)));
}

void refuse_dropout(const OpDef& op, const Values& args) {
  if (arg(op, args, "dropout_p").to_double() != 0.0)
    unsupported(op.name +
                " with dropout_p > 0 draws its dropout mask from the device's RNG (philox "
                "state); a composition cannot reproduce it, so only dropout_p = 0 is run");
}

struct Forward {
  at::Tensor out;  // query's heads, accumulate dtype
  at::Tensor lse;  // [B, H, L], accumulate dtype
};

// The variants' differences: the mask's argument ("" for none), the causal alignment (true: at
// the bottom right, as FlashAttention aligns it) and the name of the incoming gradient.
struct Variant {
  std::string_view mask;
  bool bottom_right = false;
  std::string_view grad_out = "grad_out";
};

at::Tensor mask_arg(const OpDef& op, const Values& args, const Variant& var, CallContext& ctx) {
  return var.mask.empty() ? at::Tensor() : tensor_arg(op, args, var.mask, ctx);
}

int64_t causal_offset(const at::Tensor& q, const at::Tensor& k, const Variant& var) {
  return var.bottom_right ? k.size(2) - q.size(2) : 0;
}

Forward attention_forward(const OpDef& op, const Values& args, CallContext& ctx,
                          const Variant& var) {
  const at::Tensor q = tensor_arg(op, args, "query", ctx);
  const at::Tensor k = tensor_arg(op, args, "key", ctx);
  const at::Tensor v = tensor_arg(op, args, "value", ctx);
  const at::ScalarType acc = accumulate_type(q);
  const at::Tensor s =
      attention_scores(q, k, mask_arg(op, args, var, ctx), arg(op, args, "is_causal").to_bool(),
                       attention_scale(op, args, q), acc, causal_offset(q, k, var));
  Forward f;
  f.lse = at::logsumexp(s, -1);
  f.out = at::matmul(attention_probs(s, f.lse), query_heads(v, q.size(1), acc));
  return f;
}

// dQ, dK, dV and dS = P * (dP - D) (the gradient of an additive mask).
std::vector<at::Tensor> attention_backward(const OpDef& op, const Values& args, CallContext& ctx,
                                           const Variant& var) {
  const at::Tensor q = tensor_arg(op, args, "query", ctx);
  const at::Tensor k = tensor_arg(op, args, "key", ctx);
  const at::Tensor v = tensor_arg(op, args, "value", ctx);
  const at::ScalarType acc = accumulate_type(q);
  const double scale = attention_scale(op, args, q);
  const int64_t hq = q.size(1);
  const at::Tensor s =
      attention_scores(q, k, mask_arg(op, args, var, ctx), arg(op, args, "is_causal").to_bool(),
                       scale, acc, causal_offset(q, k, var));
  at::Tensor lse = tensor_arg(op, args, "logsumexp", ctx).to(acc);
  if (lse.dim() == 4) lse = lse.squeeze(-1);                          // cuDNN's [B, H, L, 1]
  if (lse.size(-1) != q.size(2)) lse = lse.narrow(-1, 0, q.size(2));  // padded rows
  const at::Tensor p = attention_probs(s, lse);
  const at::Tensor go = tensor_arg(op, args, var.grad_out, ctx).to(acc);
  const at::Tensor o = tensor_arg(op, args, "out", ctx).to(acc);
  const at::Tensor d = go.mul(o).sum(-1, true);
  const at::Tensor ds = p.mul(at::matmul(go, query_heads(v, hq, acc).transpose(-2, -1)).sub(d));
  const at::Tensor dq = at::matmul(ds, query_heads(k, hq, acc)).mul(scale);
  at::Tensor dk = at::matmul(ds.transpose(-2, -1), q.to(acc)).mul(scale);
  at::Tensor dv = at::matmul(p.transpose(-2, -1), go);
  if (q.size(2) == 0) {
    // No query rows: the key and value gradients are sums of nothing. A product over an empty
    // inner dim is not always written on CUDA (uninitialised memory came back), so say it.
    dk = at::zeros_like(dk);
    dv = at::zeros_like(dv);
  }
  const int64_t hk = k.size(1);
  if (hq != hk) {
    const int64_t g = hq / hk;
    dk = dk.view({dk.size(0), hk, g, dk.size(2), dk.size(3)}).sum(2);
    dv = dv.view({dv.size(0), hk, g, dv.size(2), dv.size(3)}).sum(2);
  }
  return {dq, dk, dv, ds};
}

std::vector<at::Tensor> gradients(std::vector<at::Tensor> g) {
  g.pop_back();
  return g;
}

Values flash_cpu(const OpDef& op, const Values& args, CallContext& ctx) {
  const Values meta = op.run_meta(args);
  refuse_dropout(op, args);
  const Forward f = attention_forward(op, args, ctx, {.mask = "attn_mask"});
  return as_meta_says(op, meta, {f.out, f.lse}, ctx);
}

Values flash_cpu_backward(const OpDef& op, const Values& args, CallContext& ctx) {
  const Values meta = op.run_meta(args);
  refuse_dropout(op, args);
  return as_meta_says(op, meta, gradients(attention_backward(op, args, ctx, {.mask = "attn_mask"})),
                      ctx);
}

// cuDNN's forward: out, logsumexp [B, H, L, 1], no cum_seq / debug mask, max_q / max_k and the
// RNG state (0-d i64 zeros at dropout_p = 0) as the meta function gives them.
Values cudnn(const OpDef& op, const Values& args, CallContext& ctx) {
  const Values meta = op.run_meta(args);
  refuse_dropout(op, args);
  const Forward f = attention_forward(op, args, ctx, {.mask = "attn_bias"});
  const at::Tensor zero = at::zeros({}, f.out.options().dtype(at::kLong));
  return as_meta_says(op, meta,
                      {f.out, f.lse.unsqueeze(-1), at::Tensor(), at::Tensor(), at::Tensor(),
                       at::Tensor(), zero, zero, at::Tensor()},
                      ctx);
}

Values cudnn_backward(const OpDef& op, const Values& args, CallContext& ctx) {
  const Values meta = op.run_meta(args);
  refuse_dropout(op, args);
  return as_meta_says(op, meta, gradients(attention_backward(op, args, ctx, {.mask = "attn_bias"})),
                      ctx);
}

// FlashAttention's forward: causal at the bottom right, logsumexp +inf for a row that sees no
// key; no cum_seq, max_q / max_k from the meta function, rng_state / unused zeros (their values
// are unspecified at dropout_p = 0), an empty debug mask.
Values flash(const OpDef& op, const Values& args, CallContext& ctx) {
  const Values meta = op.run_meta(args);
  refuse_dropout(op, args);
  const Forward f = attention_forward(op, args, ctx, {.mask = "", .bottom_right = true});
  const double inf = std::numeric_limits<double>::infinity();
  const at::Tensor lse = at::where(f.lse.eq(-inf), at::full_like(f.lse, inf), f.lse);
  const auto i64 = f.out.options().dtype(at::kLong);
  return as_meta_says(op, meta,
                      {f.out, lse, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(),
                       at::zeros({2}, i64), at::zeros({}, i64), at::empty({0}, f.out.options())},
                      ctx);
}

Values flash_backward(const OpDef& op, const Values& args, CallContext& ctx) {
  const Values meta = op.run_meta(args);
  refuse_dropout(op, args);
  return as_meta_says(
      op, meta, gradients(attention_backward(op, args, ctx, {.mask = "", .bottom_right = true})),
      ctx);
}

// Memory-efficient attention's forward: causal at the top left, logsumexp 0 for a row whose keys
// are all masked, padded with +inf to a multiple of 32 rows (empty without compute_log_sumexp).
Values efficient(const OpDef& op, const Values& args, CallContext& ctx) {
  const Values meta = op.run_meta(args);
  refuse_dropout(op, args);
  const Forward f = attention_forward(op, args, ctx, {.mask = "attn_bias"});
  const double inf = std::numeric_limits<double>::infinity();
  at::Tensor lse = at::where(f.lse.eq(-inf), at::zeros_like(f.lse), f.lse);
  const int64_t m = meta[1].tensor().size(2);
  if (m == 0) {
    lse = lse.narrow(-1, 0, 0);
  } else if (m > lse.size(-1)) {
    lse = at::cat({lse, at::full({lse.size(0), lse.size(1), m - lse.size(-1)}, inf, lse.options())},
                  -1);
  }
  const at::Tensor zero = at::zeros({}, f.out.options().dtype(at::kLong));
  return as_meta_says(op, meta, {f.out, lse, zero, zero}, ctx);
}

// The gradients and, when the meta function gives one (attn_bias and grad_input_mask[3]),
// grad_bias = dS.
Values efficient_backward(const OpDef& op, const Values& args, CallContext& ctx) {
  const Values meta = op.run_meta(args);
  refuse_dropout(op, args);
  std::vector<at::Tensor> g =
      attention_backward(op, args, ctx, {.mask = "attn_bias", .grad_out = "grad_out_"});
  if (!meta[3].is_tensor()) g.back() = at::Tensor();
  return as_meta_says(op, meta, g, ctx);
}

// --- quantized_decomposed: the quantize and dequantize steps of the quantization recipes ---
// PyTorch registers them from Python (torch/ao/quantization/fx/_decomposed.py), so no libtorch
// has them in C++; these are the catalog's definitions (src/ops/quantized_qdq.cpp) in ATen ops:
// x / scale + zero_point in double, rounded half to even, a NaN quantized to 0, clamped; (q - zp) *
// scale in double, rounded once to the output dtype.

at::ScalarType scalar_type_of(DType t) {
  const auto s = to_scalar_type(t);
  if (!s) unsupported("libtorch " TORCH_VERSION " has no dtype " + std::string(dtype_code(t)));
  return *s;
}

at::Tensor quantized(const at::Tensor& x, const at::Tensor& scale, const at::Tensor& zp,
                     const OpDef& op, const Values& args) {
  at::Tensor v = x.to(at::kDouble).div(scale.to(at::kDouble));
  if (zp.defined()) v = v.add(zp.to(at::kDouble));
  v = at::round(v);
  v = at::where(v.isnan(), at::zeros_like(v), v);
  v = v.clamp(static_cast<double>(arg(op, args, "quant_min").to_int()),
              static_cast<double>(arg(op, args, "quant_max").to_int()));
  return v.to(scalar_type_of(arg(op, args, "dtype").to_dtype()));
}

at::Tensor dequantized(const at::Tensor& q, const at::Tensor& scale, const at::Tensor& zp,
                       DType out) {
  at::Tensor v = q.to(at::kDouble);
  if (zp.defined()) v = v.sub(zp.to(at::kDouble));
  return v.mul(scale.to(at::kDouble)).to(scalar_type_of(out));
}

// The per-token parameters ([..., 1]) and per-channel ones (size C at `axis`, 1 elsewhere)
// shaped to broadcast against the input.
std::vector<int64_t> per_token_shape(const at::Tensor& x) {
  std::vector<int64_t> s(x.sizes().begin(), x.sizes().end());
  if (!s.empty()) s.back() = 1;
  return s;
}

at::Tensor shaped(const at::Tensor& p, const std::vector<int64_t>& shape) {
  return p.defined() ? p.reshape(shape) : p;
}

Values choose_qparams_per_token(const OpDef& op, const Values& args, CallContext& ctx) {
  const Values meta = op.run_meta(args);
  const at::Tensor x = tensor_arg(op, args, "input", ctx);
  const at::ScalarType st = scalar_type_of(meta[0].tensor().dtype());
  at::Tensor scale = x.to(at::kDouble).abs().amax(-1, true);
  scale = at::where(scale.isnan(), scale, scale.clamp_min(1e-5)).div(127.0).to(st);
  return as_meta_says(op, meta, {scale, at::zeros_like(scale)}, ctx);
}

Values quantize_per_token(const OpDef& op, const Values& args, CallContext& ctx) {
  const Values meta = op.run_meta(args);
  const at::Tensor x = tensor_arg(op, args, "input", ctx);
  const std::vector<int64_t> ps = per_token_shape(x);
  return as_meta_says(op, meta,
                      {quantized(x, shaped(tensor_arg(op, args, "scales", ctx), ps),
                                 shaped(tensor_arg(op, args, "zero_points", ctx), ps), op, args)},
                      ctx);
}

Values dequantize_per_token(const OpDef& op, const Values& args, CallContext& ctx) {
  const Values meta = op.run_meta(args);
  const at::Tensor q = tensor_arg(op, args, "input", ctx);
  const std::vector<int64_t> ps = per_token_shape(q);
  return as_meta_says(
      op, meta,
      {dequantized(q, shaped(tensor_arg(op, args, "scales", ctx), ps),
                   shaped(tensor_arg(op, args, "zero_points", ctx), ps), meta[0].tensor().dtype())},
      ctx);
}

std::vector<int64_t> per_channel_shape(const at::Tensor& x, int64_t axis) {
  std::vector<int64_t> s(static_cast<size_t>(x.dim()), 1);
  s[static_cast<size_t>(axis)] = x.size(axis);
  return s;
}

Values quantize_per_channel(const OpDef& op, const Values& args, CallContext& ctx) {
  const Values meta = op.run_meta(args);
  const at::Tensor x = tensor_arg(op, args, "input", ctx);
  const std::vector<int64_t> ps = per_channel_shape(x, arg(op, args, "axis").to_int());
  return as_meta_says(op, meta,
                      {quantized(x, shaped(tensor_arg(op, args, "scales", ctx), ps),
                                 shaped(tensor_arg(op, args, "zero_points", ctx), ps), op, args)},
                      ctx);
}

Values dequantize_per_channel(const OpDef& op, const Values& args, CallContext& ctx) {
  const Values meta = op.run_meta(args);
  const at::Tensor q = tensor_arg(op, args, "input", ctx);
  const std::vector<int64_t> ps = per_channel_shape(q, arg(op, args, "axis").to_int());
  return as_meta_says(
      op, meta,
      {dequantized(q, shaped(tensor_arg(op, args, "scales", ctx), ps),
                   shaped(tensor_arg(op, args, "zero_points", ctx), ps), meta[0].tensor().dtype())},
      ctx);
}

// Groups of group_size along the last dim of a 2-d input: one parameter per group.
Values quantize_per_channel_group(const OpDef& op, const Values& args, CallContext& ctx) {
  const Values meta = op.run_meta(args);
  const at::Tensor x = tensor_arg(op, args, "input", ctx);
  const int64_t g = arg(op, args, "group_size").to_int();
  const at::Tensor q =
      quantized(x.reshape({-1, g}), shaped(tensor_arg(op, args, "scales", ctx), {-1, 1}),
                shaped(tensor_arg(op, args, "zero_points", ctx), {-1, 1}), op, args);
  return as_meta_says(op, meta, {q.reshape(x.sizes())}, ctx);
}

Values dequantize_per_channel_group(const OpDef& op, const Values& args, CallContext& ctx) {
  const Values meta = op.run_meta(args);
  const at::Tensor q = tensor_arg(op, args, "input", ctx);
  const int64_t g = arg(op, args, "group_size").to_int();
  const at::Tensor x = dequantized(
      q.reshape({-1, g}), shaped(tensor_arg(op, args, "scales", ctx), {-1, 1}),
      shaped(tensor_arg(op, args, "zero_points", ctx), {-1, 1}), meta[0].tensor().dtype());
  return as_meta_says(op, meta, {x.reshape(q.sizes())}, ctx);
}

// --- torchao's float8 steps (src/ops/quantized_float8.cpp): x / scale in double, clamped to
// the float8 dtype's largest finite value (NaN stays NaN), rounded once; q * scale in double. A
// scale of one element is tensor-wise; a block-wise one is repeated over each dim's block.

at::Tensor expanded_scale(const at::Tensor& scale, const at::Tensor& x) {
  if (scale.numel() == 1 || scale.sizes() == x.sizes()) return scale.to(at::kDouble);
  at::Tensor s = scale.to(at::kDouble);
  for (int64_t d = 0; d < x.dim(); ++d)
    if (s.size(d) != x.size(d)) s = s.repeat_interleave(x.size(d) / s.size(d), d);
  return s;
}

Values quantize_float8(const OpDef& op, const Values& args, CallContext& ctx) {
  const Values meta = op.run_meta(args);
  const at::Tensor x = tensor_arg(op, args, "tensor", ctx);
  const DType dt = meta[0].tensor().dtype();
  const at::ScalarType st = scalar_type_of(dt);
  const double mx = float_info(dt).max;
  const at::Tensor v =
      x.to(at::kDouble).div(expanded_scale(tensor_arg(op, args, "scale", ctx), x)).clamp(-mx, mx);
  return as_meta_says(op, meta, {v.to(st)}, ctx);
}

Values dequantize_float8(const OpDef& op, const Values& args, CallContext& ctx) {
  const Values meta = op.run_meta(args);
  const at::Tensor q = tensor_arg(op, args, "tensor", ctx);
  const at::ScalarType st = scalar_type_of(meta[0].tensor().dtype());
  const at::Tensor v = q.to(at::kDouble).mul(expanded_scale(tensor_arg(op, args, "scale", ctx), q));
  return as_meta_says(op, meta, {v.to(st)}, ctx);
}

const std::map<std::string, Composition, std::less<>>& table() {
  static const std::map<std::string, Composition, std::less<>> t = {
      {"aten.squeeze.dims", {squeeze_dims}},
      {"aten._native_batch_norm_legit.default", {bn_legit}},
      {"aten._native_batch_norm_legit.no_stats", {bn_legit_no_stats}},
      {"aten._native_batch_norm_legit_no_training.default", {bn_legit_no_training}},
      {"aten._native_batch_norm_legit_functional.default", {bn_legit_functional}},
      {"aten.empty_permuted.default", {empty_permuted}},
      {"aten._scaled_dot_product_flash_attention_for_cpu.default", {flash_cpu}},
      {"aten._scaled_dot_product_flash_attention_for_cpu_backward.default", {flash_cpu_backward}},
      {"aten._scaled_dot_product_cudnn_attention.default", {cudnn}},
      {"aten._scaled_dot_product_cudnn_attention_backward.default", {cudnn_backward}},
      {"aten._scaled_dot_product_flash_attention.default", {flash}},
      {"aten._scaled_dot_product_flash_attention_backward.default", {flash_backward}},
      {"aten._scaled_dot_product_efficient_attention.default", {efficient}},
      {"aten._scaled_dot_product_efficient_attention_backward.default", {efficient_backward}},
      {"quantized_decomposed.choose_qparams_per_token.default", {choose_qparams_per_token}},
      {"quantized_decomposed.quantize_per_token.default", {quantize_per_token}},
      {"quantized_decomposed.dequantize_per_token.default", {dequantize_per_token}},
      {"quantized_decomposed.quantize_per_channel.default", {quantize_per_channel}},
      {"quantized_decomposed.dequantize_per_channel.default", {dequantize_per_channel}},
      {"quantized_decomposed.quantize_per_channel_group.default", {quantize_per_channel_group}},
      {"quantized_decomposed.dequantize_per_channel_group.default", {dequantize_per_channel_group}},
      {"torchao.quantize_affine_float8_non_decomposed.default", {quantize_float8}},
      {"torchao.dequantize_affine_float8_non_decomposed.default", {dequantize_float8}},
  };
  return t;
}

}  // namespace

const Composition* find_composition(const std::string& op_name) {
  const auto& t = table();
  auto it = t.find(op_name);
  return it == t.end() ? nullptr : &it->second;
}

}  // namespace crucible::aten
