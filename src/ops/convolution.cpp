// Convolutions: aten.convolution.default and aten.convolution_backward.default (1-d, 2-d and
// 3-d; groups, stride, padding, dilation, transposed with output_padding, optional bias).
//
// Reference semantics (PyTorch 2.x, CPU; Convolution.cpp, ConvolutionMM2d/3d.cpp,
// NaiveConvolutionTranspose2d/3d.cpp):
//  - weight has k = 3, 4 or 5 dims (else "weight should have at least three dimensions") and the
//    input must have the same number of dims (a batch dim is required at this level);
//    stride/padding/dilation/output_padding are lists of k - 2 values, or one value that is
//    repeated.
//  - checks, in ATen's order: groups > 0, negative padding / output_padding, non-positive stride,
//    dilation < 1, input/weight dims, weight.size(0) >= groups and divisible by groups, input
//    channels (weight.size(1) * groups, or weight.size(0) when transposed), bias shape
//    ([weight.size(0)], or [weight.size(1) * groups] when transposed), the padded input at least
//    as large as the dilated kernel (non-transposed), output_padding smaller than stride or
//    dilation and an output of at least 1 (transposed).
//  - non-transposed: out[n, co, o] = bias[co] + sum_{ci in group, k} in[n, ci, o*s - p + k*d] *
//    w[co, ci_local, k]; output size (i + 2p - d(k-1) - 1) / s + 1. output_padding is ignored.
//  - transposed: weight is [C_in, C_out / groups, k...]; out[n, co, i*s - p + k*d] +=
//    in[n, ci, i] * w[ci, co_local, k]; output size (i-1)s - 2p + d(k-1) + output_padding + 1.
//  - dtypes: floating (f16, bf16, f32, f64; f16 on CPU is 2.x -- 1.13 raised for it) and, for the
//    non-transposed forward, every integer dtype (exact, wrapping to the width as the integer
//    gemm does); the transposed forward takes i64 among the integers; the backward is floating
//    only; bool raises. Input, weight (and grad_output) dtypes must be equal.
//  - convolution_backward: output_mask selects [grad_input, grad_weight, grad_bias]; those not
//    asked for are None in the reference (a candidate may return them anyway: ATen's mkldnn
//    path returns grad_weight when only grad_bias is asked, so they are not judged). grad_bias =
//    grad_output summed over every dim but 1 (bias_sizes only says a bias existed; it does not
//    change the values).
//
// Reference implementation: everything is seen as 3 spatial dims (1-d and 2-d get leading
// size-1 dims). Both directions are written over one index space: the "big" side X (positions
// x = y*s - p + k*d) and the "small" side Y, with the weight [C_Y, C_X / groups, k...]. A
// convolution gathers into Y (X = input); a transposed convolution scatters into X (Y = input);
// weight gradients accumulate Y * X. Floating values are summed in double as matrix products
// (im2col + dgemm per batch element and group, convolution_gemm.cpp) and rounded once; integers
// are summed exactly in uint64 by plain loops.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "crucible/compare/compare.h"
#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/ops/destination.h"
#include "ops/convolution_internal.h"
#include "ops/families.h"
#include "ops/judges.h"
#include "ops/meta_fn.h"
#include "ops/samples.h"

