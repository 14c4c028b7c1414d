// Samples of the CUDA flash and memory-efficient attention ops (attention_cuda.cpp): the dtypes
// and head sizes ATen's CUDA kernels take (f16/bf16 with head sizes that are multiples of 8;
// f32 too, head sizes multiples of 4, for memory-efficient attention), causal and not, query
// and key lengths that differ (FlashAttention's bottom-right causal alignment, memory-efficient
// attention's top-left one), grouped-query heads (flash), attention biases (memory-efficient,
// in the aligned layouts its kernel takes), the strided layouts real models pass, the padded
// logsumexp, and ATen's errors (with the messages libtorch 2.11 raises on CUDA).
#include <string>
#include <vector>

#include "ops/attention_internal.h"
#include "ops/norm_internal.h"
#include "ops/samples.h"

namespace crucible::attention {
namespace {

using namespace samples;  // NOLINT(google-build-using-namespace)
using KW = std::vector<std::pair<std::string, Literal>>;

const DType f16 = DType::Float16, bf16 = DType::BFloat16, f32 = DType::Float32, i64 = DType::Int64;

// A [B, H, L, E] slice of a fused [B, L, 3 * H * E] projection.
Literal qkv_slice(int64_t b, int64_t h, int64_t l, int64_t e, DType t) {
  return T({b, h, l, e}, t, {l * 3 * h * e, e, 3 * h * e, 1});
}

// A [B, H, L, E] tensor laid out [B, L, H, E].
Literal blhe(int64_t b, int64_t h, int64_t l, int64_t e, DType t) {
  return T({b, h, l, e}, t, {l * h * e, e, h * e, 1});
}

int64_t padded(int64_t l) { return (l + 31) / 32 * 32; }

// An attention bias [B, H, L, S] laid out as a [B, H, L, round_up(S, 8)] tensor sliced to S (the
// row strides the memory-efficient kernel takes).
Literal aligned_bias(int64_t b, int64_t h, int64_t l, int64_t s, DType t) {
  const int64_t a = (s + 7) / 8 * 8;
  return T({b, h, l, s}, t, {h * l * a, l * a, a, 1});
}

Literal bools(std::vector<bool> m) {
  std::vector<Literal> v;
  for (bool x : m) v.push_back(B(x));
  return Literal::list(std::move(v));
}

}  // namespace

std::vector<Sample> flash_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  auto call = [&](const std::string& label, const Literal& q, const Literal& k, const Literal& v,
                  bool causal, KW kw = {}, bool debug = false) {
    out.push_back(make(label, {q, k, v, F(0.0), B(causal), B(debug)}, std::move(kw)));
  };
  if (ctx.performance) {
    for (DType t : {f16, bf16}) {
      call("GPT-2 [1, 12, 1024, 64] causal " + dtype_code_str(t), qkv_slice(1, 12, 1024, 64, t),
           qkv_slice(1, 12, 1024, 64, t), qkv_slice(1, 12, 1024, 64, t), true,
           {{"scale", F(0.125)}});
    }
    return out;
  }
  for (DType t : {f16, bf16}) {
    const std::string d = " " + dtype_code_str(t);
    call("[2, 2, 5, 8]" + d, T({2, 2, 5, 8}, t), T({2, 2, 5, 8}, t), T({2, 2, 5, 8}, t), false);
    call("causal qkv slices, scale 0.125" + d, qkv_slice(1, 4, 7, 8, t), qkv_slice(1, 4, 7, 8, t),
         qkv_slice(1, 4, 7, 8, t), true, {{"scale", F(0.125)}});
    call("grouped-query heads 4 / 2, causal" + d, blhe(1, 4, 6, 8, t), blhe(1, 2, 6, 8, t),
         blhe(1, 2, 6, 8, t), true);
  }
  call("L 3 < S 7, causal (bottom-right)", T({1, 2, 3, 8}, f16), T({1, 2, 7, 8}, f16),
       T({1, 2, 7, 8}, f16), true);
  call("L 7 > S 3, causal (bottom-right: rows 0-3 see no key)", T({1, 2, 7, 8}, bf16),
       T({1, 2, 3, 8}, bf16), T({1, 2, 3, 8}, bf16), true);
  call("L 3 < S 9, query laid out [B, L, H, E]", blhe(2, 1, 3, 16, f16), T({2, 1, 9, 16}, f16),
       T({2, 1, 9, 16}, f16), false);
  call("head size 64, scale 0.7 (keyword)", T({1, 2, 9, 64}, f16), T({1, 2, 9, 64}, f16),
       T({1, 2, 9, 64}, f16), false, {{"scale", F(0.7)}});
  call("head size 256", T({1, 1, 3, 256}, bf16), T({1, 1, 4, 256}, bf16), T({1, 1, 4, 256}, bf16),
       true);
  call("one query (causal has no effect)", T({1, 2, 1, 8}, f16), T({1, 2, 5, 8}, f16),
       T({1, 2, 5, 8}, f16), true);
  call("empty batch", T({0, 2, 3, 8}, f16), T({0, 2, 3, 8}, f16), T({0, 2, 3, 8}, f16), false);
  call("error: f32 inputs", T({1, 2, 3, 8}, f32), T({1, 2, 3, 8}, f32), T({1, 2, 3, 8}, f32),
       false);
  call("error: head size 12", T({1, 2, 3, 12}, f16), T({1, 2, 3, 12}, f16), T({1, 2, 3, 12}, f16),
       false);
  call("error: head size 264", T({1, 1, 3, 264}, f16), T({1, 1, 3, 264}, f16),
       T({1, 1, 3, 264}, f16), false);
  call("error: return_debug_mask with dropout_p 0", T({1, 2, 3, 8}, f16), T({1, 2, 3, 8}, f16),
       T({1, 2, 3, 8}, f16), false, {}, true);
  call("error: 3 query heads, 2 key heads", T({1, 3, 3, 8}, f16), T({1, 2, 3, 8}, f16),
       T({1, 2, 3, 8}, f16), false);
  call("error: value head size 16", T({1, 2, 3, 8}, f16), T({1, 2, 3, 8}, f16),
       T({1, 2, 3, 16}, f16), false);
  call("error: key bf16, query f16", T({1, 2, 3, 8}, f16), T({1, 2, 3, 8}, bf16),
       T({1, 2, 3, 8}, f16), false);
  call("error: key batch differs", T({2, 2, 3, 8}, f16), T({1, 2, 3, 8}, f16), T({1, 2, 3, 8}, f16),
       false);
  call("error: query's last dim strided", T({1, 2, 3, 8}, f16, {48, 1, 2, 6}), T({1, 2, 3, 8}, f16),
       T({1, 2, 3, 8}, f16), false);
  call("error: 3-d inputs", T({2, 3, 8}, f16), T({2, 3, 8}, f16), T({2, 3, 8}, f16), false);
  call("error: empty query sequence", T({1, 2, 0, 8}, f16), T({1, 2, 3, 8}, f16),
       T({1, 2, 3, 8}, f16), false);
  return out;
}

