// The `cpu` backend's scaled-dot-product attention: _scaled_dot_product_flash_attention_for_cpu,
// _scaled_dot_product_cudnn_attention, _scaled_dot_product_flash_attention and
// _scaled_dot_product_efficient_attention, forward and backward (the variants differ in their
// checks and layouts, which the catalog's meta functions give, in the alignment of the causal
// mask and in the logsumexp of a row whose keys are all masked).
//
// Blocked attention on the cpu backend's gemm: per (batch, head), 64 query rows at a time, the
// scores S = scale * Q K^T (+ mask, causal -inf) are one gemm, the row softmax (max, exp, sum,
// logsumexp) a vectorised pass over the block (softmax_attention_loops.h, built per ISA level),
// the output P V a second gemm. The backward recomputes
// P = exp(S - logsumexp) from the saved logsumexp and runs four more gemms per block (dV += P^T
// dO, dP = dO V^T, dQ = scale dS K, dK += scale dS^T Q with dS = P * (dP - rowsum(dO * O))).
// f16 and bf16 are computed in f32 (rounded once into the output), f64 in f64. Work is split
// over (batch, head) pairs -- over key/value heads in the backward, whose dK/dV sum over the
// query heads of a group -- with one BLAS thread each, or handed to a multi-threaded gemm when
// there are fewer pairs than threads. Checks and output layouts come from the catalog's meta
// functions (ops/attention.cpp).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/cpu/gemm.h"
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/shape_copy.h"
#include "backends/cpu/softmax_kernels.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"

