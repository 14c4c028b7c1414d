// The `cpu` backend's convolutions: aten.convolution.default and
// aten.convolution_backward.default, 1-d/2-d/3-d, groups, stride, padding, dilation, transposed.
//
// Every call is seen as 3 spatial dims and as one of three products between the "big" side X
// (positions x = y*s - p + k*d), the "small" side Y and the weight W [C_Y, C_X / g, k...]:
//   gather  Y[n, g] = W_g @ im2col(X[n, g])            (forward; transposed grad_input)
//   scatter X[n, g] = col2im(W_g^T @ Y[n, g])          (transposed forward; grad_input)
//   weight  dW_g   += Y[n, g] @ im2col(X[n, g])^T      (grad_weight)
// The products run through gemm_f32/gemm_f64 (1x1 kernels with stride 1 and no padding skip
// im2col); batch items are split over the thread pool. f16/bf16 compute in f32; integers
// (forward only, as ATen) exactly modulo 2^64 with a plain product, wrapping to the width. The
// argument checks and the geometry are the catalog's (crucible/ops/rules/convolution.h); both
// ops compute into their meta function's outputs (KernelEntry::run_into).
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/cpu/gemm.h"
#include "backends/cpu/nn.h"
#include "backends/cpu/nn_util.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/shape_copy.h"
#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"
#include "crucible/ops/rules/convolution.h"

namespace crucible::cpu {
namespace {

using conv::Conv;
using conv::Geo;

// col[(cxl * kvol + k) * ysp + y] = X[cxl, y*s - p + k*d] (0 outside), for one (n, g).
template <typename T>
void im2col(const Geo& q, const T* x, T* col) {
  const int64_t xsp = q.xsp(), ysp = q.ysp(), kvol = q.kvol();
  for (int64_t cxl = 0; cxl < q.cxg(); ++cxl) {
    const T* xc = x + cxl * xsp;
    for (int64_t kd = 0; kd < q.ks[0]; ++kd)
      for (int64_t kh = 0; kh < q.ks[1]; ++kh)
        for (int64_t kw = 0; kw < q.ks[2]; ++kw) {
          T* row = col + (cxl * kvol + (kd * q.ks[1] + kh) * q.ks[2] + kw) * ysp;
          const int64_t off = kw * q.dl[2] - q.pd[2], s2 = q.st[2];
          int64_t lo, hi;
          q.last_dim_range(off, &lo, &hi);
          for (int64_t yd = 0; yd < q.ys[0]; ++yd) {
            const int64_t xd = yd * q.st[0] - q.pd[0] + kd * q.dl[0];
            for (int64_t yh = 0; yh < q.ys[1]; ++yh) {
              const int64_t xh = yh * q.st[1] - q.pd[1] + kh * q.dl[1];
              T* r = row + (yd * q.ys[1] + yh) * q.ys[2];
              if (xd < 0 || xd >= q.xs[0] || xh < 0 || xh >= q.xs[1]) {
                std::fill(r, r + q.ys[2], T(0));
                continue;
              }
              const T* xr = xc + (xd * q.xs[1] + xh) * q.xs[2] + off;
              std::fill(r, r + lo, T(0));
              if (s2 == 1) {
                std::copy(xr + lo, xr + hi, r + lo);
              } else {
                for (int64_t o = lo; o < hi; ++o) r[o] = xr[o * s2];
              }
              std::fill(r + hi, r + q.ys[2], T(0));
            }
          }
        }
  }
}

// X[cxl, y*s - p + k*d] += col[(cxl * kvol + k) * ysp + y], for one (n, g).
template <typename T>
void col2im(const Geo& q, const T* col, T* x) {
  const int64_t xsp = q.xsp(), ysp = q.ysp(), kvol = q.kvol();
  for (int64_t cxl = 0; cxl < q.cxg(); ++cxl) {
    T* xc = x + cxl * xsp;
    for (int64_t kd = 0; kd < q.ks[0]; ++kd)
      for (int64_t kh = 0; kh < q.ks[1]; ++kh)
        for (int64_t kw = 0; kw < q.ks[2]; ++kw) {
          const T* row = col + (cxl * kvol + (kd * q.ks[1] + kh) * q.ks[2] + kw) * ysp;
          const int64_t off = kw * q.dl[2] - q.pd[2], s2 = q.st[2];
          int64_t lo, hi;
          q.last_dim_range(off, &lo, &hi);
          q.for_each_row(kd, kh, [&](int64_t y_row, int64_t x_row) {
            const T* r = row + y_row;
            T* xr = xc + x_row + off;
            if (s2 == 1) {
              for (int64_t o = lo; o < hi; ++o) xr[o] += r[o];
            } else {
              for (int64_t o = lo; o < hi; ++o) xr[o * s2] += r[o];
            }
          });
        }
  }
}

// C = A @ B + beta * C in T (integers: exact modulo 2^64). `ordered`: a plain loop summing
// over k in order (the reference's order, for calls with extreme values).
template <typename T>
void gemm_t(int64_t m, int64_t n, int64_t k, MatView<T> a, MatView<T> b, T beta, T* c, int64_t ldc,
            bool ordered) {
  if constexpr (std::is_same_v<T, float>) {
    if (!ordered) return gemm_f32(m, n, k, 1.0f, a, b, beta, c, ldc);
  } else if constexpr (std::is_same_v<T, double>) {
    if (!ordered) return gemm_f64(m, n, k, 1.0, a, b, beta, c, ldc);
  }
  {
    for (int64_t i = 0; i < m; ++i) {
      T* cr = c + i * ldc;
      if (beta == T(0)) std::fill(cr, cr + n, T(0));
      for (int64_t q = 0; q < k; ++q) {
        const T av = a.data[i * a.rs + q * a.cs];
        for (int64_t j = 0; j < n; ++j) cr[j] += av * b.data[q * b.rs + j * b.cs];
      }
    }
  }
}

// Depthwise gather (one input and one output channel per group): Y[n, g] += w[k] * X[n, g]
// shifted, straight from X without im2col; (n, g) planes over the threads.
template <typename T>
__attribute__((optimize("O3"))) void depthwise_gather(const Geo& q, const T* x, T* y, const T* w) {
  const int64_t xsp = q.xsp(), ysp = q.ysp(), kvol = q.kvol(), s2 = q.st[2];
  parallel_for(0, q.n * q.g, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t pl = p0; pl < p1; ++pl) {
      const T* xc = x + pl * xsp;
      T* yc = y + pl * ysp;
      const T* wk = w + (pl % q.g) * kvol;
      std::fill(yc, yc + ysp, T(0));
      for (int64_t kd = 0; kd < q.ks[0]; ++kd)
        for (int64_t kh = 0; kh < q.ks[1]; ++kh)
          for (int64_t kw = 0; kw < q.ks[2]; ++kw) {
            const T wv = wk[(kd * q.ks[1] + kh) * q.ks[2] + kw];
            const int64_t off = kw * q.dl[2] - q.pd[2];
            int64_t lo, hi;
            q.last_dim_range(off, &lo, &hi);
            q.for_each_row(kd, kh, [&](int64_t y_row, int64_t x_row) {
              T* yr = yc + y_row;
              const T* xr = xc + x_row + off;
              if (s2 == 1) {
                for (int64_t o = lo; o < hi; ++o) yr[o] += wv * xr[o];
              } else {
                for (int64_t o = lo; o < hi; ++o) yr[o] += wv * xr[o * s2];
              }
            });
          }
    }
  });
}