namespace crucible {
namespace conv {
namespace {

std::string list_str(const std::vector<int64_t>& v) { return shape_str(v); }

std::string join_x(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? " x " : "") + std::to_string(v[i]);
  return s;
}

std::vector<int64_t> expand_param(const Value& v, const char* name, int64_t dim) {
  std::vector<int64_t> l = v.to_int_list();
  if (l.size() == 1 && dim > 1) l.assign(static_cast<size_t>(dim), l[0]);
  if (static_cast<int64_t>(l.size()) != dim) {
    op_error(std::string("expected ") + name + " to be a single integer value or a list of " +
             std::to_string(dim) + " values to match the convolution dimensions, but got " + name +
             "=" + list_str(v.to_int_list()));
  }
  return l;
}

// ATen's _convolution / check_shape_forward checks; returns the geometry with the output shape.
Conv check_conv(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                const Value& stride, const Value& padding, const Value& dilation, bool transposed,
                const Value& output_padding, int64_t groups) {
  Conv c;
  const int64_t k = weight.dim();
  c.nsp = k - 2;
  CRUCIBLE_CHECK(c.nsp > 0, "weight should have at least three dimensions");
  CRUCIBLE_CHECK(groups > 0, "non-positive groups is not supported");
  c.stride = expand_param(stride, "stride", c.nsp);
  c.padding = expand_param(padding, "padding", c.nsp);
  c.dilation = expand_param(dilation, "dilation", c.nsp);
  c.output_padding = expand_param(output_padding, "output_padding", c.nsp);
  c.transposed = transposed;
  c.groups = groups;
  c.input_shape = input.shape();
  c.weight_shape = weight.shape();
  auto any = [](const std::vector<int64_t>& v, auto pred) {
    return std::any_of(v.begin(), v.end(), pred);
  };
  CRUCIBLE_CHECK(!any(c.padding, [](int64_t x) { return x < 0; }),
                 "negative padding is not supported");
  CRUCIBLE_CHECK(!any(c.output_padding, [](int64_t x) { return x < 0; }),
                 "negative output_padding is not supported");
  CRUCIBLE_CHECK(!any(c.stride, [](int64_t x) { return x <= 0; }),
                 "non-positive stride is not supported");
  if (any(c.dilation, [](int64_t x) { return x <= 0; }))
    op_error("dilation should be greater than zero, but got " + list_str(c.dilation));
  const Shape& ws = weight.shape();
  if (input.dim() != k) {
    op_error("Expected " + std::to_string(k) + "-dimensional input for " + std::to_string(k) +
             "-dimensional weight " + shape_str(ws) + ", but got " + std::to_string(input.dim()) +
             "-dimensional input of size " + shape_str(input.shape()) + " instead");
  }
  if (ws[0] < groups) {
    op_error("Given groups=" + std::to_string(groups) + ", expected weight to be at least " +
             std::to_string(groups) + " at dimension 0, but got weight of size " + shape_str(ws) +
             " instead");
  }
  if (ws[0] % groups != 0) {
    op_error("Given groups=" + std::to_string(groups) + ", expected weight to be divisible by " +
             std::to_string(groups) + " at dimension 0, but got weight of size [" + shape_str(ws) +
             "] instead");
  }
  const int64_t out_channels = transposed ? ws[1] * groups : ws[0];
  if (!transposed) {
    if (input.size(1) != ws[1] * groups) {
      op_error("Given groups=" + std::to_string(groups) + ", weight of size " + shape_str(ws) +
               ", expected input" + shape_str(input.shape()) + " to have " +
               std::to_string(ws[1] * groups) + " channels, but got " +
               std::to_string(input.size(1)) + " channels instead");
    }
  } else if (input.size(1) != ws[0]) {
    op_error("Given transposed=1, weight of size " + shape_str(ws) + ", expected input" +
             shape_str(input.shape()) + " to have " + std::to_string(ws[0]) +
             " channels, but got " + std::to_string(input.size(1)) + " channels instead");
  }
  if (bias && (bias->dim() != 1 || bias->size(0) != out_channels)) {
    op_error(
        std::string(transposed ? "Given transposed=1, weight of size " : "Given weight of size ") +
        shape_str(ws) + ", expected bias to be 1-dimensional with " + std::to_string(out_channels) +
        " elements, but got bias of size " + shape_str(bias->shape()) + " instead");
  }
  c.output_shape = {input.size(0), out_channels};
  if (!transposed) {
    std::vector<int64_t> padded, kernel;
    bool ok = true;
    for (int64_t d = 0; d < c.nsp; ++d) {
      padded.push_back(input.size(d + 2) + 2 * c.padding[d]);
      kernel.push_back(c.dilation[d] * (ws[d + 2] - 1) + 1);
      ok = ok && padded.back() >= kernel.back();
    }
    if (!ok) {
      op_error("Calculated padded input size per channel: (" + join_x(padded) +
               "). Kernel size: (" + join_x(kernel) +
               "). Kernel size can't be greater than actual input size");
    }
    for (int64_t d = 0; d < c.nsp; ++d)
      c.output_shape.push_back((padded[d] - kernel[d]) / c.stride[d] + 1);
  } else {
    for (int64_t d = 0; d < c.nsp; ++d) {
      if (c.output_padding[d] >= c.stride[d] && c.output_padding[d] >= c.dilation[d]) {
        op_error(
            "output padding must be smaller than either stride or dilation, but got "
            "output_padding " +
            list_str(c.output_padding) + " stride " + list_str(c.stride) + " dilation " +
            list_str(c.dilation));
      }
    }
    std::vector<int64_t> in_sp, out_sp;
    bool ok = true;
    for (int64_t d = 0; d < c.nsp; ++d) {
      in_sp.push_back(input.size(d + 2));
      out_sp.push_back((input.size(d + 2) - 1) * c.stride[d] - 2 * c.padding[d] +
                       c.dilation[d] * (ws[d + 2] - 1) + c.output_padding[d] + 1);
      ok = ok && out_sp.back() >= 1;
    }
    if (!ok) {
      op_error("Given input size per channel: (" + join_x(in_sp) +
               "). Calculated output size per channel: (" + join_x(out_sp) +
               "). Output size is too small");
    }
    for (int64_t v : out_sp) c.output_shape.push_back(v);
  }
  return c;
}

void check_same_dtype(const Tensor& a, const char* a_name, const Tensor& b, const char* b_name) {
  if (a.dtype() != b.dtype()) {
    op_error(std::string(a_name) + " type (" + scalar_type_name(a.dtype()) + ") and " + b_name +
             " type (" + scalar_type_name(b.dtype()) + ") should be the same");
  }
}

// The CPU kernels' dtype dispatch.
void check_forward_dtype(DType t, const Conv& c) {
  const std::string kernel = c.transposed ? (c.nsp == 3 ? "slow_conv_transpose3d_out_cpu"
                                                        : "slow_conv_transpose2d_out_cpu")
                                          : (c.nsp == 3 ? "slow_conv3d_cpu" : "slow_conv2d_cpu");
  const bool ok = t != DType::Bool && (is_floating(t) || !c.transposed || t == DType::Int64) &&
                  t != DType::Float8E4M3FN && t != DType::Float8E5M2;
  if (!ok) not_implemented_for(kernel, t);
}

}  // namespace

Geo make_geo(const Conv& c) {
  Geo q;
  const Shape& big = c.transposed ? c.output_shape : c.input_shape;
  const Shape& small = c.transposed ? c.input_shape : c.output_shape;
  q.n = c.input_shape[0];
  q.g = c.groups;
  q.cx = big[1];
  q.cy = small[1];
  const int64_t lead = 3 - c.nsp;
  for (int64_t d = 0; d < c.nsp; ++d) {
    q.xs[lead + d] = big[d + 2];
    q.ys[lead + d] = small[d + 2];
    q.ks[lead + d] = c.weight_shape[d + 2];
    q.st[lead + d] = c.stride[d];
    q.pd[lead + d] = c.padding[d];
    q.dl[lead + d] = c.dilation[d];
  }
  return q;
}

Conv convolution_checked(const Args& a) {
  const Tensor& input = a.tensor("input");
  const Tensor& weight = a.tensor("weight");
  const std::optional<Tensor> bias = a.opt_tensor("bias");
  const Conv c =
      check_conv(input, weight, bias, a.value("stride"), a.value("padding"), a.value("dilation"),
                 a.flag("transposed"), a.value("output_padding"), a.integer("groups"));
  check_same_dtype(input, "Input", weight, "weight");
  if (bias) check_same_dtype(input, "Input", *bias, "bias");
  check_forward_dtype(input.dtype(), c);
  return c;
}

Conv convolution_backward_checked(const Args& a) {
  const Tensor& grad_out = a.tensor("grad_output");
  const Tensor& input = a.tensor("input");
  const Tensor& weight = a.tensor("weight");
  // bias_sizes only says whether there was a bias; grad_bias follows output_mask.
  const Conv c = check_conv(input, weight, std::nullopt, a.value("stride"), a.value("padding"),
                            a.value("dilation"), a.flag("transposed"), a.value("output_padding"),
                            a.integer("groups"));
  const std::vector<bool> mask = a.value("output_mask").bool_list();
  CRUCIBLE_CHECK(mask.size() == 3, "output_mask must have 3 elements");
  check_same_dtype(input, "Input", weight, "weight");
  check_same_dtype(grad_out, "grad_output", input, "input");
  const DType dt = input.dtype();
  if (!is_floating(dt) || dt == DType::Float8E4M3FN || dt == DType::Float8E5M2) {
    not_implemented_for(
        c.transposed ? "slow_conv_transpose2d_backward_out_cpu" : "slow_conv2d_cpu_grad_input", dt);
  }
  if (grad_out.shape() != c.output_shape) {
    op_error("Expected grad_output of size " + shape_str(c.output_shape) + ", but got " +
             shape_str(grad_out.shape()));
  }
  return c;
}

}  // namespace conv

