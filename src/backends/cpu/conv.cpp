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
// (forward only, as ATen) exactly modulo 2^64 with a plain product, wrapping to the width.
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/cpu/gemm.h"
#include "backends/cpu/nn.h"
#include "backends/cpu/nn_util.h"
#include "backends/cpu/parallel.h"
#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"

namespace crucible::cpu {
namespace {

struct Conv {
  int64_t nsp = 2;
  std::vector<int64_t> stride, padding, dilation, output_padding;
  bool transposed = false;
  int64_t groups = 1;
  Shape output_shape;
};

// ATen's convolution argument checks (the catalog reference's order); the output shape.
Conv check_conv(const Tensor& input, const Tensor& weight, const Tensor& bias, const Args& a) {
  Conv c;
  c.nsp = weight.dim() - 2;
  CRUCIBLE_CHECK(c.nsp > 0, "weight should have at least three dimensions");
  c.transposed = a.flag("transposed");
  c.groups = a.integer("groups");
  CRUCIBLE_CHECK(c.groups > 0, "non-positive groups is not supported");
  const auto n = static_cast<size_t>(c.nsp);
  c.stride = expand_param(a, "stride", n);
  c.padding = expand_param(a, "padding", n);
  c.dilation = expand_param(a, "dilation", n);
  c.output_padding = expand_param(a, "output_padding", n);
  for (size_t d = 0; d < n; ++d) {
    CRUCIBLE_CHECK(c.padding[d] >= 0, "negative padding is not supported");
    CRUCIBLE_CHECK(c.output_padding[d] >= 0, "negative output_padding is not supported");
    CRUCIBLE_CHECK(c.stride[d] > 0, "non-positive stride is not supported");
    CRUCIBLE_CHECK(c.dilation[d] > 0, "dilation should be greater than zero");
  }
  const Shape& ws = weight.shape();
  CRUCIBLE_CHECK(input.dim() == weight.dim(), "Expected " + std::to_string(weight.dim()) +
                                                  "-dimensional input for weight " + shape_str(ws));
  CRUCIBLE_CHECK(ws[0] >= c.groups && ws[0] % c.groups == 0,
                 "Given groups=" + std::to_string(c.groups) +
                     ", expected weight to be divisible by groups at dimension 0");
  const int64_t out_channels = c.transposed ? ws[1] * c.groups : ws[0];
  const int64_t in_channels = c.transposed ? ws[0] : ws[1] * c.groups;
  CRUCIBLE_CHECK(input.size(1) == in_channels, "expected input" + shape_str(input.shape()) +
                                                   " to have " + std::to_string(in_channels) +
                                                   " channels");
  if (bias.defined()) {
    CRUCIBLE_CHECK(
        bias.dim() == 1 && bias.size(0) == out_channels,
        "expected bias to be 1-dimensional with " + std::to_string(out_channels) + " elements");
  }
  c.output_shape = {input.size(0), out_channels};
  for (size_t d = 0; d < n; ++d) {
    const int64_t kext = c.dilation[d] * (ws[d + 2] - 1) + 1;
    const int64_t in = input.size(static_cast<int64_t>(d) + 2);
    if (!c.transposed) {
      CRUCIBLE_CHECK(in + 2 * c.padding[d] >= kext,
                     "Kernel size can't be greater than actual input size");
      c.output_shape.push_back((in + 2 * c.padding[d] - kext) / c.stride[d] + 1);
    } else {
      CRUCIBLE_CHECK(c.output_padding[d] < c.stride[d] || c.output_padding[d] < c.dilation[d],
                     "output padding must be smaller than either stride or dilation");
    }
  }
  if (c.transposed) {
    for (size_t d = 0; d < n; ++d) {
      const int64_t o = (input.size(static_cast<int64_t>(d) + 2) - 1) * c.stride[d] -
                        2 * c.padding[d] + c.dilation[d] * (ws[d + 2] - 1) + c.output_padding[d] +
                        1;
      CRUCIBLE_CHECK(o >= 1, "Output size is too small");
      c.output_shape.push_back(o);
    }
  }
  return c;
}

struct Geo {
  int64_t n = 0, g = 1, cx = 0, cy = 0;
  int64_t xs[3] = {1, 1, 1}, ys[3] = {1, 1, 1}, ks[3] = {1, 1, 1};
  int64_t st[3] = {1, 1, 1}, pd[3] = {0, 0, 0}, dl[3] = {1, 1, 1};
  int64_t cxg() const { return cx / g; }
  int64_t cyg() const { return cy / g; }
  int64_t xsp() const { return xs[0] * xs[1] * xs[2]; }
  int64_t ysp() const { return ys[0] * ys[1] * ys[2]; }
  int64_t kvol() const { return ks[0] * ks[1] * ks[2]; }
  // 1x1 kernel, stride 1, no padding, X and Y of one size: im2col(X) is X itself.
  bool pointwise() const {
    for (int d = 0; d < 3; ++d)
      if (ks[d] != 1 || st[d] != 1 || pd[d] != 0 || xs[d] != ys[d]) return false;
    return true;
  }
};

Geo make_geo(const Conv& c, const Shape& input_shape, const Shape& weight_shape) {
  Geo q;
  const Shape& big = c.transposed ? c.output_shape : input_shape;
  const Shape& small = c.transposed ? input_shape : c.output_shape;
  q.n = input_shape[0];
  q.g = c.groups;
  q.cx = big[1];
  q.cy = small[1];
  const int64_t lead = 3 - c.nsp;
  for (int64_t d = 0; d < c.nsp; ++d) {
    q.xs[lead + d] = big[d + 2];
    q.ys[lead + d] = small[d + 2];
    q.ks[lead + d] = weight_shape[d + 2];
    q.st[lead + d] = c.stride[d];
    q.pd[lead + d] = c.padding[d];
    q.dl[lead + d] = c.dilation[d];
  }
  return q;
}

// The y range [lo, hi) of the last spatial dim whose x = y*s + off lies in [0, xs).
inline void inner_range(int64_t off, int64_t s, int64_t xs, int64_t ys, int64_t* lo, int64_t* hi) {
  *lo = off >= 0 ? 0 : (-off + s - 1) / s;
  const int64_t top = xs - 1 - off;
  *hi = top < 0 ? 0 : std::min(ys, top / s + 1);
  if (*lo > *hi) *lo = *hi;
}

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
          inner_range(off, s2, q.xs[2], q.ys[2], &lo, &hi);
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
          inner_range(off, s2, q.xs[2], q.ys[2], &lo, &hi);
          for (int64_t yd = 0; yd < q.ys[0]; ++yd) {
            const int64_t xd = yd * q.st[0] - q.pd[0] + kd * q.dl[0];
            if (xd < 0 || xd >= q.xs[0]) continue;
            for (int64_t yh = 0; yh < q.ys[1]; ++yh) {
              const int64_t xh = yh * q.st[1] - q.pd[1] + kh * q.dl[1];
              if (xh < 0 || xh >= q.xs[1]) continue;
              const T* r = row + (yd * q.ys[1] + yh) * q.ys[2];
              T* xr = xc + (xd * q.xs[1] + xh) * q.xs[2] + off;
              if (s2 == 1) {
                for (int64_t o = lo; o < hi; ++o) xr[o] += r[o];
              } else {
                for (int64_t o = lo; o < hi; ++o) xr[o * s2] += r[o];
              }
            }
          }
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
            inner_range(off, s2, q.xs[2], q.ys[2], &lo, &hi);
            for (int64_t yd = 0; yd < q.ys[0]; ++yd) {
              const int64_t xd = yd * q.st[0] - q.pd[0] + kd * q.dl[0];
              if (xd < 0 || xd >= q.xs[0]) continue;
              for (int64_t yh = 0; yh < q.ys[1]; ++yh) {
                const int64_t xh = yh * q.st[1] - q.pd[1] + kh * q.dl[1];
                if (xh < 0 || xh >= q.xs[1]) continue;
                T* yr = yc + (yd * q.ys[1] + yh) * q.ys[2];
                const T* xr = xc + (xd * q.xs[1] + xh) * q.xs[2] + off;
                if (s2 == 1) {
                  for (int64_t o = lo; o < hi; ++o) yr[o] += wv * xr[o];
                } else {
                  for (int64_t o = lo; o < hi; ++o) yr[o] += wv * xr[o * s2];
                }
              }
            }
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

template <typename T>
Tensor forward_t(const Conv& c, const Tensor& input, const Tensor& weight, const Tensor& bias,
                 DType work, bool ordered = false) {
  const Geo q = make_geo(c, input.shape(), weight.shape());
  const Tensor in = to_work(input, work), w = to_work(weight, work);
  Tensor out = Tensor::zeros(c.output_shape, work);
  if (out.numel() == 0) return out;
  if (!c.transposed)
    conv_product<T>(Mode::Gather, q, ptr<T>(in), ptr<T>(out), ptr<T>(w), ordered);
  else
    conv_product<T>(Mode::Scatter, q, ptr<T>(out), ptr<T>(in), ptr<T>(w), ordered);
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
  return out;
}

Values convolution_kernel(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  const Tensor& input = a.tensor("input");
  const Tensor& weight = a.tensor("weight");
  const Tensor bias = opt_tensor_arg(a, "bias");
  const Conv c = check_conv(input, weight, bias, a);
  CRUCIBLE_CHECK(input.dtype() == weight.dtype(), "Input type and weight type should be the same");
  CRUCIBLE_CHECK(!bias.defined() || bias.dtype() == input.dtype(),
                 "Input type and bias type should be the same");
  const DType dt = input.dtype();
  if (c.transposed && is_integral(dt, true) && dt != DType::Int64)
    not_implemented_for("slow_conv_transpose2d_out_cpu", dt);
  const bool ordered = is_floating(dt) && any_extreme({&input, &weight, &bias});
  const DType work = ordered ? DType::Float64 : work_dtype(dt);
  Tensor out;
  if (work == DType::Float32)
    out = forward_t<float>(c, input, weight, bias, work);
  else if (work == DType::Float64)
    out = forward_t<double>(c, input, weight, bias, work, ordered);
  else
    out = forward_t<uint64_t>(c, input, weight, bias, work);
  return {out.dtype() == dt ? out : out.to(dt)};
}

template <typename T>
Values backward_t(const Conv& c, const Tensor& grad_out, const Tensor& input, const Tensor& weight,
                  const std::vector<bool>& mask, DType work, bool ordered = false) {
  const Geo q = make_geo(c, input.shape(), weight.shape());
  const Tensor go = to_work(grad_out, work);
  Values out{Value(), Value(), Value()};
  const DType dt = input.dtype();
  auto result = [&](const Tensor& t) { return Value(t.dtype() == dt ? t : t.to(dt)); };
  if (mask[0]) {
    const Tensor w = to_work(weight, work);
    Tensor gi = Tensor::zeros(input.shape(), work);
    if (gi.numel() > 0 && go.numel() > 0) {
      if (!c.transposed)
        conv_product<T>(Mode::Scatter, q, ptr<T>(gi), ptr<T>(go), ptr<T>(w), ordered);
      else
        conv_product<T>(Mode::Gather, q, ptr<T>(go), ptr<T>(gi), ptr<T>(w), ordered);
    }
    out[0] = result(gi);
  }
  if (mask[1]) {
    const Tensor in = to_work(input, work);
    Tensor gw = Tensor::zeros(weight.shape(), work);
    if (gw.numel() > 0 && go.numel() > 0) {
      if (!c.transposed)
        conv_product<T>(Mode::Weight, q, ptr<T>(in), ptr<T>(go), ptr<T>(gw), ordered);
      else
        conv_product<T>(Mode::Weight, q, ptr<T>(go), ptr<T>(in), ptr<T>(gw), ordered);
    }
    out[1] = result(gw);
  }
  if (mask[2]) {
    const int64_t n = grad_out.size(0), ch = grad_out.size(1);
    const int64_t sp = n * ch == 0 ? 0 : grad_out.numel() / (n * ch);
    Tensor gb = Tensor::zeros({ch}, work);
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
    out[2] = result(gb);
  }
  return out;
}

Values convolution_backward_kernel(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  const Tensor& grad_out = a.tensor("grad_output");
  const Tensor& input = a.tensor("input");
  const Tensor& weight = a.tensor("weight");
  const Conv c = check_conv(input, weight, Tensor(), a);
  const std::vector<bool> mask = a.value("output_mask").bool_list();
  CRUCIBLE_CHECK(mask.size() == 3, "output_mask must have 3 elements");
  CRUCIBLE_CHECK(input.dtype() == weight.dtype(), "Input type and weight type should be the same");
  CRUCIBLE_CHECK(grad_out.dtype() == input.dtype(),
                 "grad_output type and input type should be the same");
  if (!is_floating(input.dtype())) not_implemented_for("slow_conv2d_cpu_grad_input", input.dtype());
  if (grad_out.shape() != c.output_shape) {
    op_error("Expected grad_output of size " + shape_str(c.output_shape) + ", but got " +
             shape_str(grad_out.shape()));
  }
  const bool ordered = any_extreme({&grad_out, &input, &weight});
  const DType work = ordered ? DType::Float64 : work_dtype(input.dtype());
  if (work == DType::Float64)
    return backward_t<double>(c, grad_out, input, weight, mask, work, ordered);
  return backward_t<float>(c, grad_out, input, weight, mask, work);
}

std::vector<DType> conv_dtypes() {
  return {DType::UInt8,   DType::Int8,     DType::Int16,   DType::Int32,  DType::Int64,
          DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
}

}  // namespace

void register_conv_kernels(KernelTable& t) {
  t.add("aten.convolution.default", {convolution_kernel, nullptr, conv_dtypes()});
  t.add("aten.convolution_backward.default",
        {convolution_backward_kernel,
         nullptr,
         {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64}});
}

}  // namespace crucible::cpu
