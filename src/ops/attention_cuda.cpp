// Scaled-dot-product attention as PyTorch 2.x dispatches it on CUDA besides cuDNN:
// aten._scaled_dot_product_flash_attention.default (FlashAttention 2, f16/bf16) and
// aten._scaled_dot_product_efficient_attention.default (memory-efficient attention, f16/bf16/f32),
// with their backwards. ATen runs them on CUDA only; the catalog models what they compute.
//
// Reference semantics (PyTorch 2.11; torch/_meta_registrations.py, transformers/cuda/attention.cu,
// attention_backward.cu, flash_attn/flash_api.cpp, mem_eff_attention; checked against
// libtorch 2.11 on an H100):
//  - FlashAttention: query [B, Hq, L, E], key/value [B, Hk, S, E] (the same head size; Hq a
//    multiple of Hk). is_causal aligns the mask at the BOTTOM RIGHT (key j > i + S - L is
//    masked), so with L > S the first L - S rows see no key: their output is 0 and their
//    logsumexp +inf. out is laid out as empty_like(query.transpose(1, 2)).transpose(1, 2)
//    (query's strides when query is dense, else [B, L, H, E] memory order); logsumexp f32
//    [B, Hq, L]; cum_seq_q / cum_seq_k undefined (None); max_q, max_k = L, S; rng_state [2] and
//    unused [] (uint64 in ATen: crucible has no uint64 and gives them as i64, same size);
//    debug_attn_mask [0] of query's dtype (return_debug_mask needs dropout_p > 0). The backward's
//    gradients take empty_like(x.transpose(1, 2)).transpose(1, 2) of query, key and value.
//  - Memory-efficient attention: query [B, H, L, E], key [B, H, S, E], value [B, H, S, Ev] (no
//    grouped-query heads); is_causal aligned at the TOP LEFT; attn_bias [B, H, L, S] exactly
//    (expanded views allowed) of query's dtype, its strides of dims 0-2 multiples of 4 where
//    those dims are longer than 1. out is laid out [B, L, H, Ev]; log_sumexp is f32
//    [B, H, ceil(L / 32) * 32] when compute_log_sumexp, the rows past L holding +inf, and
//    [B, H, 0] otherwise; a row whose keys are all masked gives output 0 and logsumexp 0;
//    philox_seed and philox_offset are 0-d i64. The backward returns grad_query/key/value laid
//    out [B, L, H, E] and, when attn_bias is given and grad_input_mask[3], grad_bias: the
//    gradient of the scores dS = P * (dP - D) in attn_bias's dtype and sizes, laid out as a
//    [..., round_up(S, 16)] tensor sliced to S; None otherwise. grad_input_mask[0..2] do not
//    change what is computed (ATen computes the three gradients always).
//  - The RNG outputs (rng_state, unused, philox_seed, philox_offset) and the empty debug mask
//    are judged by shape and dtype only (ComparePolicy::unspecified_outputs): their values are
//    no data a kernel must reproduce at dropout_p = 0 (ATen 2.11 returns zeros from the flash
//    kernel and a live philox seed from the memory-efficient one). The backwards ignore them.
//  - dropout_p > 0 makes the ops random: as for cuDNN's op, the reference computes
//    dropout_p = 0 only and refuses other values as unsupported (no sample uses them).
//  - Checks ATen leaves to the kernels (reading out of bounds) are raised with crucible's
//    messages: shapes of grad_out, out and logsumexp; key and value dtypes that differ.
//    ATen's alignment rule on query/key/value strides for memory-efficient attention (beyond
//    the head sizes) is not modelled.
//
// NOTE: ATen's backward schemas type cum_seq_q, cum_seq_k (flash) and attn_bias (efficient) as
// `Tensor`, yet PyTorch passes undefined tensors there; the entries declare them `Tensor?` so
// that those calls bind.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "crucible/core/error.h"
#include "crucible/ops/destination.h"
#include "ops/attention_internal.h"
#include "ops/families.h"
#include "ops/meta_fn.h"
#include "ops/util.h"

namespace crucible {
namespace {

using namespace attention;  // NOLINT(google-build-using-namespace)
constexpr double kInf = std::numeric_limits<double>::infinity();

bool is_half(DType t) { return t == DType::Float16 || t == DType::BFloat16; }

// Whether t's elements fill its storage span exactly once (PyTorch's
// is_non_overlapping_and_dense): dims of size > 1, sorted by stride, are contiguous.
bool non_overlapping_and_dense(const Tensor& t) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.size(d) > 1) dims.push_back(d);
  std::stable_sort(dims.begin(), dims.end(),
                   [&](int64_t a, int64_t b) { return t.stride(a) < t.stride(b); });
  int64_t expected = 1;
  for (int64_t d : dims) {
    if (t.stride(d) != expected) return false;
    expected *= t.size(d);
  }
  return true;
}

