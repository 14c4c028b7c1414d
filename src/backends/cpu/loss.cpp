// The `cpu` backend's losses: mse_loss and mse_loss_backward, and the negative log-likelihood
// loss: nll_loss_forward / nll_loss_backward and the 2-d (spatial) forms.
//
// mse_loss squares the differences in the result dtype (f32 arithmetic for f32, f16 and bf16,
// each square rounded to the dtype as ATen materialises it) and sums them in f64 lanes over
// fixed blocks, so the result does not depend on the thread count. mse_loss_backward computes
// norm * (self - target) * grad step by step in self's dtype, as ATen's kernel does (integers
// wrap; f16/bf16 round after each step).
//
// nll_loss: The forward reads one element of self per target, so it is computed in
// f64 straight from the strided inputs (exactly the reference's arithmetic, rounded once). The
// backward's cost is its output: a zero tensor of self's shape, written by the pool, with one
// element per target set afterwards. Destination-passing: the meta functions (ops/nll_loss.cpp,
// crucible/ops/rules/nll_loss.h) checked the arguments and sized the contiguous outputs; the
// kernels keep the check that depends on values (a target out of range).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "backends/cpu/index_util.h"
#include "backends/cpu/nn.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/pointwise_kernels.h"
#include "backends/cpu/shape_copy.h"
#include "crucible/core/error.h"
#include "crucible/core/half.h"
#include "crucible/ops/args.h"
#include "crucible/ops/rules/nll_loss.h"