std::vector<Sample> flash_backward_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  // grad_out, out laid out as the forward returns them for contiguous inputs; logsumexp f32.
  auto call = [&](const std::string& label, int64_t b, int64_t hq, int64_t hk, int64_t l, int64_t s,
                  int64_t e, DType t, bool causal, bool sliced = false,
                  const std::string& fill = "") {
    const Literal q = sliced ? qkv_slice(b, hq, l, e, t) : T({b, hq, l, e}, t);
    const Literal kv = sliced ? qkv_slice(b, hk, s, e, t) : T({b, hk, s, e}, t);
    std::vector<Literal> args{T({b, hq, l, e}, t), q, kv, kv, T({b, hq, l, e}, t),
                              T({b, hq, l}, f32)};
    if (fill == "special") {  // grad_out and out only (attention_samples.cpp's special_note)
      args[0].tensor.fill = fill;
      args[4].tensor.fill = fill;
    } else if (!fill.empty()) {  // logsumexp positive: P = exp(s - lse) stays finite in f32
      for (Literal& x : args) x.tensor.fill = fill;
      args[5].tensor.fill = "positive";
    }
    for (const Literal& x :
         {None(), None(), I(l), I(s), F(0.0), B(causal), T({2}, i64), T({}, i64)})
      args.push_back(x);
    out.push_back(make(label, std::move(args), {{"scale", F(fill == "integers" ? 0.001 : 0.125)}}));
  };
  if (ctx.performance) {
    call("GPT-2 [1, 12, 1024, 64] causal f16", 1, 12, 12, 1024, 1024, 64, f16, true, true);
    return out;
  }
  for (DType t : {f16, bf16}) {
    const std::string d = " " + dtype_code_str(t);
    call("[2, 2, 5, 8]" + d, 2, 2, 2, 5, 5, 8, t, false);
    call("causal qkv slices" + d, 1, 4, 4, 7, 7, 8, t, true, true);
    call("grouped-query heads 4 / 2, causal" + d, 1, 4, 2, 6, 6, 8, t, true);
  }
  call("L 3 < S 7, causal (bottom-right)", 1, 2, 2, 3, 7, 8, f16, true);
  call("L 7 > S 3, causal (bottom-right)", 1, 2, 2, 7, 3, 8, bf16, true);
  call("head size 64", 1, 2, 2, 5, 6, 64, f16, false);
  call("values: integers (scale 0.001)", 1, 2, 2, 4, 4, 8, f16, true, false, "integers");
  call("special values in grad_out and out", 2, 2, 2, 5, 5, 8, f16, true, false, "special");
  call("error: f32", 1, 2, 2, 3, 3, 8, f32, false);
  call("error: head size 12", 1, 2, 2, 3, 3, 12, f16, false);
  const std::vector<Literal> tail{None(), None(),   I(3),        I(3),
                                  F(0.0), B(false), T({2}, i64), T({}, i64)};
  auto with_tail = [&](std::vector<Literal> head) {
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
  };
  out.push_back(make("error: logsumexp shape",
                     with_tail({T({1, 2, 3, 8}, f16), T({1, 2, 3, 8}, f16), T({1, 2, 3, 8}, f16),
                                T({1, 2, 3, 8}, f16), T({1, 2, 3, 8}, f16), T({1, 2, 4}, f32)})));
  out.push_back(make("error: grad_out shape",
                     with_tail({T({1, 2, 3, 16}, f16), T({1, 2, 3, 8}, f16), T({1, 2, 3, 8}, f16),
                                T({1, 2, 3, 8}, f16), T({1, 2, 3, 8}, f16), T({1, 2, 3}, f32)})));
  return out;
}

