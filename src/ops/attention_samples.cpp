// Samples of the attention family (attention.cpp): small calls of every dtype, causal and not,
// query and key lengths that differ, masks (2-d, broadcast 4-d, with causal), grouped-query
// heads (cuDNN), the strided layouts real models pass (query/key/value sliced out of one
// [B, L, 3 * H * E] projection, as in the recorded traces), empty sequences and ATen's errors.
#include <string>
#include <vector>

#include "ops/attention_internal.h"
#include "ops/norm_internal.h"
#include "ops/samples.h"

namespace crucible::attention {
namespace {

using namespace samples;  // NOLINT(google-build-using-namespace)

const DType f32 = DType::Float32;

// A [B, H, L, E] slice of a fused [B, L, 3 * H * E] projection (query, key or value of a
// model's qkv linear layer, viewed per head).
Literal qkv_slice(int64_t b, int64_t h, int64_t l, int64_t e, DType t) {
  return T({b, h, l, e}, t, {l * 3 * h * e, e, 3 * h * e, 1});
}

// A [B, H, L, E] tensor laid out [B, L, H, E] (an attention output, its gradient).
Literal blhe(int64_t b, int64_t h, int64_t l, int64_t e, DType t) {
  return T({b, h, l, e}, t, {l * h * e, e, h * e, 1});
}

// logsumexp [B, H, L] laid out [B, L, H], as the CPU flash forward returns it.
Literal cpu_lse(int64_t b, int64_t h, int64_t l, DType t) { return T({b, h, l}, t, {l * h, 1, h}); }

DType acc(DType t) { return t == DType::Float64 ? t : f32; }

// special_note: the backwards' special values go into grad_out and out. In query, key or
// logsumexp they make scores whose exp overflows f32 (the kernels' accumulation type, ATen's
// as well) where the f64 reference's does not, so inf * 0 and inf - inf give NaN there and a
// finite or infinite value in f64; NaN and inf in grad_out and out propagate the same way in
// both. They are f16 values, whose products and sums stay finite in f32 (f32's and bf16's
// largest values overflow the f32 sums D = rowsum(grad_out * out), in ATen's kernel too).

using KW = std::vector<std::pair<std::string, Literal>>;

}  // namespace

std::vector<Sample> flash_cpu_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  auto call = [&](const std::string& label, const Literal& q, const Literal& k, const Literal& v,
                  bool causal, KW kw = {}, double dropout = 0.0) {
    out.push_back(make(label, {q, k, v, F(dropout), B(causal)}, std::move(kw)));
  };
  if (ctx.performance) {
    for (DType t : {f32, DType::BFloat16}) {
      call("GPT-2 [1, 12, 1024, 64] causal " + dtype_code_str(t), qkv_slice(1, 12, 1024, 64, t),
           qkv_slice(1, 12, 1024, 64, t), qkv_slice(1, 12, 1024, 64, t), true,
           {{"scale", F(0.125)}});
    }
    call("[8, 16, 512, 64] f32", T({8, 16, 512, 64}, f32), T({8, 16, 512, 64}, f32),
         T({8, 16, 512, 64}, f32), false);
    return out;
  }
  for (DType t : floating_dtypes()) {
    const std::string d = " " + dtype_code_str(t);
    call("[2, 2, 5, 8]" + d, T({2, 2, 5, 8}, t), T({2, 2, 5, 8}, t), T({2, 2, 5, 8}, t), false);
    call("causal [1, 3, 6, 4]" + d, T({1, 3, 6, 4}, t), T({1, 3, 6, 4}, t), T({1, 3, 6, 4}, t),
         true);
    call("qkv slices, causal, scale 0.125" + d, qkv_slice(1, 4, 7, 8, t), qkv_slice(1, 4, 7, 8, t),
         qkv_slice(1, 4, 7, 8, t), true, {{"scale", F(0.125)}});
  }
  call("L 3 < S 7, causal (top-left)", T({1, 2, 3, 4}, f32), T({1, 2, 7, 4}, f32),
       T({1, 2, 7, 4}, f32), true);
  call("L 7 > S 3, causal (top-left)", T({1, 2, 7, 4}, f32), T({1, 2, 3, 4}, f32),
       T({1, 2, 3, 4}, f32), true);
  call("L 3 < S 9", T({2, 1, 3, 4}, DType::Float64), T({2, 1, 9, 4}, DType::Float64),
       T({2, 1, 9, 4}, DType::Float64), false);
  call("scale 0.7 (keyword)", T({1, 2, 5, 4}, f32), T({1, 2, 5, 4}, f32), T({1, 2, 5, 4}, f32),
       false, {{"scale", F(0.7)}});
  call("attn_mask 2-d f32", T({1, 2, 4, 6}, f32), T({1, 2, 6, 6}, f32), T({1, 2, 6, 6}, f32), false,
       {{"attn_mask", T({4, 6}, f32)}});
  call("attn_mask 4-d broadcast [2, 1, 4, 6]", T({2, 3, 4, 6}, f32), T({2, 3, 6, 6}, f32),
       T({2, 3, 6, 6}, f32), false, {{"attn_mask", T({2, 1, 4, 6}, f32)}});
  call("attn_mask and causal", T({1, 2, 5, 4}, f32), T({1, 2, 5, 4}, f32), T({1, 2, 5, 4}, f32),
       true, {{"attn_mask", T({1, 2, 5, 5}, f32)}, {"scale", F(0.5)}});
  call("bf16 input, bf16 attn_mask", T({1, 2, 4, 8}, DType::BFloat16),
       T({1, 2, 4, 8}, DType::BFloat16), T({1, 2, 4, 8}, DType::BFloat16), false,
       {{"attn_mask", T({4, 4}, DType::BFloat16)}});
  call("f16 input, f32 attn_mask", T({1, 2, 4, 8}, DType::Float16), T({1, 2, 4, 8}, DType::Float16),
       T({1, 2, 4, 8}, DType::Float16), true, {{"attn_mask", T({1, 1, 4, 4}, f32)}});
  call("one key", T({1, 2, 3, 4}, f32), T({1, 2, 1, 4}, f32), T({1, 2, 1, 4}, f32), false);
  call("transposed key (stride 1 along S)", T({1, 2, 5, 4}, f32),
       T({1, 2, 5, 4}, f32, {40, 20, 1, 5}), T({1, 2, 5, 4}, f32), false);
  call("empty query sequence", T({1, 2, 0, 4}, f32), T({1, 2, 3, 4}, f32), T({1, 2, 3, 4}, f32),
       true);
  call("error: 3-d inputs", T({2, 5, 8}, f32), T({2, 5, 8}, f32), T({2, 5, 8}, f32), false);
  call("error: dropout_p 0.1", T({1, 2, 3, 4}, f32), T({1, 2, 3, 4}, f32), T({1, 2, 3, 4}, f32),
       false, {}, 0.1);
  call("error: integral input", T({1, 2, 3, 4}, DType::Int64), T({1, 2, 3, 4}, DType::Int64),
       T({1, 2, 3, 4}, DType::Int64), false);
  call("error: value head size differs", T({1, 2, 3, 4}, f32), T({1, 2, 3, 4}, f32),
       T({1, 2, 3, 6}, f32), false);
  call("error: bool attn_mask", T({1, 2, 3, 4}, f32), T({1, 2, 3, 4}, f32), T({1, 2, 3, 4}, f32),
       false, {{"attn_mask", T({3, 3}, DType::Bool)}});
  call("error: f64 attn_mask for f32", T({1, 2, 3, 4}, f32), T({1, 2, 3, 4}, f32),
       T({1, 2, 3, 4}, f32), false, {{"attn_mask", T({3, 3}, DType::Float64)}});
  call("error: 3-d attn_mask", T({1, 2, 3, 4}, f32), T({1, 2, 3, 4}, f32), T({1, 2, 3, 4}, f32),
       false, {{"attn_mask", T({2, 3, 3}, f32)}});
  call("error: attn_mask does not broadcast", T({1, 2, 3, 4}, f32), T({1, 2, 3, 4}, f32),
       T({1, 2, 3, 4}, f32), false, {{"attn_mask", T({3, 5}, f32)}});
  call("error: key batch differs", T({2, 2, 3, 4}, f32), T({1, 2, 3, 4}, f32), T({1, 2, 3, 4}, f32),
       false);
  call("error: key dtype differs", T({1, 2, 3, 4}, f32), T({1, 2, 3, 4}, DType::Float64),
       T({1, 2, 3, 4}, f32), false);
  return out;
}

