// Private declarations of the attention family (attention.cpp, attention_cuda.cpp and their
// samples): the shapes of a scaled-dot-product attention call, the checks and the f64
// computation every variant shares, costs, judges and the sample generators. Internal to
// libcrucible.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "crucible/ops/op.h"

namespace crucible::attention {

// The sizes of a call: query [B, Hq, L, E], key [B, Hk, S, E], value [B, Hk, S, Ev]; Hq is a
// multiple of Hk (grouped-query attention: query head h reads key/value head h / (Hq / Hk)).
struct Dims {
  int64_t b = 0, hq = 0, hk = 0, l = 0, s = 0, e = 0, ev = 0;
};

using OptT = std::optional<Tensor>;

// The name of t's dtype, for messages.
std::string tname(const Tensor& t);

Dims dims_of(const Tensor& q, const Tensor& k, const Tensor& v);

// What every variant needs beyond its own ATen checks: consistent sizes and dtypes (ATen's
// kernels read out of bounds otherwise). `who` prefixes the messages.
Dims check_structure(const std::string& who, const Tensor& q, const Tensor& k, const Tensor& v);
// Raises `who: msg` unless query, key and value are 4-d.
void check_4d(const std::string& who, const std::string& msg, const Tensor& q, const Tensor& k,
              const Tensor& v);
// A mask must broadcast to the scores' shape [B, Hq, L, S].
void check_mask_broadcast(const std::string& who, const Tensor& m, const Dims& d);
void check_shape(const std::string& who, const char* name, const Tensor& t, const Shape& want);
// grad_out and out [B, Hq, L, Ev] of one dtype; logsumexp of `lse_shape`, floating.
void check_saved(const std::string& who, const Tensor& g, const Tensor& out, const Tensor& lse,
                 const Dims& d, const Shape& lse_shape);
// The `scale` argument, 1 / sqrt(E) when None.
double scale_of(const Value& scale, int64_t e);

// One call in f64: the inputs made contiguous, the mask expanded to [B, Hq, L, S].
struct Call {
  Tensor q, k, v;  // f64, contiguous
  Tensor mask;     // f64 [B, Hq, L, S] contiguous, or undefined
  bool causal = false;
  // is_causal masks key j > i + causal_offset: 0 aligns the mask at the top left (the CPU
  // kernel, cuDNN, memory-efficient attention), S - L at the bottom right (FlashAttention).
  int64_t causal_offset = 0;
  // The logsumexp of a row whose keys are all masked (its output is 0): -inf for the CPU
  // kernel and cuDNN, +inf for FlashAttention, 0 for memory-efficient attention.
  double masked_lse = -std::numeric_limits<double>::infinity();
  double scale = 1;
  Dims d;
};
Call make_call(const Tensor& q, const Tensor& k, const Tensor& v, const OptT& mask, bool causal,
               double scale);

// out [B, Hq, L, Ev] and lse [B, Hq, L], row-major, in f64.
struct Forward {
  std::vector<double> out, lse;
};
Forward forward(const Call& c);

// Gradients dQ [B, Hq, L, E], dK [B, Hk, S, E], dV [B, Hk, S, Ev] in f64, row-major, from
// grad_out and out ([B, Hq, L, Ev]) and lse (B * Hq * L values, row-major); `ds`, when given,
// receives dS = P * (dP - D) [B, Hq, L, S] (the gradient of the scores before scaling, which is
// the gradient of an additive mask).
struct Backward {
  std::vector<double> dq, dk, dv;
};
Backward backward(const Call& c, const Tensor& grad_out, const Tensor& out,
                  std::span<const double> lse, std::vector<double>* ds = nullptr);

// Stores `vals` (row-major, rounded once) into the output `out`, allocated as the op's meta
// function laid it out.
void store(const Value& out, const std::vector<double>& vals);

// Forward: 2 flops per multiply-add of the two products; backward (products_factor 2.5): the
// scores again, dV, dP, dQ and dK. Bytes: every tensor in and out.
CostFn attention_cost(double products_factor);
// The tolerance widening of a call whose query is argument `q_arg` (key and value follow it).
double attention_tol_scale(const Values& a, int q_arg, bool backward);
ComparePolicy attention_compare(int q_arg, bool backward);

// The strides of a fresh [B, H, L, E] tensor laid out as [B, L, H, E] (what the CPU flash
// kernel and the CUDA kernels allocate: heads interleaved within a sequence position).
Shape blhe_strides(const Shape& bhle);

// The strides of a fresh tensor of `shape` whose dims are ordered in memory as `like`'s are
// (cuDNN's alloc_with_matching_layout: dims sorted by `like`'s strides, ties by position).
Shape matching_strides(const Tensor& like, const Shape& shape);

// The samples of each op (attention_samples.cpp).
std::vector<Sample> flash_cpu_samples(const SampleContext& ctx);
std::vector<Sample> flash_cpu_backward_samples(const SampleContext& ctx);
std::vector<Sample> cudnn_samples(const SampleContext& ctx);
std::vector<Sample> cudnn_backward_samples(const SampleContext& ctx);
std::vector<Sample> flash_samples(const SampleContext& ctx);
std::vector<Sample> flash_backward_samples(const SampleContext& ctx);
std::vector<Sample> efficient_samples(const SampleContext& ctx);
std::vector<Sample> efficient_backward_samples(const SampleContext& ctx);

}  // namespace crucible::attention
