// The `cpu` backend's 2-d upsampling: upsample_{nearest,bilinear,bicubic}2d (.vec and .default)
// and the nearest and bilinear backward ops. Arguments, checks and taps follow the reference
// (ops/upsample.cpp). Nearest forward copies elements (upsample_nearest.cpp); the others run as
// two one-axis f32 passes (upsample_separable.cpp) for f16/bf16/f32, and directly in f64, in the
// reference's order, for f64 and for calls with extreme values (see nn_util.h).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backends/cpu/index_util.h"
#include "backends/cpu/nn.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/upsample_internal.h"
#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"

namespace crucible::cpu {
namespace upsample {

namespace {

int64_t nearest_src(int64_t dst, int64_t in, int64_t out, std::optional<double> scale) {
  if (out == in) return dst;
  if (out == 2 * in) return dst >> 1;
  const float s = (scale && *scale > 0) ? static_cast<float>(1.0 / *scale)
                                        : static_cast<float>(in) / static_cast<float>(out);
  const float src = std::floor(static_cast<float>(dst) * s);
  return std::min<int64_t>(static_cast<int64_t>(src), in - 1);
}

double cubic1(double x, double a) { return ((a + 2) * x - (a + 3)) * x * x + 1; }
double cubic2(double x, double a) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; }

}  // namespace

AxisTaps axis_taps(Mode mode, int64_t in, int64_t out, bool align, std::optional<double> scale) {
  AxisTaps t;
  t.n = mode == Mode::Nearest ? 1 : mode == Mode::Linear ? (out == in ? 1 : 2) : 4;
  t.src.resize(static_cast<size_t>(out * t.n));
  t.w.resize(t.src.size());
  double ratio = 0;
  if (align)
    ratio = out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0;
  else
    ratio =
        (scale && *scale > 0) ? 1.0 / *scale : static_cast<double>(in) / static_cast<double>(out);
  for (int64_t o = 0; o < out; ++o) {
    int64_t* s = &t.src[o * t.n];
    double* w = &t.w[o * t.n];
    if (mode == Mode::Nearest || t.n == 1) {
      s[0] = mode == Mode::Nearest ? nearest_src(o, in, out, scale) : o;
      w[0] = 1.0;
      continue;
    }
    double real =
        align ? ratio * static_cast<double>(o) : ratio * (static_cast<double>(o) + 0.5) - 0.5;
    if (mode == Mode::Linear && real < 0) real = 0;
    const int64_t i0 = std::min(static_cast<int64_t>(std::floor(real)), in - 1);
    const double lam = std::clamp(real - static_cast<double>(i0), 0.0, 1.0);
    if (mode == Mode::Linear) {
      s[0] = i0;
      w[0] = 1.0 - lam;
      s[1] = i0 + (i0 < in - 1 ? 1 : 0);
      w[1] = lam;
    } else {
      constexpr double kA = -0.75;
      const double cw[4] = {cubic2(lam + 1, kA), cubic1(lam, kA), cubic1(1 - lam, kA),
                            cubic2(2 - lam, kA)};
      for (int64_t j = 0; j < 4; ++j) {
        s[j] = std::clamp<int64_t>(i0 - 1 + j, 0, in - 1);
        w[j] = cw[j];
      }
    }
  }
  return t;
}

namespace {

void common_check(const std::vector<int64_t>& input_size, const std::vector<int64_t>& out_size) {
  if (out_size.size() != 2)
    op_error("It is expected output_size equals to 2, but got size " +
             std::to_string(out_size.size()));
  if (input_size.size() != 4)
    op_error("It is expected input_size equals to 4, but got size " +
             std::to_string(input_size.size()));
  if (input_size[2] <= 0 || input_size[3] <= 0 || out_size[0] <= 0 || out_size[1] <= 0)
    op_error("Input and output sizes should be greater than 0, but got input (H: " +
             std::to_string(input_size[2]) + ", W: " + std::to_string(input_size[3]) +
             ") output (H: " + std::to_string(out_size[0]) + ", W: " + std::to_string(out_size[1]) +
             ")");
}

struct Resolved {
  std::vector<int64_t> out_size;
  std::optional<double> sh, sw;
};

Resolved resolve_vec(const std::vector<int64_t>& input_size, const Value& output_size,
                     const Value& scale_factors) {
  const bool has_out = !output_size.is_none(), has_scales = !scale_factors.is_none();
  if (has_out == has_scales) op_error("Must specify exactly one of output_size and scale_factors");
  const size_t spatial = input_size.size() >= 2 ? input_size.size() - 2 : 0;
  Resolved r;
  if (has_out) {
    r.out_size = output_size.to_int_list();
    if (r.out_size.size() != spatial)
      op_error(
          "Expected static_cast<int64_t>(output_size->size()) == spatial_dimensions to be "
          "true, but got false.");
    return r;
  }
  const std::vector<double>& s = scale_factors.float_list();
  if (s.size() != spatial)
    op_error(
        "Expected static_cast<int64_t>(scale_factors->size()) == spatial_dimensions to be "
        "true, but got false.");
  for (size_t i = 0; i < spatial; ++i)
    r.out_size.push_back(static_cast<int64_t>(static_cast<double>(input_size[i + 2]) * s[i]));
  if (spatial == 2) {
    r.sh = s[0];
    r.sw = s[1];
  }
  return r;
}

const char* op_base(Mode mode) {
  return mode == Mode::Nearest  ? "upsample_nearest2d"
         : mode == Mode::Linear ? "upsample_bilinear2d"
                                : "upsample_bicubic2d";
}

void check_dtype(DType t, Mode mode, bool backward) {
  if (t == DType::UInt8 && mode == Mode::Nearest && !backward) return;
  if (t == DType::UInt8 && !backward)
    unsupported("ATen's fixed-point uint8 bilinear/bicubic path is not modelled");
  if (t != DType::Float16 && t != DType::BFloat16 && t != DType::Float32 && t != DType::Float64)
    not_implemented_for(std::string(op_base(mode)) + (backward ? "_backward" : ""), t);
}

// The reference's computation in f64 (taps in the same order, products (wa * wb) * x).
Tensor forward_f64(const Plan& p, const Tensor& x) {
  Tensor out = Tensor::uninitialized({p.nc * p.oh * p.ow}, DType::Float64);
  const double* xp = x.data<double>();
  double* op = out.data<double>();
  parallel_for(0, p.nc, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c)
      for (int64_t y = 0; y < p.oh; ++y)
        for (int64_t xo = 0; xo < p.ow; ++xo) {
          double acc = 0;
          for (int64_t a = 0; a < p.th.n; ++a)
            for (int64_t b = 0; b < p.tw.n; ++b)
              acc += p.th.w[y * p.th.n + a] * p.tw.w[xo * p.tw.n + b] *
                     xp[(c * p.ih + p.th.src[y * p.th.n + a]) * p.iw + p.tw.src[xo * p.tw.n + b]];
          op[(c * p.oh + y) * p.ow + xo] = acc;
        }
  });
  return out;
}

