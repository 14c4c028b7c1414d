// Scaled-dot-product attention as PyTorch 2.x dispatches it (the flash and memory-efficient CUDA
// variants are in attention_cuda.cpp):
// aten._scaled_dot_product_flash_attention_for_cpu.default and its _backward (what CPU eager
// runs), aten._scaled_dot_product_cudnn_attention.default and its _backward (what CUDA runs for
// f16/bf16 inputs).
//
// Reference semantics (PyTorch 2.x; transformers/attention.cpp, cpu/FlashAttentionKernel.cpp,
// cudnn/MHA.cpp):
//  - query [B, Hq, L, E], key [B, Hk, S, E], value [B, Hk, S, Ev]. Scores
//    s = q k^T * scale + attn_mask (broadcast to [B, Hq, L, S]); is_causal masks the upper
//    triangle aligned at the top left (key j > query i gets -inf), on top of a mask when both
//    are given. scale defaults to 1 / sqrt(E). out = softmax(s) v; logsumexp = log sum exp s
//    per query row (natural log; a row whose scores are all -inf gives out 0, logsumexp -inf).
//    Hq a multiple of Hk is grouped-query attention (query head h reads head h / (Hq / Hk)).
//  - Backward from the saved out and logsumexp, as the kernels compute it: P = exp(s - lse),
//    D = rowsum(grad_out * out), dV = P^T grad_out, dS = P * (grad_out v^T - D),
//    dQ = scale * dS k, dK = scale * dS^T q (summed over the query heads of a group).
//  - The CPU flash op accepts f16, bf16, f32, f64 (logsumexp in f32, f64 for f64 inputs, laid
//    out [B, L, H]: shape [B, H, L], strides (L*H, 1, H)); out and the gradients are laid out
//    [B, L, H, E] (the kernel allocates them so and returns the transposes). It refuses
//    dropout_p != 0, non-4-d inputs, head sizes that differ, masks of another dtype than f32 or
//    the query's, masks that are not 2-d or 4-d (ATen's messages).
//  - cuDNN's op computes every floating dtype (f16 and bf16 in real models; f32 and f64 too on
//    PyTorch 2.11, an f32 or f16 attn_bias with either); out and the gradients take the dim order
//    of query / key / value (alloc_with_matching_layout: dims sorted by the input's strides);
//    logsumexp is f32 [B, H, L, 1] (None when compute_log_sumexp is false); cum_seq_q / cum_seq_k /
//    debug_attn_mask are undefined (None), max_q / max_k are L and S, philox_seed /
//    philox_offset are 0-d i64 (ComparePolicy::unspecified_outputs: judged by shape and dtype
//    only). Its backward ignores the RNG
//    state, cum_seq and max arguments when dropout_p is 0.
//  - dropout_p > 0 makes the CUDA ops random: crucible's reference computes dropout_p = 0 only
//    and refuses other values as unsupported (no sample uses them).
//  - Checks ATen leaves to the kernels (reading out of bounds) are raised here with crucible's
//    messages: batch sizes, head counts (Hq a multiple of Hk), sequence lengths and dtypes that
//    differ, a mask that does not broadcast, grad/out/logsumexp of the wrong shape.
//
// NOTE: ATen's schema of _scaled_dot_product_cudnn_attention_backward types attn_bias,
// cum_seq_q and cum_seq_k as `Tensor`, yet PyTorch passes undefined tensors there (every
// recorded trace holds None); the entry declares them `Tensor?` so that those calls bind.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/ops/destination.h"
#include "ops/attention_internal.h"
#include "ops/families.h"
#include "ops/meta_fn.h"
#include "ops/norm_internal.h"
#include "ops/samples.h"
#include "ops/util.h"

namespace crucible {
namespace attention {

Shape blhe_strides(const Shape& s) { return {s[2] * s[1] * s[3], s[3], s[1] * s[3], 1}; }

Shape matching_strides(const Tensor& like, const Shape& shape) {
  const size_t n = shape.size();
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return like.stride(a) < like.stride(b); });
  Shape strides(n);
  int64_t cur = 1;
  for (int64_t d : order) {
    strides[static_cast<size_t>(d)] = cur;
    cur *= shape[static_cast<size_t>(d)];
  }
  return strides;
}

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