namespace crucible::cpu {
namespace {

// The geometry of a (self, target) call (the catalog's checked shape, ops/nll_loss_internal.h)
// with the strides: element e = (b, s) reads self at b * sb + cls * sc + s's spatial offset,
// and target at its own strides.
struct Geometry : nll::LossShape {
  int64_t sb = 0, sc = 0, sh = 0, sw = 0;  // self strides: batch, class, spatial
  int64_t tb = 0, th = 0, tw = 0;          // target strides
  int64_t self_at(int64_t e, int64_t cls) const {
    const int64_t s = e % (h * w), b = e / (h * w);
    return b * sb + cls * sc + (s / w) * sh + (s % w) * sw;
  }
  int64_t target_at(int64_t e) const {
    const int64_t s = e % (h * w), b = e / (h * w);
    return b * tb + (s / w) * th + (s % w) * tw;
  }
};

// The checked call's geometry (nll::check_inputs gives the shape; the meta function raised
// anything it would raise).
Geometry geometry(const Tensor& self, const Tensor& target, const Tensor& weight, bool two_d) {
  Geometry g;
  static_cast<nll::LossShape&>(g) = nll::check_inputs(self, target, weight, two_d);
  if (!two_d) {
    g.sc = self.stride(-1);
    if (self.dim() == 2) g.sb = self.stride(0);
    g.tb = target.dim() == 1 ? target.stride(0) : 0;
  } else {
    g.sb = self.stride(0);
    g.sc = self.stride(1);
    g.sh = self.stride(2);
    g.sw = self.stride(3);
    g.tb = target.stride(0);
    g.th = target.stride(1);
    g.tw = target.stride(2);
  }
  return g;
}

// The classes of every element in order (-1 where ignored); raises for the first target out of
// range, as the reference does.
std::vector<int64_t> classes(const Tensor& target, const Geometry& g, int64_t ignore) {
  std::vector<int64_t> cls(static_cast<size_t>(g.n));
  const char* base = static_cast<const char*>(target.data_ptr());
  const bool wide = target.dtype() == DType::Int64;
  for (int64_t e = 0; e < g.n; ++e) {
    const int64_t at = g.target_at(e);
    int64_t t = 0;
    if (wide) {
      std::memcpy(&t, base + at * 8, 8);
    } else {
      t = static_cast<uint8_t>(base[at]);
    }
    if (t == ignore) {
      cls[e] = -1;
      continue;
    }
    if (t < 0 || t >= g.c) op_error("Target " + std::to_string(t) + " is out of bounds.");
    cls[e] = t;
  }
  return cls;
}

// Element `i` (storage offset from the view's start) of a floating tensor, as a double.
double load(const Tensor& t, int64_t i) {
  return load_as_double(static_cast<const char*>(t.data_ptr()) + i * t.itemsize(), t.dtype());
}

// The class weight of class `cls` (1 without weights).
double class_weight(const Tensor& weight, int64_t cls) {
  return weight.defined() ? load(weight, cls * weight.stride(0)) : 1.0;
}

// (output, total_weight): contiguous, self's dtype.
void forward_kernel(const Args& a, bool two_d, const Values& outputs) {
  const Tensor& self = a.tensor("self");
  const Tensor& target = a.tensor("target");
  const Tensor weight = a.given("weight") ? a.tensor("weight") : Tensor();
  const int64_t reduction = a.integer("reduction");
  const int64_t ignore = a.integer("ignore_index");
  const Geometry g = geometry(self, target, weight, two_d);
  const std::vector<int64_t> cls = classes(target, g, ignore);
  const DType dt = self.dtype();
  const char* base = static_cast<const char*>(self.data_ptr());
  const int64_t isz = static_cast<int64_t>(self.itemsize());
  const Tensor& out = outputs[0].tensor();
  const Tensor& total_weight = outputs[1].tensor();
  if (reduction == 0) {
    char* o = static_cast<char*>(out.data_ptr());
    for (int64_t e = 0; e < g.n; ++e) {
      const int64_t t = cls[e];
      const double v = t < 0 ? 0.0 : -load(self, g.self_at(e, t)) * class_weight(weight, t);
      store_from_double(o + e * out.itemsize(), dt, v);
    }
    store_from_double(static_cast<char*>(total_weight.data_ptr()), dt, 0.0);
    return;
  }
  // Each element is a cache (and TLB) miss into a large self: the addresses of a chunk are
  // prefetched first so that the misses overlap. (The pool does not pay here: a few hundred
  // misses take less time than waking a worker.)
  constexpr int64_t kChunk = 64;
  double total = 0, sum = 0;
  for (int64_t e0 = 0; e0 < g.n; e0 += kChunk) {
    const int64_t e1 = std::min(g.n, e0 + kChunk);
    for (int64_t e = e0; e < e1; ++e)
      if (cls[e] >= 0) __builtin_prefetch(base + g.self_at(e, cls[e]) * isz);
    for (int64_t e = e0; e < e1; ++e) {
      const int64_t t = cls[e];
      if (t < 0) continue;
      const double w = class_weight(weight, t);
      sum += -load(self, g.self_at(e, t)) * w;
      total += w;
    }
  }
  store_from_double(static_cast<char*>(out.data_ptr()), dt, reduction == 1 ? sum / total : sum);
  store_from_double(static_cast<char*>(total_weight.data_ptr()), dt, total);
}

// Zeros `bytes` bytes at `p`, one block per thread (a large memset streams past the caches).
void parallel_zero(char* p, int64_t bytes) {
  constexpr int64_t kMin = int64_t{1} << 16;
  const int64_t parts = std::max<int64_t>(1, std::min<int64_t>(num_threads(), bytes / kMin));
  const int64_t step = ((bytes + parts - 1) / parts + 63) / 64 * 64;
  parallel_for(0, parts, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t lo = std::min(bytes, b * step), hi = std::min(bytes, (b + 1) * step);
      std::memset(p + lo, 0, static_cast<size_t>(hi - lo));
    }
  });
}