Tensor backward_f64(const Plan& p, const Tensor& g) {
  Tensor out = Tensor::uninitialized({p.nc * p.ih * p.iw}, DType::Float64);
  const double* gp = g.data<double>();
  double* op = out.data<double>();
  parallel_for(0, p.nc, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      double* plane = op + c * p.ih * p.iw;
      std::fill(plane, plane + p.ih * p.iw, 0.0);
      for (int64_t y = 0; y < p.oh; ++y)
        for (int64_t xo = 0; xo < p.ow; ++xo) {
          const double gv = gp[(c * p.oh + y) * p.ow + xo];
          for (int64_t a = 0; a < p.th.n; ++a)
            for (int64_t b = 0; b < p.tw.n; ++b)
              plane[p.th.src[y * p.th.n + a] * p.iw + p.tw.src[xo * p.tw.n + b]] +=
                  p.th.w[y * p.th.n + a] * p.tw.w[xo * p.tw.n + b] * gv;
        }
    }
  });
  return out;
}

Tensor forward(const Tensor& x, Mode mode, const Resolved& r, bool align) {
  common_check(x.shape(), r.out_size);
  if (x.numel() == 0 && x.size(1) * x.size(2) * x.size(3) == 0)
    op_error("Non-empty 4D data tensor expected but got a tensor with sizes " +
             shape_str(x.shape()));
  check_dtype(x.dtype(), mode, false);
  Plan p;
  p.nc = x.size(0) * x.size(1);
  p.ih = x.size(2);
  p.iw = x.size(3);
  p.oh = r.out_size[0];
  p.ow = r.out_size[1];
  const Shape out_shape{x.size(0), x.size(1), p.oh, p.ow};
  const DType dt = x.dtype();
  if (numel_of(out_shape) == 0) return Tensor::uninitialized(out_shape, dt);
  p.th = axis_taps(mode, p.ih, p.oh, align, r.sh);
  p.tw = axis_taps(mode, p.iw, p.ow, align, r.sw);
  if (mode == Mode::Nearest) {
    const Tensor xc = contiguous_as(x, dt);
    Tensor out = Tensor::uninitialized(out_shape, dt);
    nearest_copy(p, static_cast<const char*>(xc.data_ptr()), static_cast<char*>(out.data_ptr()),
                 xc.itemsize());
    return out;
  }
  if (dt != DType::Float64) {
    const Tensor xc = contiguous_as(x, DType::Float32);
    Tensor out = Tensor::uninitialized(out_shape, DType::Float32);
    if (separable_forward_f32(p, xc.data<float>(), out.data<float>()))
      return dt == DType::Float32 ? out : fresh_copy(out, dt);
  }
  const Tensor out = forward_f64(p, contiguous_as(x, DType::Float64)).view(out_shape);
  return dt == DType::Float64 ? out : fresh_copy(out, dt);
}