enum class Mode { Gather, Scatter, Weight };

// Runs one of the three products over every (n, g). x, y: [N, C, spatial] contiguous; w:
// [C_Y, C_X / g, kvol] contiguous. Gather writes y, Scatter writes x (zeroed by the caller),
// Weight writes w (zeroed by the caller).
template <typename T>
void conv_product(Mode mode, const Geo& q, T* x, T* y, T* w, bool ordered = false) {
  const int64_t cxg = q.cxg(), cyg = q.cyg(), xsp = q.xsp(), ysp = q.ysp(), kvol = q.kvol();
  const int64_t kk = cxg * kvol;  // the im2col rows of one group
  if (mode == Mode::Gather && cxg == 1 && cyg == 1 && q.g > 1 && !ordered &&
      std::is_floating_point_v<T>) {
    depthwise_gather(q, x, y, w);
    return;
  }
  const bool direct = q.pointwise();
  const int threads = num_threads();
  // Work items: batch items (each thread owns whole images; Weight accumulates per thread).
  const int64_t chunks = q.n >= threads && !(ordered && mode == Mode::Weight) ? threads : 1;
  set_gemm_threads(chunks > 1 ? 1 : threads);
  std::vector<std::vector<T>> partial(static_cast<size_t>(mode == Mode::Weight ? chunks : 0));
  parallel_for(0, chunks, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      const int64_t n0 = q.n * c / chunks, n1 = q.n * (c + 1) / chunks;
      std::vector<T> col(direct ? 0 : static_cast<size_t>(kk * ysp));
      T* wacc = w;
      if (mode == Mode::Weight && chunks > 1) {
        partial[c].assign(static_cast<size_t>(q.cy * kk), T(0));
        wacc = partial[c].data();
      }
      for (int64_t n = n0; n < n1; ++n) {
        for (int64_t g = 0; g < q.g; ++g) {
          T* xg = x + (n * q.cx + g * cxg) * xsp;
          T* yg = y + (n * q.cy + g * cyg) * ysp;
          T* wg = (mode == Mode::Weight ? wacc : w) + g * cyg * kk;
          if (mode == Mode::Gather) {
            const T* src = xg;
            if (!direct) {
              im2col(q, xg, col.data());
              src = col.data();
            }
            gemm_t<T>(cyg, ysp, kk, {wg, kk, 1}, {src, ysp, 1}, T(0), yg, ysp, ordered);
          } else if (mode == Mode::Scatter) {
            if (direct) {
              gemm_t<T>(kk, ysp, cyg, {wg, 1, kk}, {yg, ysp, 1}, T(0), xg, xsp, ordered);
            } else {
              gemm_t<T>(kk, ysp, cyg, {wg, 1, kk}, {yg, ysp, 1}, T(0), col.data(), ysp, ordered);
              col2im(q, col.data(), xg);
            }
          } else {
            const T* src = xg;
            if (!direct) {
              im2col(q, xg, col.data());
              src = col.data();
            }
            gemm_t<T>(cyg, kk, ysp, {yg, ysp, 1}, {src, 1, ysp}, T(1), wg, kk, ordered);
          }
        }
      }
    }
  });
  if (mode == Mode::Weight && chunks > 1) {
    const int64_t total = q.cy * kk;
    for (int64_t c = 0; c < chunks; ++c)
      for (int64_t i = 0; i < total; ++i) w[i] += partial[c][i];
  }
  set_gemm_threads(threads);
}