// grad_input: contiguous, self's shape and dtype.
void backward_kernel(const Args& a, bool two_d, const Values& outputs) {
  const Tensor& grad = a.tensor("grad_output");
  const Tensor& self = a.tensor("self");
  const Tensor& target = a.tensor("target");
  const Tensor weight = a.given("weight") ? a.tensor("weight") : Tensor();
  const int64_t reduction = a.integer("reduction");
  const int64_t ignore = a.integer("ignore_index");
  const Tensor& total_weight = a.tensor("total_weight");
  const Geometry g = geometry(self, target, weight, two_d);
  const bool per_element = nll::per_element(reduction, self, two_d);
  const std::vector<int64_t> cls = classes(target, g, ignore);
  const DType dt = self.dtype();
  const Tensor& out = outputs[0].tensor();
  parallel_zero(static_cast<char*>(out.data_ptr()),
                out.numel() * static_cast<int64_t>(out.itemsize()));
  // The output is contiguous: its element (b, cls, s) is at (b * c + cls) * spatial + s.
  Geometry og = g;
  og.sc = g.h * g.w;
  og.sb = g.c * og.sc;
  og.sh = g.w;
  og.sw = 1;
  const double tw = load(total_weight, 0);
  // grad's element e, at grad's strides (a single element unless per_element).
  Geometry gg = g;
  if (per_element) {
    if (two_d) {
      gg.tb = grad.stride(0);
      gg.th = grad.stride(1);
      gg.tw = grad.stride(2);
    } else {
      gg.tb = grad.stride(0);
    }
  }
  const double g0 = per_element ? 0.0 : load(grad, 0);
  char* o = static_cast<char*>(out.data_ptr());
  for (int64_t e = 0; e < g.n; ++e) {
    const int64_t t = cls[e];
    if (t < 0) continue;
    const double go = per_element ? load(grad, gg.target_at(e)) : g0;
    const double scale = reduction == 1 ? go / tw : go;
    store_from_double(o + og.self_at(e, t) * out.itemsize(), dt, -scale * class_weight(weight, t));
  }
}

// ---- mse_loss --------------------------------------------------------------------------------

// `t` broadcast to `shape` as a contiguous tensor of `dt` (t itself when it already is one).
Tensor dense_as(const Tensor& t, const Shape& shape, DType dt) {
  return contiguous_as(t.shape() == shape ? t : t.expand(shape), dt);
}

// Where a contiguous result for `out` (the meta function's output) is computed: out itself
// when it is contiguous, else a contiguous tensor that into() copies into it.
Tensor contiguous_target(const Tensor& out, DType dt) {
  return out.is_contiguous() && out.dtype() == dt ? out : Tensor::uninitialized(out.shape(), dt);
}
void into(const Tensor& out, const Tensor& computed) {
  if (computed.data_ptr() != out.data_ptr()) copy_into(computed, out);
}

constexpr int64_t kBlock = int64_t{1} << 15;
constexpr int64_t kSub = 1024;  // elements converted at a time (in L1)

// q[i] = (a[i] - b[i])^2 over [i0, i1).
template <typename T>
__attribute__((optimize("O3"))) void squares(const T* __restrict a, const T* __restrict b,
                                             T* __restrict q, int64_t i0, int64_t i1) {
  for (int64_t i = i0; i < i1; ++i) {
    const T d = a[i] - b[i];
    q[i] = d * d;
  }
}