// The strides of empty_like(x.transpose(1, 2)).transpose(1, 2) for a 4-d x: x's own strides when
// x is dense (empty_like preserves them), else the [B, L, H, E] memory order.
Shape transposed_like_strides(const Tensor& x) {
  if (non_overlapping_and_dense(x)) return x.strides();
  return blhe_strides(x.shape());
}

// ---------------------------------------------------------------------------------------------
// _scaled_dot_product_flash_attention and its backward.

const std::string kFlash = "scaled_dot_product_flash_attention";

// FlashAttention's checks (attention.cu, flash_api.cpp's mha_fwd / mha_bwd), then crucible's
// structural ones.
Dims check_flash(const Tensor& q, const Tensor& k, const Tensor& v, double dropout_p,
                 bool backward) {
  if (!is_half(q.dtype())) op_error("FlashAttention only support fp16 and bf16 data type");
  if (k.dtype() != q.dtype()) op_error("query and key must have the same dtype");
  if (v.dtype() != q.dtype()) op_error("query and value must have the same dtype");
  check_4d(kFlash, "expects 4-d query, key and value of shape {B, H, T, K}", q, k, v);
  for (const Tensor* t : {&q, &k, &v})
    if (t->stride(3) != 1) op_error("Input tensor must have contiguous last dimension");
  if (k.size(2) != v.size(2)) op_error("Key and Value must have the same sequence length");
  const int64_t e = q.size(3);
  if (e % 8 != 0) {
    op_error(backward ? "head_size should be a multiple of 8"
                      : "head_size must be a multiple of 8, this is ensured by padding!");
  }
  if (e > 256) {
    op_error(std::string("FlashAttention ") + (backward ? "backward" : "forward") +
             " only supports head dimension at most 256");
  }
  if (k.size(1) == 0 || q.size(1) % k.size(1) != 0)
    op_error("Number of heads in key/value must divide number of heads in query");
  if (k.size(0) != q.size(0) || k.size(3) != e)
    op_error("k must have shape (batch_size, seqlen_k, num_heads_k, head_size_og)");
  if (v.size(0) != q.size(0) || v.size(1) != k.size(1) || v.size(3) != e)
    op_error("v must have shape (batch_size, seqlen_k, num_heads_k, head_size_og)");
  if (q.size(2) == 0) {
    op_error(kFlash +
             ": an empty query sequence (L = 0): ATen's kernel launch fails (CUDA error: invalid "
             "argument)");
  }
  const Dims d = check_structure(kFlash, q, k, v);
  if (dropout_p != 0.0) {
    unsupported(kFlash + " with dropout_p = " + std::to_string(dropout_p) +
                ": the op is random then; crucible's reference computes dropout_p = 0 only");
  }
  return d;
}

Call flash_call(const Args& a) {
  const Tensor &q = a.tensor("query"), &k = a.tensor("key"), &v = a.tensor("value");
  Call c =
      make_call(q, k, v, std::nullopt, a.flag("is_causal"), scale_of(a.value("scale"), q.size(3)));
  c.causal_offset = c.d.s - c.d.l;  // bottom-right aligned
  c.masked_lse = kInf;
  return c;
}

Values flash_meta(const Args& a) {
  const Tensor &q = a.tensor("query"), &k = a.tensor("key"), &v = a.tensor("value");
  if (a.flag("return_debug_mask") && a.real("dropout_p") == 0.0) {
    check_flash(q, k, v, 0.0, false);
    op_error("return_softmax is only supported when p_dropout > 0.0");
  }
  const Dims d = check_flash(q, k, v, a.real("dropout_p"), false);
  Values r(9);
  r[0] = meta::fresh_strided(q.shape(), transposed_like_strides(q), q.dtype());
  r[1] = meta::fresh({d.b, d.hq, d.l}, DType::Float32);
  r[4] = Value(d.l);
  r[5] = Value(d.s);
  r[6] = meta::fresh({2}, DType::Int64);
  r[7] = meta::fresh({}, DType::Int64);
  r[8] = meta::fresh({0}, q.dtype());
  return r;
}

// out and logsumexp, into the outputs flash_meta describes; rng_state and unused keep the
// zeros they were allocated with (debug_attn_mask is empty).
void flash_impl(const Args& a, const Values& outputs) {
  const Forward f = forward(flash_call(a));
  store(outputs.at(0), f.out);
  store(outputs.at(1), f.lse);
}