Tensor backward(const Tensor& g, Mode mode, const Resolved& r, const std::vector<int64_t>& in_size,
                bool align) {
  common_check(in_size, r.out_size);
  if (g.dim() != 4)
    op_error("Expected grad_output to be a tensor of dimension 4 but got: dimension " +
             std::to_string(g.dim()));
  const std::vector<int64_t> full{in_size[0], in_size[1], r.out_size[0], r.out_size[1]};
  for (int64_t i = 0; i < 4; ++i)
    if (g.size(i) != full[i])
      op_error("Expected grad_output to have the same shape as output; output.size(" +
               std::to_string(i) + ") = " + std::to_string(full[i]) + " but got grad_output.size(" +
               std::to_string(i) + ") = " + std::to_string(g.size(i)));
  check_dtype(g.dtype(), mode, true);
  Plan p;
  p.nc = in_size[0] * in_size[1];
  p.ih = in_size[2];
  p.iw = in_size[3];
  p.oh = r.out_size[0];
  p.ow = r.out_size[1];
  const DType dt = g.dtype();
  if (numel_of(in_size) == 0) return Tensor::uninitialized(in_size, dt);
  p.th = axis_taps(mode, p.ih, p.oh, align, r.sh);
  p.tw = axis_taps(mode, p.iw, p.ow, align, r.sw);
  if (dt != DType::Float64) {
    const Tensor gc = contiguous_as(g, DType::Float32);
    Tensor out = Tensor::uninitialized(in_size, DType::Float32);
    if (separable_backward_f32(p, gc.data<float>(), out.data<float>()))
      return dt == DType::Float32 ? out : fresh_copy(out, dt);
  }
  const Tensor out = backward_f64(p, contiguous_as(g, DType::Float64)).view(in_size);
  return dt == DType::Float64 ? out : fresh_copy(out, dt);
}

// The argument layout of each overload, as the reference reads it.
template <Mode kMode, bool kVec, bool kBackward>
Values upsample_kernel(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  constexpr bool has_align = kMode != Mode::Nearest;
  const Tensor& t = a.tensor(kBackward ? "grad_output" : kVec ? "input" : "self");
  const Value& out_size = a.value("output_size");
  const std::vector<int64_t> in_size = kBackward ? a.ints("input_size") : t.shape();
  const bool align = has_align ? a.flag("align_corners") : false;
  Resolved r;
  if (kVec) {
    r = resolve_vec(in_size, out_size, a.value("scale_factors"));
  } else {
    r.out_size = out_size.to_int_list();
    r.sh = a.opt_real("scales_h");
    r.sw = a.opt_real("scales_w");
  }
  if (kBackward) return {backward(t, kMode, r, in_size, align)};
  return {forward(t, kMode, r, align)};
}

// ATen's uint8 bilinear/bicubic forward is fixed-point arithmetic the reference does not model.
template <Mode kMode>
bool forward_supports(const OpDef& op, const Values& args, std::string* why) {
  const Args a(args, op.schema);
  // .vec names the input `input`, .default `self`.
  if (kMode == Mode::Nearest || a.tensor(a.has("input") ? "input" : "self").dtype() != DType::UInt8)
    return true;
  if (why) *why = "ATen's fixed-point uint8 bilinear/bicubic path is not modelled";
  return false;
}

}  // namespace
}  // namespace upsample

void register_upsample_kernels(KernelTable& t) {
  using upsample::Mode;
  using upsample::upsample_kernel;
  // Integral inputs are taken so that they raise as ATen does; the catalog lists the dtypes.
  const std::vector<DType> all = {DType::Bool,    DType::UInt8,  DType::Int8,    DType::Int16,
                                  DType::Int32,   DType::Int64,  DType::Float16, DType::BFloat16,
                                  DType::Float32, DType::Float64};
  t.add("aten.upsample_nearest2d.vec", {upsample_kernel<Mode::Nearest, true, false>, nullptr, all});
  t.add("aten.upsample_nearest2d.default",
        {upsample_kernel<Mode::Nearest, false, false>, nullptr, all});
  t.add("aten.upsample_bilinear2d.vec", {upsample_kernel<Mode::Linear, true, false>,
                                         upsample::forward_supports<Mode::Linear>, all});
  t.add("aten.upsample_bilinear2d.default", {upsample_kernel<Mode::Linear, false, false>,
                                             upsample::forward_supports<Mode::Linear>, all});
  t.add("aten.upsample_bicubic2d.vec",
        {upsample_kernel<Mode::Cubic, true, false>, upsample::forward_supports<Mode::Cubic>, all});
  t.add("aten.upsample_bicubic2d.default",
        {upsample_kernel<Mode::Cubic, false, false>, upsample::forward_supports<Mode::Cubic>, all});
  t.add("aten.upsample_nearest2d_backward.vec",
        {upsample_kernel<Mode::Nearest, true, true>, nullptr, all});
  t.add("aten.upsample_nearest2d_backward.default",
        {upsample_kernel<Mode::Nearest, false, true>, nullptr, all});
  t.add("aten.upsample_bilinear2d_backward.vec",
        {upsample_kernel<Mode::Linear, true, true>, nullptr, all});
  t.add("aten.upsample_bilinear2d_backward.default",
        {upsample_kernel<Mode::Linear, false, true>, nullptr, all});
}

}  // namespace crucible::cpu