// The sum of (a[i] - b[i])^2 over [i0, i1) in eight f64 lanes.
template <typename T>
__attribute__((optimize("O3"))) double sum_squares(const T* __restrict a, const T* __restrict b,
                                                   int64_t i0, int64_t i1) {
  double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = i0;
  for (; i + 8 <= i1; i += 8) {
    for (int j = 0; j < 8; ++j) {
      const T d = a[i + j] - b[i + j];
      acc[j] += static_cast<double>(d * d);
    }
  }
  for (; i < i1; ++i) {
    const T d = a[i] - b[i];
    acc[0] += static_cast<double>(d * d);
  }
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

// The sum of x[i] over [i0, i1) in eight f64 lanes.
__attribute__((optimize("O3"))) double sum_values(const float* __restrict x, int64_t i0,
                                                  int64_t i1) {
  double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = i0;
  for (; i + 8 <= i1; i += 8)
    for (int j = 0; j < 8; ++j) acc[j] += static_cast<double>(x[i + j]);
  for (; i < i1; ++i) acc[0] += static_cast<double>(x[i]);
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

// Sums f(i0, i1) over fixed blocks of [0, n), spread over the pool, added in block order.
template <typename F>
double blocked_sum(int64_t n, F f) {
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<double> part(static_cast<size_t>(blocks), 0.0);
  parallel_for(0, blocks, 4, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b)
      part[static_cast<size_t>(b)] = f(b * kBlock, std::min(n, (b + 1) * kBlock));
  });
  double sum = 0;
  for (double v : part) sum += v;
  return sum;
}

template <typename T>
void squares_parallel(const T* a, const T* b, T* q, int64_t n) {
  parallel_for(0, n, kBlock, [&](int64_t i0, int64_t i1) { squares(a, b, q, i0, i1); });
}

// f16/bf16 to and from f32 over contiguous runs (the elementwise kernels' vector converters,
// rounding to nearest even; overflow gives inf).
struct Convert16 {
  void (*to_f32)(const uint16_t* in, float* out, int64_t n);
  void (*from_f32)(const float* in, uint16_t* out, int64_t n);
};

Convert16 convert16(DType t) {
  const PwConvert& c = pw_kernels().convert;
  if (t == DType::Float16) return {c.f16_to_f32, c.f32_to_f16};
  return {c.bf16_to_f32, c.f32_to_bf16};
}

// x[0..n) rounded to the 16-bit dtype, in place.
void round16(const Convert16& c, float* x, int64_t n) {
  uint16_t tmp[kSub];
  c.from_f32(x, tmp, n);
  c.to_f32(tmp, x, n);
}

// mse_loss of 16-bit a, b (contiguous, n elements): the squares rounded to the dtype, written
// to `out` (none) or summed in f64 (returned), in sub-blocks that stay in L1.
double mse_half(DType t, const uint16_t* a, const uint16_t* b, uint16_t* out, int64_t n) {
  const Convert16 c = convert16(t);
  auto block = [&](int64_t i0, int64_t i1) {
    float fa[kSub], fb[kSub], fq[kSub];
    double sum = 0;
    for (int64_t i = i0; i < i1; i += kSub) {
      const int64_t w = std::min(kSub, i1 - i);
      c.to_f32(a + i, fa, w);
      c.to_f32(b + i, fb, w);
      squares(fa, fb, fq, 0, w);
      if (out) {
        c.from_f32(fq, out + i, w);
      } else {
        round16(c, fq, w);
        sum += sum_values(fq, 0, w);
      }
    }
    return sum;
  };
  if (!out) return blocked_sum(n, block);
  parallel_for(0, n, kBlock, [&](int64_t i0, int64_t i1) { block(i0, i1); });
  return 0;
}