std::vector<Sample> flash_cpu_backward_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  // grad_out and out laid out [B, L, H, E], logsumexp [B, L, H], as the forward returns them.
  auto call = [&](const std::string& label, int64_t b, int64_t h, int64_t l, int64_t s, int64_t e,
                  DType t, bool causal, KW kw = {}, bool sliced = false, double dropout = 0.0,
                  const std::string& fill = "") {
    const Literal q = sliced ? qkv_slice(b, h, l, e, t) : T({b, h, l, e}, t);
    const Literal kv = sliced ? qkv_slice(b, h, s, e, t) : T({b, h, s, e}, t);
    Literal g = blhe(b, h, l, e, t), o = blhe(b, h, l, e, t), lse = cpu_lse(b, h, l, acc(t));
    std::vector<Literal> args{g, q, kv, kv, o, lse};
    if (fill == "special") {  // grad_out and out only (see special_note)
      args[0].tensor.fill = fill;
      args[4].tensor.fill = fill;
    } else if (!fill.empty()) {  // logsumexp positive: P = exp(s - lse) stays finite in f32
      for (Literal& x : args) x.tensor.fill = fill;
      args[5].tensor.fill = "positive";
    }
    args.push_back(F(dropout));
    args.push_back(B(causal));
    out.push_back(make(label, std::move(args), std::move(kw)));
  };
  if (ctx.performance) {
    for (DType t : {f32, DType::BFloat16})
      call("GPT-2 [1, 12, 1024, 64] causal " + dtype_code_str(t), 1, 12, 1024, 1024, 64, t, true,
           {{"scale", F(0.125)}}, true);
    return out;
  }
  for (DType t : floating_dtypes()) {
    const std::string d = " " + dtype_code_str(t);
    call("[2, 2, 5, 8]" + d, 2, 2, 5, 5, 8, t, false);
    call("causal qkv slices, scale 0.125" + d, 1, 3, 6, 6, 8, t, true, {{"scale", F(0.125)}}, true);
  }
  call("L 3 < S 7, causal", 1, 2, 3, 7, 4, f32, true);
  call("L 7 > S 3, causal", 1, 2, 7, 3, 4, DType::Float64, true);
  call("attn_mask 2-d f32", 1, 2, 4, 6, 4, f32, false, {{"attn_mask", T({4, 6}, f32)}});
  call("attn_mask 4-d and causal", 2, 2, 4, 4, 4, f32, true,
       {{"attn_mask", T({2, 1, 4, 4}, f32)}, {"scale", F(0.4)}});
  call("values: integers (scale 0.001)", 1, 2, 4, 4, 4, f32, true, {{"scale", F(0.001)}}, false,
       0.0, "integers");
  call("special values in grad_out and out f16", 2, 2, 5, 5, 8, DType::Float16, true, {}, false,
       0.0, "special");
  call("empty query sequence", 1, 2, 0, 3, 4, f32, false);
  call("error: dropout_p 0.2", 1, 2, 3, 3, 4, f32, false, {}, false, 0.2);
  out.push_back(
      make("error: logsumexp shape",
           {blhe(1, 2, 3, 4, f32), T({1, 2, 3, 4}, f32), T({1, 2, 3, 4}, f32), T({1, 2, 3, 4}, f32),
            blhe(1, 2, 3, 4, f32), T({1, 2, 4}, f32), F(0.0), B(false)}));
  out.push_back(
      make("error: grad_out shape",
           {T({1, 2, 3, 5}, f32), T({1, 2, 3, 4}, f32), T({1, 2, 3, 4}, f32), T({1, 2, 3, 4}, f32),
            blhe(1, 2, 3, 4, f32), cpu_lse(1, 2, 3, f32), F(0.0), B(false)}));
  return out;
}