DType work_dtype(DType t) {
  if (t == DType::Float64) return DType::Float64;
  if (is_integral(t, false)) return DType::Int64;
  return DType::Float32;
}

Tensor to_work(const Tensor& t, DType work) {
  return t.dtype() == work ? t.contiguous() : t.to(work);
}

template <typename T>
T* ptr(const Tensor& t) {
  return static_cast<T*>(t.data_ptr());
}

// Into `out`: contiguous, of the output's shape, in the work dtype.
template <typename T>
void forward_t(const Conv& c, const Tensor& input, const Tensor& weight, const Tensor& bias,
               DType work, const Tensor& out, bool ordered = false) {
  const Geo q = conv::make_geo(c);
  if (out.numel() == 0) return;
  const Tensor in = to_work(input, work), w = to_work(weight, work);
  if (!c.transposed) {
    conv_product<T>(Mode::Gather, q, ptr<T>(in), ptr<T>(out), ptr<T>(w), ordered);
  } else {
    std::fill(ptr<T>(out), ptr<T>(out) + out.numel(), T(0));  // the scatter adds into it
    conv_product<T>(Mode::Scatter, q, ptr<T>(out), ptr<T>(in), ptr<T>(w), ordered);
  }
  if (bias.defined()) {
    const Tensor b = to_work(bias, work);
    const int64_t nc = c.output_shape[0] * c.output_shape[1];
    const int64_t sp = out.numel() / nc;
    const int64_t ch = c.output_shape[1];
    T* o = ptr<T>(out);
    const T* bv = ptr<T>(b);
    parallel_for(0, nc, std::max<int64_t>(1, 32768 / std::max<int64_t>(sp, 1)),
                 [&](int64_t r0, int64_t r1) {
                   for (int64_t r = r0; r < r1; ++r) {
                     const T v = bv[r % ch];
                     T* row = o + r * sp;
                     for (int64_t s = 0; s < sp; ++s) row[s] += v;
                   }
                 });
  }
}