// Into the meta function's output (its dtype the promoted one; it refused the calls ATen does).
void mse_kernel(const OpDef&, const Args& a, const Values& outputs) {
  const Tensor& out = outputs.at(0).tensor();
  const DType rt = out.dtype();
  const int64_t reduction = a.given("reduction") ? a.integer("reduction") : 1;
  const Tensor& self = a.tensor("self");
  const Tensor& target = a.tensor("target");
  const Shape shape = broadcast_shapes(self.shape(), target.shape());
  const int64_t n = numel_of(shape);
  // Both are converted to the result dtype first, as ATen does.
  const Tensor x = dense_as(self, shape, rt), y = dense_as(target, shape, rt);
  if (rt == DType::Float16 || rt == DType::BFloat16) {
    const auto* xp = static_cast<const uint16_t*>(x.data_ptr());
    const auto* yp = static_cast<const uint16_t*>(y.data_ptr());
    if (reduction == 0) {
      const Tensor q = contiguous_target(out, rt);
      mse_half(rt, xp, yp, static_cast<uint16_t*>(q.data_ptr()), n);
      into(out, q);
      return;
    }
    const double sum = mse_half(rt, xp, yp, nullptr, n);
    out.set(0, reduction == 1 ? sum / static_cast<double>(n) : sum);
    return;
  }
  if (reduction == 0) {
    const Tensor q = contiguous_target(out, rt);
    if (rt == DType::Float64)
      squares_parallel(x.data<double>(), y.data<double>(), q.data<double>(), n);
    else
      squares_parallel(x.data<float>(), y.data<float>(), q.data<float>(), n);
    into(out, q);
    return;
  }
  double sum = 0;
  if (rt == DType::Float64) {
    const double *xp = x.data<double>(), *yp = y.data<double>();
    sum = blocked_sum(n, [&](int64_t i0, int64_t i1) { return sum_squares(xp, yp, i0, i1); });
  } else {
    const float *xp = x.data<float>(), *yp = y.data<float>();
    sum = blocked_sum(n, [&](int64_t i0, int64_t i1) { return sum_squares(xp, yp, i0, i1); });
  }
  const double result = reduction == 1 ? sum / static_cast<double>(n) : sum;
  out.set(0, result);  // rounded once to rt
}

// ---- mse_loss_backward -------------------------------------------------------------------------

// out = round(round(nt * round(s - t)) * g) in T's arithmetic.
template <typename T>
__attribute__((optimize("O3"))) void mse_grad(const T* __restrict s, const T* __restrict t,
                                              const T* __restrict g, T* __restrict o, T nt,
                                              int64_t i0, int64_t i1) {
  for (int64_t i = i0; i < i1; ++i) {
    const T d = s[i] - t[i];
    o[i] = (nt * d) * g[i];
  }
}

// The same for 16-bit s, t, g (contiguous): f32 arithmetic, each step rounded to the dtype,
// in sub-blocks that stay in L1.
void mse_grad_half(const Convert16& c, const uint16_t* s, const uint16_t* t, const uint16_t* g,
                   uint16_t* o, float nt, int64_t i0, int64_t i1) {
  float fs[kSub], ft[kSub], fg[kSub];
  for (int64_t i = i0; i < i1; i += kSub) {
    const int64_t w = std::min(kSub, i1 - i);
    c.to_f32(s + i, fs, w);
    c.to_f32(t + i, ft, w);
    c.to_f32(g + i, fg, w);
    for (int64_t j = 0; j < w; ++j) fs[j] -= ft[j];
    round16(c, fs, w);
    for (int64_t j = 0; j < w; ++j) fs[j] *= nt;
    round16(c, fs, w);
    for (int64_t j = 0; j < w; ++j) fs[j] *= fg[j];
    c.from_f32(fs, o + i, w);
  }
}

// Integers: wrapping arithmetic in 64 bits, truncated to the dtype's width on conversion.
void mse_grad_int(const int64_t* s, const int64_t* t, const int64_t* g, int64_t* o, int64_t nt,
                  int64_t i0, int64_t i1) {
  for (int64_t i = i0; i < i1; ++i) {
    const uint64_t d = static_cast<uint64_t>(s[i]) - static_cast<uint64_t>(t[i]);
    o[i] = static_cast<int64_t>(static_cast<uint64_t>(nt) * d * static_cast<uint64_t>(g[i]));
  }
}