std::string tname(const Tensor& t) { return scalar_type_name(t.dtype()); }

Dims dims_of(const Tensor& q, const Tensor& k, const Tensor& v) {
  return {q.size(0), q.size(1), k.size(1), q.size(2), k.size(2), q.size(3), v.size(3)};
}

// What every variant needs beyond its own ATen checks: consistent sizes and dtypes (ATen's
// kernels read out of bounds otherwise). `who` prefixes the messages.
Dims check_structure(const std::string& who, const Tensor& q, const Tensor& k, const Tensor& v) {
  if (k.dtype() != q.dtype() || v.dtype() != q.dtype()) {
    op_error(who + ": query, key and value must have the same dtype, got " + tname(q) + ", " +
             tname(k) + " and " + tname(v));
  }
  if (k.size(0) != q.size(0) || v.size(0) != q.size(0)) {
    op_error(who + ": query, key and value must have the same batch size, got " +
             shape_str(q.shape()) + ", " + shape_str(k.shape()) + " and " + shape_str(v.shape()));
  }
  if (k.size(1) != v.size(1) || k.size(2) != v.size(2)) {
    op_error(who + ": key and value must have the same number of heads and sequence length, got " +
             shape_str(k.shape()) + " and " + shape_str(v.shape()));
  }
  if (q.size(3) != k.size(3)) {
    op_error(who + ": query and key must have the same head size, got " + shape_str(q.shape()) +
             " and " + shape_str(k.shape()));
  }
  if (k.size(1) == 0 ? q.size(1) != 0 : q.size(1) % k.size(1) != 0) {
    op_error(who + ": the number of heads of key and value (" + std::to_string(k.size(1)) +
             ") must divide the number of heads of query (" + std::to_string(q.size(1)) + ")");
  }
  return dims_of(q, k, v);
}

void check_4d(const std::string& who, const std::string& msg, const Tensor& q, const Tensor& k,
              const Tensor& v) {
  if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4) op_error(who + ": " + msg);
}

// A mask must broadcast to the scores' shape [B, Hq, L, S].
void check_mask_broadcast(const std::string& who, const Tensor& m, const Dims& d) {
  const Shape target{d.b, d.hq, d.l, d.s};
  bool ok = m.dim() <= 4;
  for (int64_t i = 0; ok && i < m.dim(); ++i) {
    const int64_t t = target[static_cast<size_t>(4 - m.dim() + i)];
    ok = m.size(i) == t || m.size(i) == 1;
  }
  if (!ok) {
    op_error(who + ": attn_mask of shape " + shape_str(m.shape()) +
             " cannot be broadcast to the scores' shape " + shape_str(target));
  }
}

void check_shape(const std::string& who, const char* name, const Tensor& t, const Shape& want) {
  if (t.shape() != want) {
    op_error(who + ": " + name + " must have shape " + shape_str(want) + ", got " +
             shape_str(t.shape()));
  }
}

double scale_of(const Value& scale, int64_t e) {
  const std::optional<double> s = scale.opt_double();
  return s ? *s : 1.0 / std::sqrt(static_cast<double>(e));
}

// ---------------------------------------------------------------------------------------------
// The f64 computation shared by every variant.

Call make_call(const Tensor& q, const Tensor& k, const Tensor& v, const OptT& mask, bool causal,
               double scale) {
  Call c;
  c.d = dims_of(q, k, v);
  c.q = q.to(DType::Float64).contiguous();
  c.k = k.to(DType::Float64).contiguous();
  c.v = v.to(DType::Float64).contiguous();
  if (mask) c.mask = mask->expand({c.d.b, c.d.hq, c.d.l, c.d.s}).to(DType::Float64).contiguous();
  c.causal = causal;
  c.scale = scale;
  return c;
}