namespace {

using namespace samples;
using conv::Conv;
using conv::Geo;

enum class Mode { Gather, Scatter };

// The integer convolutions (exact modulo 2^64; the floating ones are f64 matrix products, see
// convolution_gemm.cpp): Y[n, cy, y] ~ X[n, cx, y*s - p + k*d] * W[cy, cx_local, k] over every
// valid (n, cy, cx, k, y); Gather adds into Y, Scatter into X. The innermost loop runs over the
// last spatial dim of Y, restricted to the positions whose X position is in range.
template <Mode M, typename T>
void conv_core(const Geo& q, T* x, T* y, T* w) {
  const int64_t cxg = q.cx / q.g, cyg = q.cy / q.g;
  const int64_t xsp = q.xs[0] * q.xs[1] * q.xs[2], ysp = q.ys[0] * q.ys[1] * q.ys[2];
  const int64_t kvol = q.ks[0] * q.ks[1] * q.ks[2];
  const int64_t s2 = q.st[2];
  for (int64_t n = 0; n < q.n; ++n) {
    for (int64_t g = 0; g < q.g; ++g) {
      for (int64_t cyl = 0; cyl < cyg; ++cyl) {
        const int64_t cy = g * cyg + cyl;
        T* yc = y + (n * q.cy + cy) * ysp;
        for (int64_t cxl = 0; cxl < cxg; ++cxl) {
          T* xc = x + (n * q.cx + g * cxg + cxl) * xsp;
          T* wk = w + (cy * cxg + cxl) * kvol;
          for (int64_t kd = 0; kd < q.ks[0]; ++kd) {
            for (int64_t kh = 0; kh < q.ks[1]; ++kh) {
              for (int64_t kw = 0; kw < q.ks[2]; ++kw) {
                T* wp = wk + (kd * q.ks[1] + kh) * q.ks[2] + kw;
                const int64_t off = kw * q.dl[2] - q.pd[2];
                int64_t lo, hi;
                q.last_dim_range(off, &lo, &hi);
                if (lo >= hi) continue;
                const T wv = *wp;
                q.for_each_row(kd, kh, [&](int64_t y_row, int64_t x_row) {
                  T* yr = yc + y_row;
                  T* xr = xc + x_row + off;
                  if constexpr (M == Mode::Gather) {
                    if (s2 == 1) {  // the common case, kept contiguous for the vectoriser
                      for (int64_t o = lo; o < hi; ++o) yr[o] += wv * xr[o];
                    } else {
                      for (int64_t o = lo; o < hi; ++o) yr[o] += wv * xr[o * s2];
                    }
                  } else {
                    if (s2 == 1) {
                      for (int64_t o = lo; o < hi; ++o) xr[o] += wv * yr[o];
                    } else {
                      for (int64_t o = lo; o < hi; ++o) xr[o * s2] += wv * yr[o];
                    }
                  }
                });
              }
            }
          }
        }
      }
    }
  }
}

// Every element of `t` in logical order: as double (floating), or exactly as uint64 (integers).
template <typename T>
std::vector<T> load(const Tensor& t) {
  constexpr bool kFloating = std::is_same_v<T, double>;
  const Tensor c = t.to(kFloating ? DType::Float64 : DType::Int64);
  std::vector<T> v(static_cast<size_t>(t.numel()));
  if (!v.empty()) std::memcpy(v.data(), c.data_ptr(), v.size() * sizeof(T));
  return v;
}

// `v` (logical order) stored into `out`, rounded once (floating) or wrapped to the width
// (integers).
template <typename T>
void store(const std::vector<T>& v, const Tensor& out) {
  constexpr bool kFloating = std::is_same_v<T, double>;
  const Tensor c = Tensor::uninitialized(out.shape(), kFloating ? DType::Float64 : DType::Int64);
  if (!v.empty()) std::memcpy(c.data_ptr(), v.data(), v.size() * sizeof(T));
  out.copy_from(c);
}

// bias[c] added to every element of channel c of an [N, C, spatial] buffer.
template <typename T>
void add_bias(std::vector<T>& buf, const Tensor& bias, int64_t n, int64_t channels) {
  const std::vector<T> b = load<T>(bias);
  const int64_t sp =
      channels == 0 || n == 0 ? 0 : static_cast<int64_t>(buf.size()) / (n * channels);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t s = 0; s < sp; ++s) buf[(i * channels + c) * sp + s] += b[c];
}