// Into the meta function's output (computed there when it is contiguous in the work dtype,
// else converted and laid out into it). The geometry is worked out again; its checks cannot
// fail here, the meta function having run them.
void convolution_kernel(const OpDef&, const Args& a, const Values& outs) {
  const Tensor& input = a.tensor("input");
  const Tensor& weight = a.tensor("weight");
  const Tensor bias = opt_tensor_arg(a, "bias");
  const Conv c = conv::convolution_checked(a);
  const DType dt = input.dtype();
  const bool ordered = is_floating(dt) && any_extreme({&input, &weight, &bias});
  const DType work = ordered ? DType::Float64 : work_dtype(dt);
  const Tensor out = output_buffer(outs.at(0), c.output_shape, work);
  if (work == DType::Float32)
    forward_t<float>(c, input, weight, bias, work, out);
  else if (work == DType::Float64)
    forward_t<double>(c, input, weight, bias, work, out, ordered);
  else
    forward_t<uint64_t>(c, input, weight, bias, work, out);
  store_output(out, outs.at(0));
}

// Into the meta function's outputs, those output_mask asks for (each computed in place when
// it is contiguous in the work dtype, else converted and laid out into it).
template <typename T>
void backward_t(const Conv& c, const Tensor& grad_out, const Tensor& input, const Tensor& weight,
                const std::vector<bool>& mask, DType work, const Values& outs,
                bool ordered = false) {
  const Geo q = conv::make_geo(c);
  const Tensor go = to_work(grad_out, work);
  auto zeroed = [&](const Value& o, const Shape& shape) {
    Tensor t = output_buffer(o, shape, work);
    std::fill(ptr<T>(t), ptr<T>(t) + t.numel(), T(0));
    return t;
  };
  if (mask[0]) {
    const Tensor w = to_work(weight, work);
    const Tensor gi = zeroed(outs.at(0), input.shape());
    if (gi.numel() > 0 && go.numel() > 0) {
      if (!c.transposed)
        conv_product<T>(Mode::Scatter, q, ptr<T>(gi), ptr<T>(go), ptr<T>(w), ordered);
      else
        conv_product<T>(Mode::Gather, q, ptr<T>(go), ptr<T>(gi), ptr<T>(w), ordered);
    }
    store_output(gi, outs.at(0));
  }
  if (mask[1]) {
    const Tensor in = to_work(input, work);
    const Tensor gw = zeroed(outs.at(1), weight.shape());
    if (gw.numel() > 0 && go.numel() > 0) {
      if (!c.transposed)
        conv_product<T>(Mode::Weight, q, ptr<T>(in), ptr<T>(go), ptr<T>(gw), ordered);
      else
        conv_product<T>(Mode::Weight, q, ptr<T>(go), ptr<T>(in), ptr<T>(gw), ordered);
    }
    store_output(gw, outs.at(1));
  }
  if (mask[2]) {
    const int64_t n = grad_out.size(0), ch = grad_out.size(1);
    const int64_t sp = n * ch == 0 ? 0 : grad_out.numel() / (n * ch);
    const Tensor gb = output_buffer(outs.at(2), {ch}, work);
    const T* g = ptr<T>(go);
    T* b = ptr<T>(gb);
    parallel_for(0, ch, 1, [&](int64_t c0, int64_t c1) {
      for (int64_t k = c0; k < c1; ++k) {
        double acc = 0;
        for (int64_t i = 0; i < n; ++i) {
          const T* row = g + (i * ch + k) * sp;
          T part = 0;
          for (int64_t s = 0; s < sp; ++s) part += row[s];
          acc += static_cast<double>(part);
        }
        b[k] = static_cast<T>(acc);
      }
    });
    store_output(gb, outs.at(2));
  }
}

void convolution_backward_kernel(const OpDef&, const Args& a, const Values& outs) {
  const Tensor& grad_out = a.tensor("grad_output");
  const Tensor& input = a.tensor("input");
  const Tensor& weight = a.tensor("weight");
  const Conv c = conv::convolution_backward_checked(a);
  const std::vector<bool> mask = a.value("output_mask").bool_list();
  const bool ordered = any_extreme({&grad_out, &input, &weight});
  const DType work = ordered ? DType::Float64 : work_dtype(input.dtype());
  if (work == DType::Float64)
    backward_t<double>(c, grad_out, input, weight, mask, work, outs, ordered);
  else
    backward_t<float>(c, grad_out, input, weight, mask, work, outs);
}

std::vector<DType> conv_dtypes() {
  return {DType::UInt8,   DType::Int8,     DType::Int16,   DType::Int32,  DType::Int64,
          DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
}

}  // namespace

void register_conv_kernels(KernelTable& t) {
  t.add("aten.convolution.default", {.dtypes = conv_dtypes(), .run_into = &convolution_kernel});
  t.add("aten.convolution_backward.default",
        {.dtypes = {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64},
         .run_into = &convolution_backward_kernel});
}

}  // namespace crucible::cpu