namespace {

std::vector<Literal> cudnn_args(const Literal& q, const Literal& k, const Literal& v,
                                const Literal& bias, bool lse, bool causal) {
  return {q, k, v, bias, B(lse), F(0.0), B(causal)};
}

}  // namespace

std::vector<Sample> cudnn_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  const DType h = DType::Float16, bf = DType::BFloat16;
  auto call = [&](const std::string& label, std::vector<Literal> args, KW kw = {}) {
    out.push_back(make(label, std::move(args), std::move(kw)));
  };
  if (ctx.performance) {
    call("GPT-2 [1, 12, 1024, 64] causal f16",
         cudnn_args(qkv_slice(1, 12, 1024, 64, h), qkv_slice(1, 12, 1024, 64, h),
                    qkv_slice(1, 12, 1024, 64, h), None(), true, true),
         {{"scale", F(0.125)}});
    return out;
  }
  for (DType t : {h, bf}) {
    const std::string d = " " + dtype_code_str(t);
    call("[2, 2, 5, 8]" + d, cudnn_args(T({2, 2, 5, 8}, t), T({2, 2, 5, 8}, t), T({2, 2, 5, 8}, t),
                                        None(), true, false));
    call("causal qkv slices, scale 0.125" + d,
         cudnn_args(qkv_slice(1, 4, 7, 8, t), qkv_slice(1, 4, 7, 8, t), qkv_slice(1, 4, 7, 8, t),
                    None(), true, true),
         {{"scale", F(0.125)}});
    call("grouped-query heads 4 / 2, causal" + d,
         cudnn_args(blhe(1, 4, 6, 8, t), blhe(1, 2, 6, 8, t), blhe(1, 2, 6, 8, t), None(), true,
                    true),
         {{"scale", F(0.125)}});
  }
  call("attn_bias [1, 1, 4, 6]", cudnn_args(T({2, 2, 4, 8}, h), T({2, 2, 6, 8}, h),
                                            T({2, 2, 6, 8}, h), T({1, 1, 4, 6}, h), true, false));
  call("L 3 < S 7, causal (top-left)",
       cudnn_args(T({1, 2, 3, 4}, h), T({1, 2, 7, 4}, h), T({1, 2, 7, 4}, h), None(), true, true));
  call("no logsumexp", cudnn_args(T({1, 2, 5, 4}, bf), T({1, 2, 5, 4}, bf), T({1, 2, 5, 4}, bf),
                                  None(), false, true));
  call("value head size 6",
       cudnn_args(T({1, 2, 5, 4}, h), T({1, 2, 5, 4}, h), T({1, 2, 5, 6}, h), None(), true, false));
  call("f32 inputs, f32 attn_bias", cudnn_args(T({1, 2, 3, 4}, f32), T({1, 2, 5, 4}, f32),
                                               T({1, 2, 5, 4}, f32), T({3, 5}, f32), true, false));
  call("f16 inputs, f32 attn_bias", cudnn_args(T({1, 2, 3, 4}, h), T({1, 2, 3, 4}, h),
                                               T({1, 2, 3, 4}, h), T({3, 3}, f32), true, true));
  call("error: 3 query heads, 2 key heads",
       cudnn_args(T({1, 3, 3, 4}, h), T({1, 2, 3, 4}, h), T({1, 2, 3, 4}, h), None(), true, false));
  call("error: 3-d inputs",
       cudnn_args(T({2, 3, 4}, h), T({2, 3, 4}, h), T({2, 3, 4}, h), None(), true, false));
  return out;
}