Values flash_backward_meta(const Args& a) {
  const Tensor &q = a.tensor("query"), &k = a.tensor("key"), &v = a.tensor("value");
  const Dims d = check_flash(q, k, v, a.real("dropout_p"), true);
  check_saved(kFlash, a.tensor("grad_out"), a.tensor("out"), a.tensor("logsumexp"), d,
              {d.b, d.hq, d.l});
  return {meta::fresh_strided(q.shape(), transposed_like_strides(q), q.dtype()),
          meta::fresh_strided(k.shape(), transposed_like_strides(k), k.dtype()),
          meta::fresh_strided(v.shape(), transposed_like_strides(v), v.dtype())};
}

// The three gradients, into the outputs flash_backward_meta lays out.
void flash_backward_impl(const Args& a, const Values& outputs) {
  const Backward r = backward(flash_call(a), a.tensor("grad_out"), a.tensor("out"),
                              opsutil::read_doubles(a.tensor("logsumexp")));
  store(outputs.at(0), r.dq);
  store(outputs.at(1), r.dk);
  store(outputs.at(2), r.dv);
}

// ---------------------------------------------------------------------------------------------
// _scaled_dot_product_efficient_attention and its backward.

const std::string kEfficient = "scaled_dot_product_efficient_attention";

void expect(bool ok, const std::string& cond) {
  if (!ok) op_error("Expected " + cond + " to be true, but got false.");
}

// The head sizes the CUTLASS kernels take: multiples of 8 elements (16-bit dtypes) or 4 (f32).
int64_t efficient_alignment(DType t) { return t == DType::Float32 ? 4 : 8; }

// _efficient_attention_forward's checks (in BMHK terms: query.transpose(1, 2)), the kernel
// selection's and attn_bias's, then crucible's structural ones.
Dims check_efficient(const Tensor& q, const Tensor& k, const Tensor& v, const OptT& bias,
                     double dropout_p, const char* stride_word) {
  expect(q.dim() == 4, "query.dim() == 4");
  expect(k.dim() == 4, "key.dim() == 4");
  expect(v.dim() == 4, "value.dim() == 4");
  expect(q.size(0) == k.size(0), "query.size(0) == key.size(0)");
  expect(q.size(0) == v.size(0), "query.size(0) == value.size(0)");
  expect(k.size(2) == v.size(2), "key.size(1) == value.size(1)");
  expect(q.size(1) == k.size(1), "query.size(2) == key.size(2)");
  expect(q.size(1) == v.size(1), "query.size(2) == value.size(2)");
  expect(q.size(3) == k.size(3), "query.size(3) == key.size(3)");
  const char* names[] = {"query", "key", "value"};
  const Tensor* ts[] = {&q, &k, &v};
  for (int i = 0; i < 3; ++i)
    if (ts[i]->stride(3) != 1)
      op_error(std::string(names[i]) + ": last dimension must be contiguous");
  const DType t = q.dtype();
  if (!is_half(t) && t != DType::Float32)
    op_error("Only fp32, half & bf16 supported at the moment");
  const int64_t align = efficient_alignment(t);
  if (q.size(3) % align != 0 || v.size(3) % align != 0)
    op_error("cutlassF: no kernel found to launch!");
  if (bias) {
    const Tensor& b = *bias;
    if (b.dtype() != t) op_error("invalid dtype for bias - should match query's dtype");
    if (b.dim() != 4) op_error("Bias expected in BMHK format");
    if (b.size(0) != q.size(0)) op_error("attn_bias: wrong shape (batch dimension)");
    if (b.size(1) != q.size(1)) op_error("attn_bias: wrong shape (head dimension)");
    if (b.size(2) != q.size(2)) op_error("attn_bias: wrong shape (seqlenQ dimension)");
    if (b.size(3) != k.size(2)) op_error("attn_bias: wrong shape (seqlenKV dimension)");
    if (b.stride(3) != 1 && b.size(3) > 1) op_error("attn_bias: last dimension must be contiguous");
    const char* which[] = {"strideB", "strideH", "strideM"};
    for (int dim = 0; dim < 3; ++dim) {
      if (b.size(dim) > 1 && b.stride(dim) % 4 != 0) {
        op_error(std::string("attn_bias is not correctly aligned (") + which[dim] +
                 "). attn_bias.stride(" + stride_word + std::to_string(dim) +
                 ") = " + std::to_string(b.stride(dim)) + ", and should be a multiple of 4.");
      }
    }
  }
  const Dims d = check_structure(kEfficient, q, k, v);
  if (dropout_p != 0.0) {
    unsupported(kEfficient + " with dropout_p = " + std::to_string(dropout_p) +
                ": the op is random then; crucible's reference computes dropout_p = 0 only");
  }
  return d;
}