std::vector<Sample> efficient_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  auto call = [&](const std::string& label, const Literal& q, const Literal& k, const Literal& v,
                  const Literal& bias, bool lse, bool causal, KW kw = {}) {
    out.push_back(make(label, {q, k, v, bias, B(lse), F(0.0), B(causal)}, std::move(kw)));
  };
  if (ctx.performance) {
    for (DType t : {f16, f32}) {
      call("GPT-2 [1, 12, 1024, 64] causal " + dtype_code_str(t), qkv_slice(1, 12, 1024, 64, t),
           qkv_slice(1, 12, 1024, 64, t), qkv_slice(1, 12, 1024, 64, t), None(), true, true,
           {{"scale", F(0.125)}});
    }
    return out;
  }
  for (DType t : {f16, bf16, f32}) {
    const std::string d = " " + dtype_code_str(t);
    call("[2, 2, 5, 8]" + d, T({2, 2, 5, 8}, t), T({2, 2, 5, 8}, t), T({2, 2, 5, 8}, t), None(),
         true, false);
    call("causal qkv slices, scale 0.125" + d, qkv_slice(1, 4, 7, 8, t), qkv_slice(1, 4, 7, 8, t),
         qkv_slice(1, 4, 7, 8, t), None(), true, true, {{"scale", F(0.125)}});
  }
  call("L 3 < S 7, causal (top-left)", T({1, 2, 3, 4}, f32), T({1, 2, 7, 4}, f32),
       T({1, 2, 7, 4}, f32), None(), true, true);
  call("L 7 > S 3, causal (top-left)", T({1, 2, 7, 8}, f16), T({1, 2, 3, 8}, f16),
       T({1, 2, 3, 8}, f16), None(), true, true);
  call("L 40: logsumexp padded to 64", T({1, 1, 40, 4}, f32), T({1, 1, 6, 4}, f32),
       T({1, 1, 6, 4}, f32), None(), true, false);
  call("no logsumexp", T({1, 2, 5, 8}, bf16), T({1, 2, 5, 8}, bf16), T({1, 2, 5, 8}, bf16), None(),
       false, true);
  call("value head size 16", T({1, 2, 5, 8}, f16), T({1, 2, 5, 8}, f16), T({1, 2, 5, 16}, f16),
       None(), true, false);
  call("attn_bias [2, 2, 5, 6]", T({2, 2, 5, 8}, f16), T({2, 2, 6, 8}, f16), T({2, 2, 6, 8}, f16),
       aligned_bias(2, 2, 5, 6, f16), true, false);
  call("attn_bias expanded from [1, 1, 5, 5], causal", T({2, 2, 5, 4}, f32), T({2, 2, 5, 4}, f32),
       T({2, 2, 5, 4}, f32), T({2, 2, 5, 5}, f32, {0, 0, 8, 1}), true, true, {{"scale", F(0.5)}});
  call("head size 264", T({1, 1, 3, 264}, f16), T({1, 1, 3, 264}, f16), T({1, 1, 3, 264}, f16),
       None(), true, false);
  call("empty query sequence", T({1, 2, 0, 8}, f16), T({1, 2, 3, 8}, f16), T({1, 2, 3, 8}, f16),
       None(), true, false);
  call("empty batch", T({0, 2, 3, 8}, f16), T({0, 2, 3, 8}, f16), T({0, 2, 3, 8}, f16), None(),
       true, false);
  call("error: f64 inputs", T({1, 2, 3, 8}, DType::Float64), T({1, 2, 3, 8}, DType::Float64),
       T({1, 2, 3, 8}, DType::Float64), None(), true, false);
  call("error: head size 12 f16", T({1, 2, 3, 12}, f16), T({1, 2, 3, 12}, f16),
       T({1, 2, 3, 12}, f16), None(), true, false);
  call("error: head size 6 f32", T({1, 2, 3, 6}, f32), T({1, 2, 3, 6}, f32), T({1, 2, 3, 6}, f32),
       None(), true, false);
  call("error: grouped-query heads 4 / 2", T({1, 4, 3, 8}, f16), T({1, 2, 3, 8}, f16),
       T({1, 2, 3, 8}, f16), None(), true, false);
  call("error: 3-d inputs", T({2, 3, 8}, f16), T({2, 3, 8}, f16), T({2, 3, 8}, f16), None(), true,
       false);
  call("error: query's last dim strided", T({1, 2, 3, 8}, f16, {48, 1, 2, 6}), T({1, 2, 3, 8}, f16),
       T({1, 2, 3, 8}, f16), None(), true, false);
  call("error: 2-d attn_bias", T({2, 2, 5, 8}, f16), T({2, 2, 5, 8}, f16), T({2, 2, 5, 8}, f16),
       T({5, 5}, f16), true, false);
  call("error: attn_bias [1, 1, 5, 5] (not expanded)", T({2, 2, 5, 8}, f16), T({2, 2, 5, 8}, f16),
       T({2, 2, 5, 8}, f16), T({1, 1, 5, 5}, f16), true, false);
  call("error: f32 attn_bias for f16", T({2, 2, 5, 8}, f16), T({2, 2, 5, 8}, f16),
       T({2, 2, 5, 8}, f16), aligned_bias(2, 2, 5, 5, f32), true, false);
  call("error: attn_bias rows not aligned (contiguous [2, 2, 5, 5])", T({2, 2, 5, 8}, f16),
       T({2, 2, 5, 8}, f16), T({2, 2, 5, 8}, f16), T({2, 2, 5, 5}, f16), true, false);
  return out;
}