// The integer convolutions into `out`, exact in uint64 and wrapped to the width when stored.
void conv_forward_int(const Conv& c, const Tensor& input, const Tensor& weight,
                      const std::optional<Tensor>& bias, const Tensor& out_t) {
  const Geo q = make_geo(c);
  std::vector<uint64_t> in = load<uint64_t>(input), w = load<uint64_t>(weight);
  std::vector<uint64_t> out(static_cast<size_t>(numel_of(c.output_shape)), 0);
  if (!c.transposed)
    conv_core<Mode::Gather>(q, in.data(), out.data(), w.data());
  else
    conv_core<Mode::Scatter>(q, out.data(), in.data(), w.data());
  if (bias) add_bias(out, *bias, c.output_shape[0], c.output_shape[1]);
  store(out, out_t);
}

// The elements per channel of one batch element of `shape` ([N, C, spatial...]).
int64_t plane_size(const Shape& shape) {
  return shape[1] == 0 ? 0 : numel_of(Shape(shape.begin() + 2, shape.end()));
}

// The floating convolutions in f64 into `out`, one batch element at a time (the f64 copies
// stay one element's size), each output element rounded once to the dtype.
void conv_forward_f64(const Conv& c, const Tensor& input, const Tensor& weight,
                      const std::optional<Tensor>& bias, const Tensor& out) {
  Geo q = make_geo(c);
  q.n = 1;
  const std::vector<double> w = load<double>(weight);
  const std::vector<double> b = bias ? load<double>(*bias) : std::vector<double>();
  const Shape item(c.output_shape.begin() + 1, c.output_shape.end());
  const int64_t ch = c.output_shape[1], sp = plane_size(c.output_shape);
  // One element's f64 input, output and columns, reused along the batch.
  const Tensor x =
      Tensor::uninitialized(Shape(input.shape().begin() + 1, input.shape().end()), DType::Float64);
  const Tensor y = Tensor::uninitialized(item, DType::Float64);
  conv::Columns cols;
  for (int64_t n = 0; n < c.output_shape[0]; ++n) {
    x.copy_from(input.select(0, n));
    double* yd = y.data<double>();
    if (!c.transposed)
      conv::gather_f64(q, x.data<double>(), yd, w.data(), cols);
    else
      conv::scatter_f64(q, yd, x.data<double>(), w.data(), cols);
    if (bias) {
      for (int64_t k = 0; k < ch; ++k)
        for (int64_t s = 0; s < sp; ++s) yd[k * sp + s] += b[k];
    }
    out.select(0, n).copy_from(y);
  }
}