// Into the meta function's output (its dtype and shape, and ATen's checks).
void mse_backward_kernel(const OpDef&, const Args& a, const Values& outputs) {
  const Tensor& m = outputs.at(0).tensor();
  const DType dt = m.dtype();
  const Tensor& grad = a.tensor("grad_output");
  const Tensor& self = a.tensor("self");
  const Tensor& target = a.tensor("target");
  const int64_t reduction = a.given("reduction") ? a.integer("reduction") : 1;
  const double norm = reduction == 1 ? 2.0 / static_cast<double>(self.numel()) : 2.0;
  const Shape& shape = m.shape();
  const int64_t n = m.numel();
  const bool half = dt == DType::Float16 || dt == DType::BFloat16;
  const DType ct = is_floating(dt) ? dt : DType::Int64;  // f16/bf16 stay 16-bit in memory
  const Tensor s = dense_as(self, shape, ct), t = dense_as(target, shape, ct),
               g = dense_as(grad, shape, ct);
  const Tensor o = contiguous_target(m, ct);
  auto run = [&](auto body) {
    parallel_for(0, n, kBlock, [&](int64_t i0, int64_t i1) { body(i0, i1); });
  };
  if (dt == DType::Float64) {
    run([&](int64_t i0, int64_t i1) {
      mse_grad(s.data<double>(), t.data<double>(), g.data<double>(), o.data<double>(), norm, i0,
               i1);
    });
  } else if (dt == DType::Float32) {
    run([&](int64_t i0, int64_t i1) {
      mse_grad(s.data<float>(), t.data<float>(), g.data<float>(), o.data<float>(),
               static_cast<float>(norm), i0, i1);
    });
  } else if (half) {
    const auto nt = static_cast<float>(dt == DType::Float16 ? static_cast<float>(Half(norm))
                                                            : static_cast<float>(BFloat16(norm)));
    const Convert16 c = convert16(dt);
    const auto* sp = static_cast<const uint16_t*>(s.data_ptr());
    const auto* tp = static_cast<const uint16_t*>(t.data_ptr());
    const auto* gp = static_cast<const uint16_t*>(g.data_ptr());
    auto* dst = static_cast<uint16_t*>(o.data_ptr());
    run([&](int64_t i0, int64_t i1) { mse_grad_half(c, sp, tp, gp, dst, nt, i0, i1); });
  } else {
    const int64_t nt = std::isfinite(norm) ? static_cast<int64_t>(norm) : 0;
    run([&](int64_t i0, int64_t i1) {
      mse_grad_int(s.data<int64_t>(), t.data<int64_t>(), g.data<int64_t>(), o.data<int64_t>(), nt,
                   i0, i1);
    });
  }
  into(m, o);  // (converted from int64 for the integral dtypes)
}

std::vector<DType> every_dtype() {
  return {DType::Bool,  DType::UInt8,   DType::Int8,     DType::Int16,   DType::Int32,
          DType::Int64, DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
}

}  // namespace

void register_loss_kernels(KernelTable& t) {
  t.add("aten.mse_loss.default", {.dtypes = every_dtype(), .run_into = &mse_kernel});
  t.add("aten.mse_loss_backward.default",
        {.dtypes = every_dtype(), .run_into = &mse_backward_kernel});
  // Every dtype is taken so that the integral-self calls raise as ATen does; the catalog lists
  // the floating ones.
  t.add("aten.nll_loss_forward.default",
        {.dtypes = every_dtype(), .run_into = [](const OpDef&, const Args& a, const Values& o) {
           forward_kernel(a, false, o);
         }});
  t.add("aten.nll_loss2d_forward.default",
        {.dtypes = every_dtype(), .run_into = [](const OpDef&, const Args& a, const Values& o) {
           forward_kernel(a, true, o);
         }});
  t.add("aten.nll_loss_backward.default",
        {.dtypes = every_dtype(), .run_into = [](const OpDef&, const Args& a, const Values& o) {
           backward_kernel(a, false, o);
         }});
  t.add("aten.nll_loss2d_backward.default",
        {.dtypes = every_dtype(), .run_into = [](const OpDef&, const Args& a, const Values& o) {
           backward_kernel(a, true, o);
         }});
}

}  // namespace crucible::cpu