namespace {

// The scores of query row (b, h, i) into s[0..S).
void scores(const Call& c, int64_t b, int64_t h, int64_t i, std::vector<double>& s) {
  const Dims& d = c.d;
  const int64_t kh = h / (d.hq / d.hk);
  const double* qr = c.q.data<double>() + ((b * d.hq + h) * d.l + i) * d.e;
  const double* mr =
      c.mask.defined() ? c.mask.data<double>() + ((b * d.hq + h) * d.l + i) * d.s : nullptr;
  for (int64_t j = 0; j < d.s; ++j) {
    const double* kr = c.k.data<double>() + ((b * d.hk + kh) * d.s + j) * d.e;
    double acc = 0;
    for (int64_t e = 0; e < d.e; ++e) acc += qr[e] * kr[e];
    double x = acc * c.scale;
    if (mr) x += mr[j];
    if (c.causal && j > i + c.causal_offset) x = -kInf;
    s[static_cast<size_t>(j)] = x;
  }
}

}  // namespace

Forward forward(const Call& c) {
  const Dims& d = c.d;
  Forward f;
  f.out.assign(static_cast<size_t>(d.b * d.hq * d.l * d.ev), 0.0);
  f.lse.assign(static_cast<size_t>(d.b * d.hq * d.l), c.masked_lse);
  std::vector<double> s(static_cast<size_t>(d.s));
  for (int64_t b = 0; b < d.b; ++b) {
    for (int64_t h = 0; h < d.hq; ++h) {
      const int64_t kh = h / (d.hq / d.hk);
      for (int64_t i = 0; i < d.l; ++i) {
        scores(c, b, h, i, s);
        double m = -kInf;
        bool nan = false;
        for (double x : s) {
          if (std::isnan(x)) nan = true;
          m = std::max(m, x);
        }
        if (nan) m = std::numeric_limits<double>::quiet_NaN();
        const int64_t row = (b * d.hq + h) * d.l + i;
        if (m == -kInf) {  // every key masked: out 0
          f.lse[static_cast<size_t>(row)] = c.masked_lse;
          continue;
        }
        double sum = 0;
        for (double& x : s) {
          x = std::exp(x - m);
          sum += x;
        }
        f.lse[static_cast<size_t>(row)] = m + std::log(sum);
        double* o = f.out.data() + row * d.ev;
        for (int64_t j = 0; j < d.s; ++j) {
          const double p = s[static_cast<size_t>(j)] / sum;
          const double* vr = c.v.data<double>() + ((b * d.hk + kh) * d.s + j) * d.ev;
          for (int64_t e = 0; e < d.ev; ++e) o[e] += p * vr[e];
        }
      }
    }
  }
  return f;
}

Backward backward(const Call& c, const Tensor& grad_out, const Tensor& out,
                  std::span<const double> lse, std::vector<double>* ds_out) {
  const Dims& d = c.d;
  const Tensor g = grad_out.to(DType::Float64).contiguous();
  const Tensor o = out.to(DType::Float64).contiguous();
  Backward r;
  r.dq.assign(static_cast<size_t>(d.b * d.hq * d.l * d.e), 0.0);
  r.dk.assign(static_cast<size_t>(d.b * d.hk * d.s * d.e), 0.0);
  r.dv.assign(static_cast<size_t>(d.b * d.hk * d.s * d.ev), 0.0);
  if (ds_out) ds_out->assign(static_cast<size_t>(d.b * d.hq * d.l * d.s), 0.0);
  std::vector<double> s(static_cast<size_t>(d.s));
  for (int64_t b = 0; b < d.b; ++b) {
    for (int64_t h = 0; h < d.hq; ++h) {
      const int64_t kh = h / (d.hq / d.hk);
      for (int64_t i = 0; i < d.l; ++i) {
        scores(c, b, h, i, s);
        const int64_t row = (b * d.hq + h) * d.l + i;
        const double* gr = g.data<double>() + row * d.ev;
        const double* orow = o.data<double>() + row * d.ev;
        const double* qr = c.q.data<double>() + row * d.e;
        double dd = 0;
        for (int64_t e = 0; e < d.ev; ++e) dd += gr[e] * orow[e];
        for (int64_t j = 0; j < d.s; ++j) {
          const double p = std::exp(s[static_cast<size_t>(j)] - lse[static_cast<size_t>(row)]);
          const int64_t kv = (b * d.hk + kh) * d.s + j;
          const double* vr = c.v.data<double>() + kv * d.ev;
          const double* kr = c.k.data<double>() + kv * d.e;
          double dp = 0;
          for (int64_t e = 0; e < d.ev; ++e) {
            r.dv[static_cast<size_t>(kv * d.ev + e)] += p * gr[e];
            dp += gr[e] * vr[e];
          }
          if (ds_out) (*ds_out)[static_cast<size_t>(row * d.s + j)] = p * (dp - dd);
          const double ds = p * (dp - dd) * c.scale;
          for (int64_t e = 0; e < d.e; ++e) {
            r.dq[static_cast<size_t>(row * d.e + e)] += ds * kr[e];
            r.dk[static_cast<size_t>(kv * d.e + e)] += ds * qr[e];
          }
        }
      }
    }
  }
  return r;
}