std::vector<Sample> cudnn_backward_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  const DType h = DType::Float16, bf = DType::BFloat16;
  auto call = [&](const std::string& label, int64_t b, int64_t hq, int64_t hk, int64_t l, int64_t s,
                  int64_t e, DType t, bool causal, bool sliced = false,
                  const std::string& fill = "") {
    const Literal q = sliced ? qkv_slice(b, hq, l, e, t) : blhe(b, hq, l, e, t);
    const Literal kv = sliced ? qkv_slice(b, hk, s, e, t) : blhe(b, hk, s, e, t);
    std::vector<Literal> args{blhe(b, hq, l, e, t), q, kv, kv, blhe(b, hq, l, e, t),
                              T({b, hq, l, 1}, f32)};
    if (fill == "special") {  // grad_out and out only (see special_note)
      args[0].tensor.fill = fill;
      args[4].tensor.fill = fill;
    } else if (!fill.empty()) {  // logsumexp positive: P = exp(s - lse) stays finite in f32
      for (Literal& x : args) x.tensor.fill = fill;
      args[5].tensor.fill = "positive";
    }
    for (const Literal& x :
         {T({}, DType::Int64), T({}, DType::Int64), None(), None(), None(), I(l), I(s), F(0.0)})
      args.push_back(x);
    args.push_back(B(causal));
    out.push_back(make(label, std::move(args), {{"scale", F(fill == "integers" ? 0.001 : 0.125)}}));
  };
  if (ctx.performance) {
    call("GPT-2 [1, 12, 1024, 64] causal f16", 1, 12, 12, 1024, 1024, 64, h, true, true);
    return out;
  }
  for (DType t : {h, bf}) {
    const std::string d = " " + dtype_code_str(t);
    call("[2, 2, 5, 8]" + d, 2, 2, 2, 5, 5, 8, t, false);
    call("causal qkv slices" + d, 1, 4, 4, 7, 7, 8, t, true, true);
    call("grouped-query heads 4 / 2, causal" + d, 1, 4, 2, 6, 6, 8, t, true);
  }
  call("L 3 < S 7, causal", 1, 2, 2, 3, 7, 4, h, true);
  call("f32 [1, 2, 5, 8]", 1, 2, 2, 5, 5, 8, f32, false);
  call("values: integers (scale 0.001)", 1, 2, 2, 4, 4, 4, h, true, false, "integers");
  call("special values in grad_out and out", 2, 2, 2, 5, 5, 8, h, true, false, "special");
  return out;
}

}  // namespace crucible::attention