std::vector<Sample> efficient_backward_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  // grad_out and out laid out [B, L, H, Ev] as the forward returns them; logsumexp padded.
  auto call = [&](const std::string& label, int64_t b, int64_t h, int64_t l, int64_t s, int64_t e,
                  DType t, bool causal, const Literal& bias, std::vector<bool> mask,
                  bool sliced = false, const std::string& fill = "", int64_t lse_len = -1) {
    const Literal q = sliced ? qkv_slice(b, h, l, e, t) : T({b, h, l, e}, t);
    const Literal kv = sliced ? qkv_slice(b, h, s, e, t) : T({b, h, s, e}, t);
    std::vector<Literal> args{blhe(b, h, l, e, t),
                              q,
                              kv,
                              kv,
                              bias,
                              blhe(b, h, l, e, t),
                              T({b, h, lse_len < 0 ? padded(l) : lse_len}, f32)};
    if (fill == "special") {  // grad_out and out only
      args[0].tensor.fill = fill;
      args[5].tensor.fill = fill;
    } else if (!fill.empty()) {  // logsumexp positive: P = exp(s - lse) stays finite in f32
      for (Literal& x : args)
        if (x.kind == cases::LitKind::Tensor) x.tensor.fill = fill;
      args[6].tensor.fill = "positive";
    }
    for (const Literal& x : {T({}, i64), T({}, i64), F(0.0), bools(std::move(mask)), B(causal)})
      args.push_back(x);
    out.push_back(make(label, std::move(args), {{"scale", F(fill == "integers" ? 0.001 : 0.125)}}));
  };
  const std::vector<bool> qkv{true, true, true, false}, all{true, true, true, true};
  if (ctx.performance) {
    call("GPT-2 [1, 12, 1024, 64] causal f16", 1, 12, 1024, 1024, 64, f16, true, None(), qkv, true);
    return out;
  }
  for (DType t : {f16, bf16, f32}) {
    const std::string d = " " + dtype_code_str(t);
    call("[2, 2, 5, 8]" + d, 2, 2, 5, 5, 8, t, false, None(), qkv);
    call("causal qkv slices" + d, 1, 4, 7, 7, 8, t, true, None(), qkv, true);
  }
  call("L 3 < S 7, causal (top-left)", 1, 2, 3, 7, 4, f32, true, None(), qkv);
  call("L 40: logsumexp padded to 64", 1, 1, 40, 6, 4, f32, false, None(), qkv);
  call("attn_bias, grad_bias", 2, 2, 5, 6, 8, f16, false, aligned_bias(2, 2, 5, 6, f16), all);
  call("attn_bias expanded, grad_bias, causal", 2, 2, 5, 5, 4, f32, true,
       T({2, 2, 5, 5}, f32, {0, 0, 8, 1}), all);
  call("attn_bias without grad_bias", 1, 2, 4, 4, 8, bf16, false, aligned_bias(1, 2, 4, 4, bf16),
       qkv);
  call("grad_input_mask all false (the gradients are computed)", 1, 2, 4, 4, 8, f16, false, None(),
       {false, false, false, false});
  call("logsumexp of length L (unpadded)", 1, 2, 5, 5, 8, f16, false, None(), qkv, false, "", 5);
  call("values: integers (scale 0.001)", 1, 2, 4, 4, 8, f16, true, None(), qkv, false, "integers");
  call("special values in grad_out and out", 2, 2, 5, 5, 8, f16, true, None(), qkv, false,
       "special");
  call("error: grad_input_mask[3] without attn_bias", 1, 2, 3, 3, 8, f16, false, None(), all);
  call("error: logsumexp shorter than L", 1, 2, 5, 5, 8, f16, false, None(), qkv, false, "", 3);
  call("error: f64", 1, 2, 3, 3, 8, DType::Float64, false, None(), qkv);
  call("error: attn_bias rows not aligned", 2, 2, 5, 5, 8, f16, false, T({2, 2, 5, 5}, f16), all);
  return out;
}

}  // namespace crucible::attention