// Stores `vals` (row-major, rounded once) into the output `out`, allocated as the op's meta
// function laid it out.
void store(const Value& out, const std::vector<double>& vals) {
  opsutil::write_doubles(out.tensor(), vals.data());
}

// ---------------------------------------------------------------------------------------------
// Costs and judges.

// The products of a call: L*S*E multiply-adds for the scores, L*S*Ev for P V.
double products(const Tensor& q, const Tensor& k, const Tensor& v) {
  if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4) return 0;
  return static_cast<double>(q.size(0) * q.size(1) * q.size(2) * k.size(2)) *
         static_cast<double>(q.size(3) + v.size(3));
}

// Forward: 2 flops per multiply-add of the two products (+ the softmax, negligible); backward:
// the scores again, dV, dP, dQ and dK (5 products of L*S*E). Bytes: every tensor in and out.
CostFn attention_cost(double products_factor) {
  return [products_factor](const Args& a, const Values& out) {
    Cost c;
    c.flops = 2 * products_factor * products(a.tensor("query"), a.tensor("key"), a.tensor("value"));
    c.bytes = nnops::bytes_of_all(a) + nnops::bytes_of_all(out);
    return c;
  };
}

// The forward sums over S keys of scores that are sums over E: sqrt of the longer length. The
// backward chains two sums (dP = dO V^T over Ev, then dQ over S keys and dK, dV over L
// queries): sqrt of the product of the lengths.
// Inherently positional: a comparison policy sees the plain values, so query, key and value are
// given by query's index in the schema (`q_arg`).
double attention_tol_scale(const Values& a, int q_arg, bool backward) {
  const Tensor& q = a.at(static_cast<size_t>(q_arg)).tensor();
  const Tensor& k = a.at(static_cast<size_t>(q_arg + 1)).tensor();
  const Tensor& v = a.at(static_cast<size_t>(q_arg + 2)).tensor();
  if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4) return 1.0;
  const double seq = static_cast<double>(std::max({q.size(2), k.size(2), int64_t{1}}));
  const double head = static_cast<double>(std::max({q.size(3), v.size(3), int64_t{1}}));
  return std::sqrt(backward ? seq * head : std::max(seq, head));
}

ComparePolicy attention_compare(int q_arg, bool backward) {
  ComparePolicy c;
  c.tol_scale = [q_arg, backward](const Values& a) {
    return attention_tol_scale(a, q_arg, backward);
  };
  return c;
}

// grad_out and out [B, Hq, L, Ev]; logsumexp [B, Hq, L] (`lse_shape`).
void check_saved(const std::string& who, const Tensor& g, const Tensor& out, const Tensor& lse,
                 const Dims& d, const Shape& lse_shape) {
  const Shape o{d.b, d.hq, d.l, d.ev};
  check_shape(who, "grad_out", g, o);
  check_shape(who, "out", out, o);
  check_shape(who, "logsumexp", lse, lse_shape);
  if (g.dtype() != out.dtype() || !nnops::is_std_float(lse.dtype())) {
    op_error(who +
             ": grad_out and out must have the same dtype and logsumexp a floating one, "
             "got " +
             tname(g) + ", " + tname(out) + " and " + tname(lse));
  }
}

}  // namespace attention