int64_t padded_lse_length(int64_t l) { return (l + 31) / 32 * 32; }

Call efficient_call(const Args& a) {
  const Tensor &q = a.tensor("query"), &k = a.tensor("key"), &v = a.tensor("value");
  Call c = make_call(q, k, v, a.opt_tensor("attn_bias"), a.flag("is_causal"),
                     scale_of(a.value("scale"), q.size(3)));
  c.masked_lse = 0.0;
  return c;
}

Values efficient_meta(const Args& a) {
  const Tensor &q = a.tensor("query"), &k = a.tensor("key"), &v = a.tensor("value");
  const Dims d = check_efficient(q, k, v, a.opt_tensor("attn_bias"), a.real("dropout_p"), " ");
  const Shape out{d.b, d.hq, d.l, d.ev};
  const int64_t m = a.flag("compute_log_sumexp") ? padded_lse_length(d.l) : 0;
  return {meta::fresh_strided(out, blhe_strides(out), q.dtype()),
          meta::fresh({d.b, d.hq, m}, DType::Float32), meta::fresh({}, DType::Int64),
          meta::fresh({}, DType::Int64)};
}

// out and log_sumexp (its rows padded to M with +inf; M is 0 without compute_log_sumexp), into
// the outputs efficient_meta describes; philox_seed and philox_offset keep the 0 they were
// allocated with.
void efficient_impl(const Args& a, const Values& outputs) {
  const Call c = efficient_call(a);
  const Forward f = forward(c);
  store(outputs.at(0), f.out);
  const int64_t m = outputs.at(1).tensor().size(2);
  std::vector<double> lse(static_cast<size_t>(c.d.b * c.d.hq * m), kInf);  // padding: +inf
  for (int64_t row = 0; row < c.d.b * c.d.hq && m > 0; ++row)
    for (int64_t i = 0; i < c.d.l; ++i)
      lse[static_cast<size_t>(row * m + i)] = f.lse[static_cast<size_t>(row * c.d.l + i)];
  store(outputs.at(1), lse);
}

Values efficient_backward_meta(const Args& a) {
  const Tensor &q = a.tensor("query"), &k = a.tensor("key"), &v = a.tensor("value");
  const OptT bias = a.opt_tensor("attn_bias");
  const std::vector<bool> mask = a.value("grad_input_mask").bool_list();
  const Dims d = check_efficient(q, k, v, bias, a.real("dropout_p"), "");
  if (mask.size() == 4 && mask[3] && !bias)
    op_error("bias_requires_grad is true but no bias was provided");
  const Shape o{d.b, d.hq, d.l, d.ev};
  check_shape(kEfficient, "grad_out", a.tensor("grad_out_"), o);
  check_shape(kEfficient, "out", a.tensor("out"), o);
  const Tensor& lse = a.tensor("logsumexp");
  if (lse.dim() != 3 || lse.size(0) != d.b || lse.size(1) != d.hq || lse.size(2) < d.l) {
    op_error(kEfficient + ": logsumexp must have shape [" + std::to_string(d.b) + ", " +
             std::to_string(d.hq) + ", M] with M >= " + std::to_string(d.l) +
             " (the query length), got " + shape_str(lse.shape()));
  }
  if (a.tensor("grad_out_").dtype() != a.tensor("out").dtype() || !is_floating(lse.dtype())) {
    op_error(kEfficient +
             ": grad_out and out must have the same dtype and logsumexp a floating "
             "one, got " +
             tname(a.tensor("grad_out_")) + ", " + tname(a.tensor("out")) + " and " + tname(lse));
  }
  const Shape dq{d.b, d.hq, d.l, d.e}, dk{d.b, d.hk, d.s, d.e}, dv{d.b, d.hk, d.s, d.ev};
  Values r{meta::fresh_strided(dq, blhe_strides(dq), q.dtype()),
           meta::fresh_strided(dk, blhe_strides(dk), k.dtype()),
           meta::fresh_strided(dv, blhe_strides(dv), v.dtype()), Value()};
  if (bias && mask.size() == 4 && mask[3]) {
    const int64_t s = d.s, aligned = (s + 15) / 16 * 16;
    r[3] = meta::fresh_strided(bias->shape(), {d.hq * d.l * aligned, d.l * aligned, aligned, 1},
                               bias->dtype());
  }
  return r;
}

