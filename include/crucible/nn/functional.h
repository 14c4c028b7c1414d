// Functionals: the operations layers are made of, each a catalog op call (or a few) recorded by
// a Tracer, which checks every call with the op's meta function. They spell a model the way
// torch.export decomposes PyTorch's modules to Core ATen (linear as t + addmm, attention as bmm
// + _softmax, RMSNorm as pow + mean + rsqrt), so a captured graph reads as an exported one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "crucible/nn/tracer.h"

namespace crucible::nn::F {

// x[..., in] @ w[out, in]^T + b (b undefined: no bias). More than 2 dims are viewed as 2.
Var linear(Tracer& t, const Var& x, const Var& w, const Var& b);
// x @ w without transposition (w [in, out]), as BackendBench's SmokeTestModel writes it.
Var mm(Tracer& t, const Var& a, const Var& b);

Var relu(Tracer& t, const Var& x);
Var gelu(Tracer& t, const Var& x, const std::string& approximate = "none");
Var silu(Tracer& t, const Var& x);
Var tanh(Tracer& t, const Var& x);
Var relu6(Tracer& t, const Var& x);                                // hardtanh(x, 0, 6)
Var activation(Tracer& t, const Var& x, const std::string& name);  // relu gelu gelu_tanh silu

Var add(Tracer& t, const Var& a, const Var& b);
Var sub(Tracer& t, const Var& a, const Var& b);
Var mul(Tracer& t, const Var& a, const Var& b);
Var mul(Tracer& t, const Var& a, double s);
Var add(Tracer& t, const Var& a, double s);
Var neg(Tracer& t, const Var& x);

// Layout. `view` copies a value first when it is not contiguous (as reshape does).
Var contiguous(Tracer& t, const Var& x);
Var view(Tracer& t, const Var& x, const Shape& shape);
Var permute(Tracer& t, const Var& x, const std::vector<int64_t>& dims);
Var transpose(Tracer& t, const Var& x, int64_t d0, int64_t d1);
Var expand(Tracer& t, const Var& x, const Shape& shape);
Var slice(Tracer& t, const Var& x, int64_t dim, int64_t start, int64_t end);
Var select(Tracer& t, const Var& x, int64_t dim, int64_t index);
Var cat(Tracer& t, const std::vector<Var>& xs, int64_t dim);

Var sum(Tracer& t, const Var& x);  // every element, 0-d
Var sum(Tracer& t, const Var& x, const std::vector<int64_t>& dims, bool keepdim);
Var mean(Tracer& t, const Var& x, const std::vector<int64_t>& dims, bool keepdim);

Var softmax(Tracer& t, const Var& x, int64_t dim);
Var layer_norm(Tracer& t, const Var& x, const std::vector<int64_t>& normalized_shape, const Var& w,
               const Var& b, double eps);
Var rms_norm(Tracer& t, const Var& x, const Var& w, double eps);
Var group_norm(Tracer& t, const Var& x, int64_t groups, const Var& w, const Var& b, double eps);
// training: batch statistics (native_batch_norm, running stats updated); else the running stats
// (_native_batch_norm_legit_no_training).
Var batch_norm(Tracer& t, const Var& x, const Var& w, const Var& b, const Var& running_mean,
               const Var& running_var, bool training, double momentum, double eps);

Var conv2d(Tracer& t, const Var& x, const Var& w, const Var& b, int64_t stride, int64_t padding,
           int64_t groups = 1);
Var max_pool2d(Tracer& t, const Var& x, int64_t kernel, int64_t stride, int64_t padding = 0);
Var avg_pool2d(Tracer& t, const Var& x, int64_t kernel, int64_t stride);
Var adaptive_avg_pool2d(Tracer& t, const Var& x, int64_t out_h, int64_t out_w);

// padding_idx >= 0: that row's gradient is zero (ATen's padding_idx; the row still reads).
Var embedding(Tracer& t, const Var& weight, const Var& indices, int64_t padding_idx = -1);
// native_dropout when training and p > 0 (the mask drawn from the backend's seeded RNG); x
// itself otherwise.
Var dropout(Tracer& t, const Var& x, double p, bool training);

// Scaled dot-product attention over q [B, S, H, D], k and v [B, S, Hkv, D] (H a multiple of
// Hkv: grouped KV heads are repeated), returning [B, S, H * D]. `causal` adds a lower-triangular
// mask (a constant of 0 and -inf).
Var attention(Tracer& t, const Var& q, const Var& k, const Var& v, bool causal);
// Rotary position embedding of x [B, S, H, D] (rotate_half form, as Llama's).
Var rotary(Tracer& t, const Var& x, double theta);

}  // namespace crucible::nn::F