namespace {

using namespace attention;  // NOLINT(google-build-using-namespace)

// ---------------------------------------------------------------------------------------------
// _scaled_dot_product_flash_attention_for_cpu and its backward.

const std::string kFlashCpu = "scaled_dot_product_attention_flash_attention";

// ATen's checks of the CPU flash forward (the backward runs the same kernel's checks), then
// crucible's structural ones.
Dims check_flash_cpu(const Tensor& q, const Tensor& k, const Tensor& v, double dropout_p,
                     const OptT& mask) {
  if (!nnops::is_std_float(q.dtype())) {
    op_error(kFlashCpu + ": Expected data type in FP32, FP64, BF16, FP16, but got " + tname(q) +
             " instead.");
  }
  check_4d(kFlashCpu, "Accept only 4 dims inputs shape of {B, H, T, K}", q, k, v);
  if (dropout_p != 0.0) op_error(kFlashCpu + ": Currently do not support dropout > 0");
  if (q.size(3) != v.size(3) || k.size(3) != v.size(3))
    op_error(kFlashCpu + ": Q/K/V should have the same head size");
  if (mask && mask->dtype() != DType::Float32 && mask->dtype() != q.dtype())
    op_error(kFlashCpu + ": Attention mask is the same data type as query");
  if (mask && mask->dim() != 2 && mask->dim() != 4)
    op_error(kFlashCpu + ": Attention mask dim in {2, 4}");
  const Dims d = check_structure(kFlashCpu, q, k, v);
  if (mask) check_mask_broadcast(kFlashCpu, *mask, d);
  return d;
}

DType accumulate_dtype(DType t) { return t == DType::Float64 ? t : DType::Float32; }

Values flash_cpu_meta(const Args& a) {
  const Tensor &q = a.tensor("query"), &k = a.tensor("key"), &v = a.tensor("value");
  const Dims d = check_flash_cpu(q, k, v, a.real("dropout_p"), a.opt_tensor("attn_mask"));
  const Shape out{d.b, d.hq, d.l, d.ev};
  return {
      meta::fresh_strided(out, attention::blhe_strides(out), q.dtype()),
      meta::fresh_strided({d.b, d.hq, d.l}, {d.l * d.hq, 1, d.hq}, accumulate_dtype(q.dtype()))};
}

// out and logsumexp, into the outputs flash_cpu_meta lays out ([B, L, H, E] and [B, L, H]).
void flash_cpu_impl(const Args& a, const Values& outputs) {
  const Tensor &q = a.tensor("query"), &k = a.tensor("key"), &v = a.tensor("value");
  const Call c = make_call(q, k, v, a.opt_tensor("attn_mask"), a.flag("is_causal"),
                           scale_of(a.value("scale"), q.size(3)));
  const Forward f = forward(c);
  store(outputs.at(0), f.out);
  store(outputs.at(1), f.lse);
}

Values flash_cpu_backward_meta(const Args& a) {
  const Tensor &g = a.tensor("grad_out"), &q = a.tensor("query"), &k = a.tensor("key"),
               &v = a.tensor("value");
  const Dims d = check_flash_cpu(q, k, v, a.real("dropout_p"), a.opt_tensor("attn_mask"));
  check_saved(kFlashCpu, g, a.tensor("out"), a.tensor("logsumexp"), d, {d.b, d.hq, d.l});
  const Shape dq{d.b, d.hq, d.l, d.e}, dk{d.b, d.hk, d.s, d.e}, dv{d.b, d.hk, d.s, d.ev};
  return {meta::fresh_strided(dq, attention::blhe_strides(dq), q.dtype()),
          meta::fresh_strided(dk, attention::blhe_strides(dk), k.dtype()),
          meta::fresh_strided(dv, attention::blhe_strides(dv), v.dtype())};
}

// The three gradients, into the outputs flash_cpu_backward_meta lays out.
void flash_cpu_backward_impl(const Args& a, const Values& outputs) {
  const Tensor &q = a.tensor("query"), &k = a.tensor("key"), &v = a.tensor("value");
  const Call c = make_call(q, k, v, a.opt_tensor("attn_mask"), a.flag("is_causal"),
                           scale_of(a.value("scale"), q.size(3)));
  const Backward r = backward(c, a.tensor("grad_out"), a.tensor("out"),
                              opsutil::read_doubles(a.tensor("logsumexp")));
  store(outputs.at(0), r.dq);
  store(outputs.at(1), r.dk);
  store(outputs.at(2), r.dv);
}

// ---------------------------------------------------------------------------------------------
// _scaled_dot_product_cudnn_attention and its backward.

const std::string kCudnn = "scaled_dot_product_cudnn_attention";

Dims check_cudnn(const Tensor& q, const Tensor& k, const Tensor& v, double dropout_p,
                 const OptT& bias) {
  check_4d(kCudnn, "expects 4-d query, key and value of shape {B, H, T, K}", q, k, v);
  if (!nnops::is_std_float(q.dtype())) {
    op_error(kCudnn + ": expected floating query, key and value, got " + tname(q));
  }
  if (k.dim() == 4 && k.size(1) != 0 && q.size(1) % k.size(1) != 0) {
    op_error(
        "cuDNN Frontend error: For group-query attention, number of heads for key and query must "
        "be a factor of number of heads for query");
  }
  const Dims d = check_structure(kCudnn, q, k, v);
  if (bias) {
    if (!nnops::is_std_float(bias->dtype()))
      op_error(kCudnn + ": attn_bias must be floating, got " + tname(*bias));
    check_mask_broadcast(kCudnn, *bias, d);
  }
  if (dropout_p != 0.0) {
    unsupported(kCudnn + " with dropout_p = " + std::to_string(dropout_p) +
                ": the op is random then; crucible's reference computes dropout_p = 0 only");
  }
  return d;
}

Values cudnn_meta(const Args& a) {
  const Tensor &q = a.tensor("query"), &k = a.tensor("key"), &v = a.tensor("value");
  const Dims d = check_cudnn(q, k, v, a.real("dropout_p"), a.opt_tensor("attn_bias"));
  const Shape out{d.b, d.hq, d.l, d.ev};
  Values r(9);
  r[0] = meta::fresh_strided(out, attention::matching_strides(q, out), q.dtype());
  if (a.flag("compute_log_sumexp")) r[1] = meta::fresh({d.b, d.hq, d.l, 1}, DType::Float32);
  r[4] = Value(d.l);
  r[5] = Value(d.s);
  r[6] = meta::fresh({}, DType::Int64);
  r[7] = meta::fresh({}, DType::Int64);
  return r;
}

// out and, when asked for, logsumexp, into the outputs cudnn_meta describes; philox_seed and
// philox_offset keep the 0 they were allocated with.
void cudnn_impl(const Args& a, const Values& outputs) {
  const Tensor &q = a.tensor("query"), &k = a.tensor("key"), &v = a.tensor("value");
  const Call c = make_call(q, k, v, a.opt_tensor("attn_bias"), a.flag("is_causal"),
                           scale_of(a.value("scale"), q.size(3)));
  const Forward f = forward(c);
  store(outputs.at(0), f.out);
  if (outputs.at(1).is_tensor()) store(outputs.at(1), f.lse);
}

Values cudnn_backward_meta(const Args& a) {
  const Tensor &g = a.tensor("grad_out"), &q = a.tensor("query"), &k = a.tensor("key"),
               &v = a.tensor("value");
  const Dims d = check_cudnn(q, k, v, a.real("dropout_p"), a.opt_tensor("attn_bias"));
  check_saved(kCudnn, g, a.tensor("out"), a.tensor("logsumexp"), d, {d.b, d.hq, d.l, 1});
  const Shape dq{d.b, d.hq, d.l, d.e}, dk{d.b, d.hk, d.s, d.e}, dv{d.b, d.hk, d.s, d.ev};
  return {meta::fresh_strided(dq, attention::matching_strides(q, dq), q.dtype()),
          meta::fresh_strided(dk, attention::matching_strides(k, dk), k.dtype()),
          meta::fresh_strided(dv, attention::matching_strides(v, dv), v.dtype())};
}

// The three gradients, into the outputs cudnn_backward_meta lays out.
void cudnn_backward_impl(const Args& a, const Values& outputs) {
  const Tensor &q = a.tensor("query"), &k = a.tensor("key"), &v = a.tensor("value");
  const Call c = make_call(q, k, v, a.opt_tensor("attn_bias"), a.flag("is_causal"),
                           scale_of(a.value("scale"), q.size(3)));
  const Backward r = backward(c, a.tensor("grad_out"), a.tensor("out"),
                              opsutil::read_doubles(a.tensor("logsumexp")));
  store(outputs.at(0), r.dq);
  store(outputs.at(1), r.dk);
  store(outputs.at(2), r.dv);
}

}  // namespace