// The three gradients and, where efficient_backward_meta describes one, grad_bias (dS).
void efficient_backward_impl(const Args& a, const Values& outputs) {
  const Call c = efficient_call(a);
  const Tensor& lse = a.tensor("logsumexp");
  const Tensor rows = lse.slice(2, 0, c.d.l);
  std::vector<double> ds;
  const Backward g =
      backward(c, a.tensor("grad_out_"), a.tensor("out"), opsutil::read_doubles(rows),
               outputs.at(3).is_tensor() ? &ds : nullptr);
  store(outputs.at(0), g.dq);
  store(outputs.at(1), g.dk);
  store(outputs.at(2), g.dv);
  if (outputs.at(3).is_tensor()) store(outputs.at(3), ds);
}

// A policy judging out and logsumexp by value (the tolerance of a forward), the outputs at
// `unspecified` by shape and dtype.
ComparePolicy forward_compare(std::vector<size_t> unspecified) {
  ComparePolicy c = attention_compare(0, false);
  c.unspecified_outputs = std::move(unspecified);
  return c;
}

}  // namespace

void register_attention_cuda_ops(OpRegistry& r) {
  const std::vector<DType> halves = {DType::Float16, DType::BFloat16};
  {
    OpDef op = OpDef::from_schema(
        "aten::_scaled_dot_product_flash_attention(Tensor query, Tensor key, Tensor value, float "
        "dropout_p=0., bool is_causal=False, bool return_debug_mask=False, *, float? scale=None) "
        "-> (Tensor output, Tensor logsumexp, Tensor cum_seq_q, Tensor cum_seq_k, SymInt max_q, "
        "SymInt max_k, Tensor rng_state, Tensor unused, Tensor debug_attn_mask)",
        "matmul");
    op.dtypes = halves;
    op.meta = flash_meta;
    op.ref = structured_ref(flash_meta, flash_impl);
    op.samples = attention::flash_samples;
    op.cost = attention_cost(1);
    op.compare = forward_compare({6, 7, 8});
    r.add(std::move(op));
  }
  {
    // cum_seq_q and cum_seq_k declared optional (see the note at the top).
    OpDef op = OpDef::from_schema(
        "aten::_scaled_dot_product_flash_attention_backward(Tensor grad_out, Tensor query, Tensor "
        "key, Tensor value, Tensor out, Tensor logsumexp, Tensor? cum_seq_q, Tensor? cum_seq_k, "
        "SymInt max_q, SymInt max_k, float dropout_p, bool is_causal, Tensor philox_seed, Tensor "
        "philox_offset, *, float? scale=None) -> (Tensor grad_query, Tensor grad_key, Tensor "
        "grad_value)",
        "matmul");
    op.dtypes = halves;
    op.meta = flash_backward_meta;
    op.ref = structured_ref(flash_backward_meta, flash_backward_impl);
    op.samples = attention::flash_backward_samples;
    op.cost = attention_cost(2.5);
    op.compare = attention_compare(1, true);
    r.add(std::move(op));
  }
  {
    OpDef op = OpDef::from_schema(
        "aten::_scaled_dot_product_efficient_attention(Tensor query, Tensor key, Tensor value, "
        "Tensor? attn_bias, bool compute_log_sumexp, float dropout_p=0., bool is_causal=False, *, "
        "float? scale=None) -> (Tensor output, Tensor log_sumexp, Tensor philox_seed, Tensor "
        "philox_offset)",
        "matmul");
    op.dtypes = {DType::Float16, DType::BFloat16, DType::Float32};
    op.meta = efficient_meta;
    op.ref = structured_ref(efficient_meta, efficient_impl);
    op.samples = attention::efficient_samples;
    op.cost = attention_cost(1);
    op.compare = forward_compare({2, 3});
    r.add(std::move(op));
  }
  {
    // attn_bias declared optional (see the note at the top).
    OpDef op = OpDef::from_schema(
        "aten::_scaled_dot_product_efficient_attention_backward(Tensor grad_out_, Tensor query, "
        "Tensor key, Tensor value, Tensor? attn_bias, Tensor out, Tensor logsumexp, Tensor "
        "philox_seed, Tensor philox_offset, float dropout_p, bool[4] grad_input_mask, bool "
        "is_causal=False, *, float? scale=None) -> (Tensor, Tensor, Tensor, Tensor)",
        "matmul");
    op.dtypes = {DType::Float16, DType::BFloat16, DType::Float32};
    op.meta = efficient_backward_meta;
    op.ref = structured_ref(efficient_backward_meta, efficient_backward_impl);
    op.samples = attention::efficient_backward_samples;
    op.cost = attention_cost(2.5);
    op.compare = attention_compare(1, true);
    r.add(std::move(op));
  }
}

}  // namespace crucible