Values convolution_meta(const Args& a) {
  return {meta::fresh(conv::convolution_checked(a).output_shape, a.tensor("input").dtype())};
}

// convolution into its output (meta: convolution_meta; the geometry worked out again).
void convolution_impl(const Args& a, const Values& out) {
  const Tensor& input = a.tensor("input");
  const Tensor& weight = a.tensor("weight");
  const std::optional<Tensor> bias = a.opt_tensor("bias");
  const Conv c = conv::convolution_checked(a);
  if (is_floating(input.dtype()))
    conv_forward_f64(c, input, weight, bias, out.at(0).tensor());
  else
    conv_forward_int(c, input, weight, bias, out.at(0).tensor());
}

// (grad_input, grad_weight, grad_bias), None where output_mask is false.
Values convolution_backward_meta(const Args& a) {
  conv::convolution_backward_checked(a);
  const Tensor& grad_out = a.tensor("grad_output");
  const Tensor& input = a.tensor("input");
  const Tensor& weight = a.tensor("weight");
  const std::vector<bool> mask = a.value("output_mask").bool_list();
  Values out{Value(), Value(), Value()};
  if (mask[0]) out[0] = meta::fresh_like(input);
  if (mask[1]) out[1] = meta::fresh(weight.shape(), input.dtype());
  if (mask[2]) out[2] = meta::fresh({grad_out.size(1)}, input.dtype());
  return out;
}