void register_attention_ops(OpRegistry& r) {
  {
    OpDef op = OpDef::from_schema(
        "aten::_scaled_dot_product_flash_attention_for_cpu(Tensor query, Tensor key, Tensor "
        "value, float dropout_p=0., bool is_causal=False, *, Tensor? attn_mask=None, float? "
        "scale=None) -> (Tensor output, Tensor logsumexp)",
        "matmul");
    op.dtypes = samples::floating_dtypes();
    op.meta = flash_cpu_meta;
    op.ref = structured_ref(flash_cpu_meta, flash_cpu_impl);
    op.samples = attention::flash_cpu_samples;
    op.cost = attention_cost(1);
    op.compare = attention_compare(0, false);
    r.add(std::move(op));
  }
  {
    OpDef op = OpDef::from_schema(
        "aten::_scaled_dot_product_flash_attention_for_cpu_backward(Tensor grad_out, Tensor "
        "query, Tensor key, Tensor value, Tensor out, Tensor logsumexp, float dropout_p, bool "
        "is_causal, *, Tensor? attn_mask=None, float? scale=None) -> (Tensor grad_query, Tensor "
        "grad_key, Tensor grad_value)",
        "matmul");
    op.dtypes = samples::floating_dtypes();
    op.meta = flash_cpu_backward_meta;
    op.ref = structured_ref(flash_cpu_backward_meta, flash_cpu_backward_impl);
    op.samples = attention::flash_cpu_backward_samples;
    op.cost = attention_cost(2.5);
    op.compare = attention_compare(1, true);
    r.add(std::move(op));
  }
  {
    OpDef op = OpDef::from_schema(
        "aten::_scaled_dot_product_cudnn_attention(Tensor query, Tensor key, Tensor value, "
        "Tensor? attn_bias, bool compute_log_sumexp, float dropout_p=0., bool is_causal=False, "
        "bool return_debug_mask=False, *, float? scale=None) -> (Tensor output, Tensor "
        "logsumexp, Tensor cum_seq_q, Tensor cum_seq_k, SymInt max_q, SymInt max_k, Tensor "
        "philox_seed, Tensor philox_offset, Tensor debug_attn_mask)",
        "matmul");
    op.dtypes = {DType::Float16, DType::BFloat16, DType::Float32};
    op.meta = cudnn_meta;
    op.ref = structured_ref(cudnn_meta, cudnn_impl);
    op.samples = attention::cudnn_samples;
    op.cost = attention_cost(1);
    // out and logsumexp by value, philox_seed and philox_offset by shape and dtype, max_q and
    // max_k exactly, the undefined outputs undefined.
    op.compare = attention_compare(0, false);
    op.compare.unspecified_outputs = {6, 7};
    r.add(std::move(op));
  }
  {
    // attn_bias, cum_seq_q and cum_seq_k declared optional (see the note at the top).
    OpDef op = OpDef::from_schema(
        "aten::_scaled_dot_product_cudnn_attention_backward(Tensor grad_out, Tensor query, "
        "Tensor key, Tensor value, Tensor out, Tensor logsumexp, Tensor philox_seed, Tensor "
        "philox_offset, Tensor? attn_bias, Tensor? cum_seq_q, Tensor? cum_seq_k, SymInt max_q, "
        "SymInt max_k, float dropout_p, bool is_causal, *, float? scale=None) -> (Tensor, "
        "Tensor, Tensor)",
        "matmul");
    op.dtypes = {DType::Float16, DType::BFloat16, DType::Float32};
    op.meta = cudnn_backward_meta;
    op.ref = structured_ref(cudnn_backward_meta, cudnn_backward_impl);
    op.samples = attention::cudnn_backward_samples;
    op.cost = attention_cost(2.5);
    op.compare = attention_compare(1, true);
    r.add(std::move(op));
  }
}

}  // namespace crucible
