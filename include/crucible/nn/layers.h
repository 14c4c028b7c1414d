// The layers real models are made of, with PyTorch's parameter names and initialisations:
// Linear, Conv2d, BatchNorm2d, LayerNorm, RMSNorm, GroupNorm, Embedding, Dropout, pooling,
// multi-head attention (causal masks, grouped KV heads, rotary embeddings) and MLPs.
#pragma once

#include <cstdint>
#include <string>

#include "crucible/nn/functional.h"
#include "crucible/nn/module.h"

namespace crucible::nn {

class Linear : public Module {
 public:
  Linear(int64_t in, int64_t out, bool bias = true, double init_std = 0);  // 0: PyTorch's uniform
  Var forward(Tracer& t, const Var& x) const;
  int64_t in_features, out_features;
};

class Conv2d : public Module {
 public:
  Conv2d(int64_t in, int64_t out, int64_t kernel, int64_t stride = 1, int64_t padding = 0,
         int64_t groups = 1, bool bias = true);
  Var forward(Tracer& t, const Var& x) const;
  int64_t stride, padding, groups;
};

class BatchNorm2d : public Module {
 public:
  explicit BatchNorm2d(int64_t channels, double eps = 1e-5, double momentum = 0.1);
  Var forward(Tracer& t, const Var& x) const;
  double eps, momentum;
};

class LayerNorm : public Module {
 public:
  explicit LayerNorm(int64_t dim, double eps = 1e-5);
  Var forward(Tracer& t, const Var& x) const;
  int64_t dim;
  double eps;
};

class RMSNorm : public Module {
 public:
  explicit RMSNorm(int64_t dim, double eps = 1e-6);
  Var forward(Tracer& t, const Var& x) const;
  double eps;
};

class GroupNorm : public Module {
 public:
  GroupNorm(int64_t groups, int64_t channels, double eps = 1e-5);
  Var forward(Tracer& t, const Var& x) const;
  int64_t groups;
  double eps;
};

class Embedding : public Module {
 public:
  // padding_idx >= 0: that row gets no gradient (PyTorch's nn.Embedding(padding_idx=)).
  Embedding(int64_t num, int64_t dim, double init_std = 1.0, int64_t padding_idx = -1);
  Var forward(Tracer& t, const Var& indices) const;
  int64_t num, dim, padding_idx;
};

class Dropout : public Module {
 public:
  explicit Dropout(double p) : p(p) {}
  Var forward(Tracer& t, const Var& x) const { return F::dropout(t, x, p, training()); }
  double p;
};

class MaxPool2d : public Module {
 public:
  MaxPool2d(int64_t kernel, int64_t stride, int64_t padding = 0)
      : kernel(kernel), stride(stride), padding(padding) {}
  Var forward(Tracer& t, const Var& x) const {
    return F::max_pool2d(t, x, kernel, stride, padding);
  }
  int64_t kernel, stride, padding;
};

class AdaptiveAvgPool2d : public Module {
 public:
  AdaptiveAvgPool2d(int64_t h, int64_t w) : h(h), w(w) {}
  Var forward(Tracer& t, const Var& x) const { return F::adaptive_avg_pool2d(t, x, h, w); }
  int64_t h, w;
};

// Self-attention with q_proj, k_proj, v_proj and o_proj (Llama's names): `heads` query heads,
// `kv_heads` key/value heads (fewer: grouped-query attention), a causal mask or none, and
// rotary embeddings when rope_theta > 0.
class MultiheadAttention : public Module {
 public:
  struct Config {
    int64_t dim = 0;
    int64_t heads = 1;
    int64_t kv_heads = 0;  // 0: heads
    bool bias = false;
    bool causal = true;
    double rope_theta = 0;
  };
  explicit MultiheadAttention(const Config& c);
  Var forward(Tracer& t, const Var& x) const;  // x [B, S, dim]
  Config config;

 private:
  Linear *q_proj_, *k_proj_, *v_proj_, *o_proj_;
};

// An MLP: fc1 -> activation -> fc2 (`act` relu, gelu, gelu_tanh, silu), or SwiGLU
// (act "swiglu": down_proj(silu(gate_proj(x)) * up_proj(x)), Llama's names).
class Mlp : public Module {
 public:
  Mlp(int64_t dim, int64_t hidden, const std::string& act, bool bias = true);
  Var forward(Tracer& t, const Var& x) const;
  std::string act;

 private:
  Linear *fc1_ = nullptr, *fc2_ = nullptr, *gate_ = nullptr, *up_ = nullptr, *down_ = nullptr;
};

}  // namespace crucible::nn