// convolution_backward into the outputs output_mask asks for (meta:
// convolution_backward_meta).
void convolution_backward_impl(const Args& a, const Values& outs) {
  const Tensor& grad_out = a.tensor("grad_output");
  const Tensor& input = a.tensor("input");
  const Tensor& weight = a.tensor("weight");
  const Conv c = conv::convolution_backward_checked(a);
  const std::vector<bool> mask = a.value("output_mask").bool_list();
  Geo q = make_geo(c);
  q.n = 1;  // one batch element at a time, grad_weight and grad_bias summed over them in order
  const std::vector<double> w = mask[0] ? load<double>(weight) : std::vector<double>();
  const Tensor gi = mask[0] ? outs.at(0).tensor() : Tensor();
  const Shape in_item(input.shape().begin() + 1, input.shape().end());
  std::vector<double> gw(static_cast<size_t>(mask[1] ? weight.numel() : 0), 0.0);
  const int64_t ch = grad_out.size(1), sp = plane_size(grad_out.shape());
  std::vector<double> gb(static_cast<size_t>(ch), 0.0);
  // One element's f64 grad_output, input and grad_input, and the columns, reused along the batch.
  const Tensor go = Tensor::uninitialized(
      Shape(grad_out.shape().begin() + 1, grad_out.shape().end()), DType::Float64);
  const Tensor in = mask[1] ? Tensor::uninitialized(in_item, DType::Float64) : Tensor();
  const Tensor g = mask[0] ? Tensor::uninitialized(in_item, DType::Float64) : Tensor();
  conv::Columns cols;
  for (int64_t n = 0; n < input.size(0); ++n) {
    go.copy_from(grad_out.select(0, n));
    const double* god = go.data<double>();
    if (mask[0]) {
      if (!c.transposed)
        conv::scatter_f64(q, g.data<double>(), god, w.data(), cols);
      else
        conv::gather_f64(q, god, g.data<double>(), w.data(), cols);
      gi.select(0, n).copy_from(g);
    }
    if (mask[1]) {
      in.copy_from(input.select(0, n));
      if (!c.transposed)
        conv::weight_f64(q, in.data<double>(), god, gw.data(), cols);
      else
        conv::weight_f64(q, god, in.data<double>(), gw.data(), cols);
    }
    if (mask[2]) {
      for (int64_t k = 0; k < ch; ++k)
        for (int64_t s = 0; s < sp; ++s) gb[k] += god[k * sp + s];
    }
  }
  if (mask[1]) store(gw, outs.at(1).tensor());
  if (mask[2]) store(gb, outs.at(2).tensor());
}

std::vector<DType> conv_dtypes() {
  return {DType::UInt8,   DType::Int8,     DType::Int16,   DType::Int32,  DType::Int64,
          DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
}

}  // namespace

void register_convolution_ops(OpRegistry& r) {
  {
    OpDef op = OpDef::from_schema(
        "aten::convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] "
        "padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> "
        "Tensor",
        "convolution");
    op.dtypes = conv_dtypes();
    op.meta = convolution_meta;
    op.ref = structured_ref(op.meta, convolution_impl);
    op.samples = conv::convolution_samples;
    op.cost = conv::conv_cost;
    op.compare.tol_scale = conv::conv_tol_scale;
    op.compare = judges::accumulation_overflow_policy(op.compare, op.ref, op.schema);
    r.add(std::move(op));
  }
  {
    OpDef op = OpDef::from_schema(
        "aten::convolution_backward(Tensor grad_output, Tensor input, Tensor weight, SymInt[]? "
        "bias_sizes, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, "
        "SymInt[] output_padding, SymInt groups, bool[3] output_mask) -> (Tensor, Tensor, Tensor)",
        "convolution");
    op.dtypes = floating_dtypes();
    op.meta = convolution_backward_meta;
    op.ref = structured_ref(op.meta, convolution_backward_impl);
    op.samples = conv::convolution_backward_samples;
    op.cost = conv::conv_backward_cost;
    op.compare.kind = ComparePolicy::Kind::Custom;
    op.compare.custom = conv::conv_backward_judge;
    r.add(std::move(op));
  }
}

}  // namespace crucible