namespace crucible::cpu {
namespace {

constexpr int64_t kBlock = 64;  // query rows per block

// The row passes (softmax with logsumexp, exp from a saved logsumexp, dS) for this processor's
// ISA level, from the softmax loops.
template <typename T>
const AttentionRowFns<T>& rows_fns() {
  if constexpr (std::is_same_v<T, float>)
    return softmax_kernels().att_f32;
  else
    return softmax_kernels().att_f64;
}

// A 4-d (or 3-d logsumexp) tensor in the compute type: element (b, h, i, e) at
// p + b * s[0] + h * s[1] + i * s[2] + e * s[3].
template <typename T>
struct View4 {
  const T* p = nullptr;
  int64_t s[4] = {0, 0, 0, 0};
  const T* at(int64_t b, int64_t h, int64_t i) const { return p + b * s[0] + h * s[1] + i * s[2]; }
};

// `t` converted to the compute dtype when it has another one (the copy is kept in `keep`).
template <typename T>
View4<T> view_of(const Tensor& t, DType work, Tensor& keep) {
  keep = t.dtype() == work ? t : t.to(work);
  View4<T> v;
  v.p = keep.data<T>();
  for (int64_t d = 0; d < keep.dim() && d < 4; ++d) v.s[d] = keep.stride(d);
  return v;
}

template <typename T>
void gemm(int64_t m, int64_t n, int64_t k, T alpha, MatView<T> a, MatView<T> b, T beta, T* c,
          int64_t ldc) {
  if (m == 0 || n == 0) return;
  if constexpr (std::is_same_v<T, float>) {
    gemm_f32(m, n, k, alpha, a, b, beta, c, ldc);
  } else {
    gemm_f64(m, n, k, alpha, a, b, beta, c, ldc);
  }
}

struct Dims {
  int64_t b = 0, hq = 0, hk = 0, l = 0, s = 0, e = 0, ev = 0;
  int64_t group() const { return hq / hk; }
};

Dims dims_of(const Tensor& q, const Tensor& k, const Tensor& v) {
  return {q.size(0), q.size(1), k.size(1), q.size(2), k.size(2), q.size(3), v.size(3)};
}

double scale_of(const Value& scale, int64_t e) {
  const std::optional<double> s = scale.opt_double();
  return s ? *s : 1.0 / std::sqrt(static_cast<double>(e));
}

// Runs fn(task) for every task in [0, n): in parallel with one BLAS thread each when there are
// enough tasks, else in order with a multi-threaded gemm.
void for_tasks(int64_t n, const std::function<void(int64_t)>& fn) {
  const int threads = num_threads();
  if (n >= threads && threads > 1) {
    const int prev = set_gemm_threads(1);
    try {
      parallel_for(0, n, 1, [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) fn(t);
      });
    } catch (...) {
      set_gemm_threads(prev);
      throw;
    }
    set_gemm_threads(prev);
  } else {
    set_gemm_threads(threads);
    for (int64_t t = 0; t < n; ++t) fn(t);
  }
}

// The inputs of one call in the compute type.
template <typename T>
struct Inputs {
  Dims d;
  T scale = 1;
  bool causal = false;
  // is_causal masks key j > i + causal_offset (0: top left; S - L: bottom right, FlashAttention).
  int64_t causal_offset = 0;
  // The logsumexp of a row whose keys are all masked (its output is 0).
  T masked_lse = -std::numeric_limits<T>::infinity();
  View4<T> q, k, v, mask;  // mask.p null when absent (mask expanded to [B, Hq, L, S])
  Tensor keep[4];
};

template <typename T>
Inputs<T> inputs_of(const Tensor& q, const Tensor& k, const Tensor& v,
                    const std::optional<Tensor>& mask, bool causal, double scale, DType work) {
  Inputs<T> in;
  in.d = dims_of(q, k, v);
  in.scale = static_cast<T>(scale);
  in.causal = causal;
  in.q = view_of<T>(q, work, in.keep[0]);
  in.k = view_of<T>(k, work, in.keep[1]);
  in.v = view_of<T>(v, work, in.keep[2]);
  if (mask) {
    const Tensor m =
        (mask->dtype() == work ? *mask : mask->to(work)).expand({in.d.b, in.d.hq, in.d.l, in.d.s});
    in.mask = view_of<T>(m, work, in.keep[3]);
  }
  return in;
}

// The scores of query rows [i0, i0 + rows) of (b, h) into sc [rows, S]: scale * Q K^T, plus the
// mask, -inf above the causal diagonal. Only the first `cols` keys are computed (the forward
// passes fewer under is_causal: the later ones are masked for every row of the block).
template <typename T>
void block_scores(const Inputs<T>& in, int64_t b, int64_t h, int64_t i0, int64_t rows, T* sc,
                  int64_t cols = -1) {
  Dims d = in.d;
  const int64_t ld = d.s;
  if (cols >= 0) d.s = cols;
  const int64_t kh = h / d.group();
  gemm<T>(rows, d.s, d.e, in.scale, MatView<T>{in.q.at(b, h, i0), in.q.s[2], in.q.s[3]},
          MatView<T>{in.k.at(b, kh, 0), in.k.s[3], in.k.s[2]}, T(0), sc, ld);
  if (d.e == 0)
    for (int64_t r = 0; r < rows; ++r) std::fill(sc + r * ld, sc + r * ld + d.s, T(0));
  for (int64_t r = 0; r < rows; ++r) {
    T* row = sc + r * ld;
    if (in.mask.p) {
      const T* m = in.mask.at(b, h, i0 + r);
      for (int64_t j = 0; j < d.s; ++j) row[j] += m[j * in.mask.s[3]];
    }
    if (in.causal) {
      for (int64_t j = std::max<int64_t>(i0 + r + 1 + in.causal_offset, 0); j < d.s; ++j)
        row[j] = -std::numeric_limits<T>::infinity();
    }
  }
}

// Forward into contiguous work buffers out [B, Hq, L, Ev] and lse [B, Hq, L].
template <typename T>
void forward(const Inputs<T>& in, T* out, T* lse) {
  const Dims& d = in.d;
  for_tasks(d.b * d.hq, [&](int64_t task) {
    const int64_t b = task / d.hq, h = task % d.hq, kh = h / d.group();
    std::vector<T> sc(static_cast<size_t>(kBlock * std::max<int64_t>(d.s, 1)));
    for (int64_t i0 = 0; i0 < d.l; i0 += kBlock) {
      const int64_t rows = std::min(kBlock, d.l - i0);
      const int64_t cols =
          in.causal ? std::clamp<int64_t>(i0 + rows + in.causal_offset, 0, d.s) : d.s;
      block_scores(in, b, h, i0, rows, sc.data(), cols);
      rows_fns<T>().softmax_lse(sc.data(), rows, cols, d.s, lse + task * d.l + i0, in.masked_lse);
      T* o = out + (task * d.l + i0) * d.ev;
      gemm<T>(rows, d.ev, cols, T(1), MatView<T>{sc.data(), d.s, 1},
              MatView<T>{in.v.at(b, kh, 0), in.v.s[2], in.v.s[3]}, T(0), o, d.ev);
      if (cols == 0) std::fill(o, o + rows * d.ev, T(0));
    }
  });
}

// Backward into contiguous work buffers dq [B, Hq, L, E], dk [B, Hk, S, E], dv [B, Hk, S, Ev].
// `dbias` (or null): the gradient of an additive mask, dS = P * (dP - D), [B, Hq, L, S].
template <typename T>
void backward(const Inputs<T>& in, const View4<T>& g, const View4<T>& o, const View4<T>& lse, T* dq,
              T* dk, T* dv, T* dbias) {
  const Dims& d = in.d;
  for_tasks(d.b * d.hk, [&](int64_t task) {
    const int64_t b = task / d.hk, kh = task % d.hk;
    const size_t block = static_cast<size_t>(kBlock * std::max<int64_t>(d.s, 1));
    std::vector<T> p(block), dp(block);
    T l_blk[kBlock], dd_blk[kBlock];
    T* dk_acc = dk + task * d.s * d.e;
    T* dv_acc = dv + task * d.s * d.ev;
    std::fill(dk_acc, dk_acc + d.s * d.e, T(0));
    std::fill(dv_acc, dv_acc + d.s * d.ev, T(0));
    for (int64_t h = kh * d.group(); h < (kh + 1) * d.group(); ++h) {
      for (int64_t i0 = 0; i0 < d.l; i0 += kBlock) {
        const int64_t rows = std::min(kBlock, d.l - i0);
        block_scores(in, b, h, i0, rows, p.data());
        for (int64_t r = 0; r < rows; ++r) l_blk[r] = *lse.at(b, h, i0 + r);
        rows_fns<T>().exp_minus(p.data(), rows, d.s, d.s, l_blk);
        const MatView<T> gv{g.at(b, h, i0), g.s[2], g.s[3]};
        // dV += P^T dO
        gemm<T>(d.s, d.ev, rows, T(1), MatView<T>{p.data(), 1, d.s}, gv, T(1), dv_acc, d.ev);
        // dP = dO V^T
        gemm<T>(rows, d.s, d.ev, T(1), gv, MatView<T>{in.v.at(b, kh, 0), in.v.s[3], in.v.s[2]},
                T(0), dp.data(), d.s);
        if (d.ev == 0) std::fill(dp.begin(), dp.end(), T(0));
        // dS = P * (dP - rowsum(dO * O))
        for (int64_t r = 0; r < rows; ++r) {
          const T* gr = g.at(b, h, i0 + r);
          const T* orow = o.at(b, h, i0 + r);
          T dd = 0;
          for (int64_t e = 0; e < d.ev; ++e) dd += gr[e * g.s[3]] * orow[e * o.s[3]];
          dd_blk[r] = dd;
        }
        rows_fns<T>().ds(dp.data(), p.data(), rows, d.s, d.s, dd_blk);
        if (dbias)
          for (int64_t r = 0; r < rows; ++r)
            std::copy(dp.data() + r * d.s, dp.data() + (r + 1) * d.s,
                      dbias + ((b * d.hq + h) * d.l + i0 + r) * d.s);
        // dQ = scale dS K; dK += scale dS^T Q
        T* dq_rows = dq + ((b * d.hq + h) * d.l + i0) * d.e;
        gemm<T>(rows, d.e, d.s, in.scale, MatView<T>{dp.data(), d.s, 1},
                MatView<T>{in.k.at(b, kh, 0), in.k.s[2], in.k.s[3]}, T(0), dq_rows, d.e);
        if (d.s == 0) std::fill(dq_rows, dq_rows + rows * d.e, T(0));
        gemm<T>(d.s, d.e, rows, in.scale, MatView<T>{dp.data(), 1, d.s},
                MatView<T>{in.q.at(b, h, i0), in.q.s[2], in.q.s[3]}, T(1), dk_acc, d.e);
      }
    }
  });
}

DType work_dtype(DType t) { return t == DType::Float64 ? t : DType::Float32; }

// Zeroes an output the cpu backend has no use for (the philox seed and offset: no dropout).
void zero(const Value& v) {
  if (v.is_tensor()) fill_output(v.tensor(), pattern_of_int(0, v.tensor().dtype()));
}

// The forward into the meta function's outputs (out, lse; lse a non-tensor when not asked for):
// computed in the work dtype, in an output itself when it is contiguous of that dtype.
template <typename T>
void run_forward(const Inputs<T>& in, const Value& out_v, const Value& lse_v, DType work) {
  const Dims& d = in.d;
  const Tensor out = output_buffer(out_v, {d.b, d.hq, d.l, d.ev}, work);
  const Tensor lse = output_buffer(lse_v, {d.b, d.hq, d.l}, work);
  forward(in, out.data<T>(), lse.data<T>());
  store_output(out, out_v);
  store_output(lse, lse_v);
}

// The gradients into the meta function's outputs (dq, dk, dv and, when `dbias_v` is a tensor,
// the mask's gradient).
template <typename T>
void run_backward(const Inputs<T>& in, const Tensor& grad_out, const Tensor& out, const Tensor& lse,
                  const Values& outputs, DType work, const Value& dbias_v = Value()) {
  const Dims& d = in.d;
  Tensor keep[3];
  const View4<T> g = view_of<T>(grad_out, work, keep[0]);
  const View4<T> o = view_of<T>(out, work, keep[1]);
  const View4<T> l = view_of<T>(lse, work, keep[2]);
  const Tensor dq = output_buffer(outputs[0], {d.b, d.hq, d.l, d.e}, work);
  const Tensor dk = output_buffer(outputs[1], {d.b, d.hk, d.s, d.e}, work);
  const Tensor dv = output_buffer(outputs[2], {d.b, d.hk, d.s, d.ev}, work);
  const Tensor dbias =
      dbias_v.is_tensor() ? output_buffer(dbias_v, {d.b, d.hq, d.l, d.s}, work) : Tensor();
  backward(in, g, o, l, dq.data<T>(), dk.data<T>(), dv.data<T>(),
           dbias.defined() ? dbias.data<T>() : nullptr);
  store_output(dq, outputs[0]);
  store_output(dk, outputs[1]);
  store_output(dv, outputs[2]);
  if (dbias.defined()) store_output(dbias, dbias_v);
}

// Dispatches on the compute type of `t`.
template <typename Fn>
void on_work(DType t, Fn&& fn) {
  if (work_dtype(t) == DType::Float64) return fn.template operator()<double>(DType::Float64);
  fn.template operator()<float>(DType::Float32);
}

// _scaled_dot_product_flash_attention_for_cpu(q, k, v, dropout_p, is_causal, *, attn_mask,
// scale) -> (out, logsumexp)
void flash_cpu_kernel(const OpDef&, const Args& a, const Values& outputs) {
  const Tensor &q = a.tensor("query"), &k = a.tensor("key"), &v = a.tensor("value");
  on_work(q.dtype(), [&]<typename T>(DType work) {
    const Inputs<T> in = inputs_of<T>(q, k, v, a.opt_tensor("attn_mask"), a.flag("is_causal"),
                                      scale_of(a.value("scale"), q.size(3)), work);
    run_forward(in, outputs[0], outputs[1], work);
  });
}

// (grad_out, q, k, v, out, logsumexp, dropout_p, is_causal, *, attn_mask, scale)
void flash_cpu_backward_kernel(const OpDef&, const Args& a, const Values& outputs) {
  const Tensor &q = a.tensor("query"), &k = a.tensor("key"), &v = a.tensor("value");
  on_work(q.dtype(), [&]<typename T>(DType work) {
    const Inputs<T> in = inputs_of<T>(q, k, v, a.opt_tensor("attn_mask"), a.flag("is_causal"),
                                      scale_of(a.value("scale"), q.size(3)), work);
    run_backward(in, a.tensor("grad_out"), a.tensor("out"), a.tensor("logsumexp"), outputs, work);
  });
}

// _scaled_dot_product_cudnn_attention(q, k, v, attn_bias, compute_log_sumexp, dropout_p,
// is_causal, return_debug_mask, *, scale) -> (out, lse, cum_seq_q, cum_seq_k, max_q, max_k,
// philox_seed, philox_offset, debug_attn_mask)
void cudnn_kernel(const OpDef&, const Args& a, const Values& outputs) {
  const Tensor &q = a.tensor("query"), &k = a.tensor("key"), &v = a.tensor("value");
  on_work(q.dtype(), [&]<typename T>(DType work) {
    const Inputs<T> in = inputs_of<T>(q, k, v, a.opt_tensor("attn_bias"), a.flag("is_causal"),
                                      scale_of(a.value("scale"), q.size(3)), work);
    run_forward(in, outputs[0], outputs[1], work);
  });
  zero(outputs[6]);
  zero(outputs[7]);
}

// (grad_out, q, k, v, out, logsumexp, philox_seed, philox_offset, attn_bias, cum_seq_q,
// cum_seq_k, max_q, max_k, dropout_p, is_causal, *, scale)
void cudnn_backward_kernel(const OpDef&, const Args& a, const Values& outputs) {
  const Tensor &q = a.tensor("query"), &k = a.tensor("key"), &v = a.tensor("value");
  on_work(q.dtype(), [&]<typename T>(DType work) {
    const Inputs<T> in = inputs_of<T>(q, k, v, a.opt_tensor("attn_bias"), a.flag("is_causal"),
                                      scale_of(a.value("scale"), q.size(3)), work);
    run_backward(in, a.tensor("grad_out"), a.tensor("out"), a.tensor("logsumexp"), outputs, work);
  });
}

// _scaled_dot_product_flash_attention(q, k, v, dropout_p, is_causal, return_debug_mask, *,
// scale) -> (out, lse, cum_seq_q, cum_seq_k, max_q, max_k, rng_state, unused, debug_attn_mask):
// causal aligned at the bottom right, a row that sees no key has logsumexp +inf.
void flash_kernel(const OpDef&, const Args& a, const Values& outputs) {
  const Tensor &q = a.tensor("query"), &k = a.tensor("key"), &v = a.tensor("value");
  on_work(q.dtype(), [&]<typename T>(DType work) {
    Inputs<T> in = inputs_of<T>(q, k, v, std::nullopt, a.flag("is_causal"),
                                scale_of(a.value("scale"), q.size(3)), work);
    in.causal_offset = in.d.s - in.d.l;
    in.masked_lse = std::numeric_limits<T>::infinity();
    run_forward(in, outputs[0], outputs[1], work);
  });
  zero(outputs[6]);
  zero(outputs[7]);
}

// (grad_out, q, k, v, out, logsumexp, cum_seq_q, cum_seq_k, max_q, max_k, dropout_p, is_causal,
// philox_seed, philox_offset, *, scale)
void flash_backward_kernel(const OpDef&, const Args& a, const Values& outputs) {
  const Tensor &q = a.tensor("query"), &k = a.tensor("key"), &v = a.tensor("value");
  on_work(q.dtype(), [&]<typename T>(DType work) {
    Inputs<T> in = inputs_of<T>(q, k, v, std::nullopt, a.flag("is_causal"),
                                scale_of(a.value("scale"), q.size(3)), work);
    in.causal_offset = in.d.s - in.d.l;
    run_backward(in, a.tensor("grad_out"), a.tensor("out"), a.tensor("logsumexp"), outputs, work);
  });
}

// _scaled_dot_product_efficient_attention(q, k, v, attn_bias, compute_log_sumexp, dropout_p,
// is_causal, *, scale) -> (out, log_sumexp, philox_seed, philox_offset): log_sumexp padded to a
// multiple of 32 rows with +inf; a row whose keys are all masked has logsumexp 0.
void efficient_kernel(const OpDef&, const Args& a, const Values& outputs) {
  const Tensor &q = a.tensor("query"), &k = a.tensor("key"), &v = a.tensor("value");
  on_work(q.dtype(), [&]<typename T>(DType work) {
    Inputs<T> in = inputs_of<T>(q, k, v, a.opt_tensor("attn_bias"), a.flag("is_causal"),
                                scale_of(a.value("scale"), q.size(3)), work);
    in.masked_lse = T(0);
    const Dims& d = in.d;
    const Tensor out = output_buffer(outputs[0], {d.b, d.hq, d.l, d.ev}, work);
    const Tensor lse = Tensor::uninitialized({d.b, d.hq, d.l}, work);
    forward(in, out.data<T>(), lse.data<T>());
    store_output(out, outputs[0]);
    const Tensor& lse_out = outputs[1].tensor();
    if (lse_out.numel() > 0) {
      fill_output(lse_out,
                  pattern_of_double(std::numeric_limits<double>::infinity(), lse_out.dtype()));
      copy_into(lse, lse_out.slice(2, 0, d.l));
    }
  });
  zero(outputs[2]);
  zero(outputs[3]);
}

// (grad_out_, q, k, v, attn_bias, out, logsumexp, philox_seed, philox_offset, dropout_p,
// grad_input_mask, is_causal, *, scale) -> (grad_q, grad_k, grad_v, grad_bias or None)
void efficient_backward_kernel(const OpDef&, const Args& a, const Values& outputs) {
  const Tensor &q = a.tensor("query"), &k = a.tensor("key"), &v = a.tensor("value");
  on_work(q.dtype(), [&]<typename T>(DType work) {
    const Inputs<T> in = inputs_of<T>(q, k, v, a.opt_tensor("attn_bias"), a.flag("is_causal"),
                                      scale_of(a.value("scale"), q.size(3)), work);
    run_backward(in, a.tensor("grad_out_"), a.tensor("out"), a.tensor("logsumexp"), outputs, work,
                 outputs[3]);
  });
}

}  // namespace

void register_attention_kernels(KernelTable& t) {
  const std::vector<DType> floats = {DType::Float16, DType::BFloat16, DType::Float32,
                                     DType::Float64};
  for (auto [name, fn] :
       {std::pair{"aten._scaled_dot_product_flash_attention_for_cpu.default", &flash_cpu_kernel},
        {"aten._scaled_dot_product_flash_attention_for_cpu_backward.default",
         &flash_cpu_backward_kernel},
        {"aten._scaled_dot_product_cudnn_attention.default", &cudnn_kernel},
        {"aten._scaled_dot_product_cudnn_attention_backward.default", &cudnn_backward_kernel},
        {"aten._scaled_dot_product_flash_attention.default", &flash_kernel},
        {"aten._scaled_dot_product_flash_attention_backward.default", &flash_backward_kernel},
        {"aten._scaled_dot_product_efficient_attention.default", &efficient_kernel},
        {"aten._scaled_dot_product_efficient_attention_backward.default",
         &efficient_backward_kernel}})
    t.add(name, {.dtypes = floats, .run_into = fn});
}

}  // namespace crucible::cpu
