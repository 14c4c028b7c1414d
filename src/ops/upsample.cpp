// 2-d upsampling: aten.upsample_{nearest,bilinear,bicubic}2d.{vec,default} and the backward ops
// aten.upsample_nearest2d_backward.{vec,default}, aten.upsample_bilinear2d_backward.{vec,default}.
//
// Reference semantics (PyTorch 2.x, CPU; UpSample.h, UpSample.cpp, cpu/UpSampleKernel.cpp):
//  - .vec: exactly one of output_size / scale_factors ("Must specify exactly one of output_size
//    and scale_factors"), each with one entry per spatial dim; from scale factors the output size
//    is trunc(input_size * scale) and the scales are passed on to the kernel (used for the source
//    index), from output_size the scales are None.
//  - checks (upsample_2d_common_check): output_size has 2 entries, input_size 4, every spatial
//    size > 0; the input may have N == 0 but no other empty dim ("Non-empty 4D data tensor
//    expected"); the backward's grad_output must have the output's full shape.
//  - nearest: src = min(floor(dst * s), in - 1) computed in float, s = 1/scale when a scale > 0
//    is given else in/out (float division); shortcuts: out == in gives dst, out == 2 * in gives
//    dst >> 1 (whatever the scale).
//  - bilinear: scale = (in - 1)/(out - 1) with align_corners (0 when out == 1), else 1/scale or
//    in/out; src = scale * dst (align_corners) or max(scale * (dst + 0.5) - 0.5, 0);
//    i0 = min(floor(src), in - 1), lambda = clamp(src - i0, 0, 1), i1 = i0 + (i0 < in - 1);
//    out == in copies.
//  - bicubic: the same src without the clamp at 0, i0 = min(floor(src), in - 1),
//    t = clamp(src - i0, 0, 1), taps i0 - 1 .. i0 + 2 clamped to [0, in - 1] with Keys' cubic
//    convolution weights for A = -0.75.
//  - backward: the adjoint (every output gradient scattered to its taps with the same weights).
//  - dtypes: f16, bf16, f32, f64 everywhere; the nearest forward also takes u8 (exact). ATen's
//    u8 bilinear/bicubic path uses fixed-point weights; the reference does not model it and
//    reports such calls as unsupported.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "crucible/core/error.h"
#include "crucible/ops/destination.h"
#include "crucible/ops/rules/upsample.h"
#include "ops/families.h"
#include "ops/meta_fn.h"
#include "ops/norm_internal.h"
#include "ops/samples.h"
#include "ops/util.h"

namespace crucible {
namespace upsampling {
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
  if (align) {
    ratio = out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0;
  } else {
    ratio =
        (scale && *scale > 0) ? 1.0 / *scale : static_cast<double>(in) / static_cast<double>(out);
  }
  for (int64_t o = 0; o < out; ++o) {
    int64_t* s = &t.src[o * t.n];
    double* w = &t.w[o * t.n];
    if (t.n == 1) {  // nearest, or a linear axis that keeps its size
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

void common_check(const std::vector<int64_t>& input_size, const std::vector<int64_t>& out_size) {
  if (out_size.size() != 2) {
    op_error("It is expected output_size equals to 2, but got size " +
             std::to_string(out_size.size()));
  }
  if (input_size.size() != 4) {
    op_error("It is expected input_size equals to 4, but got size " +
             std::to_string(input_size.size()));
  }
  if (input_size[2] <= 0 || input_size[3] <= 0 || out_size[0] <= 0 || out_size[1] <= 0) {
    op_error("Input and output sizes should be greater than 0, but got input (H: " +
             std::to_string(input_size[2]) + ", W: " + std::to_string(input_size[3]) +
             ") output (H: " + std::to_string(out_size[0]) + ", W: " + std::to_string(out_size[1]) +
             ")");
  }
}

Resolved resolve_vec(const std::vector<int64_t>& input_size, const Value& output_size,
                     const Value& scale_factors) {
  const bool has_out = !output_size.is_none(), has_scales = !scale_factors.is_none();
  if (has_out == has_scales) op_error("Must specify exactly one of output_size and scale_factors");
  const size_t spatial = input_size.size() >= 2 ? input_size.size() - 2 : 0;
  Resolved r;
  if (has_out) {
    r.out_size = output_size.to_int_list();
    if (r.out_size.size() != spatial) {
      op_error(
          "Expected static_cast<int64_t>(output_size->size()) == spatial_dimensions to be "
          "true, but got false.");
    }
    return r;
  }
  const std::vector<double>& s = scale_factors.float_list();
  if (s.size() != spatial) {
    op_error(
        "Expected static_cast<int64_t>(scale_factors->size()) == spatial_dimensions to be "
        "true, but got false.");
  }
  for (size_t i = 0; i < spatial; ++i) {
    r.out_size.push_back(static_cast<int64_t>(static_cast<double>(input_size[i + 2]) * s[i]));
  }
  if (spatial == 2) {
    r.sh = s[0];
    r.sw = s[1];
  }
  return r;
}

void check_dtype(DType t, Mode mode, bool backward) {
  if (t == DType::UInt8 && mode == Mode::Nearest && !backward) return;
  if (t == DType::UInt8 && !backward)
    unsupported("the reference does not model ATen's fixed-point uint8 bilinear/bicubic path");
  const char* name = mode == Mode::Nearest  ? "upsample_nearest2d"
                     : mode == Mode::Linear ? "upsample_bilinear2d"
                                            : "upsample_bicubic2d";
  nnops::check_floating_dispatch(t, std::string(name) + (backward ? "_backward" : ""));
}

Shape check_forward(const Tensor& x, Mode mode, const Resolved& r) {
  common_check(x.shape(), r.out_size);
  if (x.numel() == 0 && x.size(1) * x.size(2) * x.size(3) == 0)
    op_error("Non-empty 4D data tensor expected but got a tensor with sizes " +
             shape_str(x.shape()));
  check_dtype(x.dtype(), mode, false);
  return {x.size(0), x.size(1), r.out_size[0], r.out_size[1]};
}

void check_backward(const Tensor& g, Mode mode, const Resolved& r,
                    const std::vector<int64_t>& in_size) {
  common_check(in_size, r.out_size);
  if (g.dim() != 4) {
    op_error("Expected grad_output to be a tensor of dimension 4 but got: dimension " +
             std::to_string(g.dim()));
  }
  const std::vector<int64_t> full{in_size[0], in_size[1], r.out_size[0], r.out_size[1]};
  for (int64_t i = 0; i < 4; ++i) {
    if (g.size(i) != full[i]) {
      op_error("Expected grad_output to have the same shape as output; output.size(" +
               std::to_string(i) + ") = " + std::to_string(full[i]) + " but got grad_output.size(" +
               std::to_string(i) + ") = " + std::to_string(g.size(i)));
    }
  }
  check_dtype(g.dtype(), mode, true);
}

const char* x_name(const Args& a) {
  if (a.has("grad_output")) return "grad_output";
  return a.has("input") ? "input" : "self";
}

Call parse_call(const Args& a, Mode mode, bool vec, bool bwd) {
  const Tensor& t = a.tensor(x_name(a));
  Call c;
  const Value& out_size = a.value("output_size");
  c.in_size = bwd ? a.ints("input_size") : t.shape();
  c.align = mode != Mode::Nearest ? a.flag("align_corners") : false;
  if (vec) {
    c.r = resolve_vec(c.in_size, out_size, a.value("scale_factors"));
  } else {
    c.r.out_size = out_size.to_int_list();
    c.r.sh = a.opt_real("scales_h");
    c.r.sw = a.opt_real("scales_w");
  }
  return c;
}

}  // namespace upsampling

namespace {

using namespace samples;  // NOLINT(google-build-using-namespace)
using upsampling::axis_taps;
using upsampling::AxisTaps;
using upsampling::Call;
using upsampling::check_backward;
using upsampling::check_forward;
using upsampling::Mode;
using upsampling::parse_call;
using upsampling::Resolved;
using upsampling::x_name;

// The forward into `out` ([N, C, oh, ow]; meta: check_forward); x read once into f64.
void forward(const Tensor& x, Mode mode, const Resolved& r, bool align, const Tensor& out) {
  const int64_t n = x.size(0), c = x.size(1), ih = x.size(2), iw = x.size(3);
  const int64_t oh = r.out_size[0], ow = r.out_size[1];
  const AxisTaps th = axis_taps(mode, ih, oh, align, r.sh),
                 tw = axis_taps(mode, iw, ow, align, r.sw);
  const opsutil::Doubles xv = opsutil::read_doubles(x);
  std::vector<double> y_out(static_cast<size_t>(n * c * oh * ow));
  for (int64_t p = 0; p < n * c; ++p) {
    for (int64_t y = 0; y < oh; ++y) {
      for (int64_t xo = 0; xo < ow; ++xo) {
        double acc = 0;
        for (int64_t a = y * th.n; a < (y + 1) * th.n; ++a)
          for (int64_t b = xo * tw.n; b < (xo + 1) * tw.n; ++b)
            acc += th.w[a] * tw.w[b] * xv[(p * ih + th.src[a]) * iw + tw.src[b]];
        y_out[(p * oh + y) * ow + xo] = acc;
      }
    }
  }
  opsutil::write_doubles(out, y_out.data());
}

// The backward into `out` (in_size; meta: check_backward); g read once into f64.
void backward(const Tensor& g, Mode mode, const Resolved& r, const std::vector<int64_t>& in_size,
              bool align, const Tensor& out) {
  const int64_t nc = in_size[0] * in_size[1], ih = in_size[2], iw = in_size[3];
  const int64_t oh = r.out_size[0], ow = r.out_size[1];
  const AxisTaps th = axis_taps(mode, ih, oh, align, r.sh),
                 tw = axis_taps(mode, iw, ow, align, r.sw);
  const opsutil::Doubles gv = opsutil::read_doubles(g);
  std::vector<double> acc(static_cast<size_t>(nc * ih * iw), 0.0);
  for (int64_t p = 0; p < nc; ++p)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t xo = 0; xo < ow; ++xo) {
        const double v = gv[(p * oh + y) * ow + xo];
        for (int64_t a = y * th.n; a < (y + 1) * th.n; ++a)
          for (int64_t b = xo * tw.n; b < (xo + 1) * tw.n; ++b)
            acc[(p * ih + th.src[a]) * iw + tw.src[b]] += th.w[a] * tw.w[b] * v;
      }
  opsutil::write_doubles(out, acc.data());
}

ImplFn make_impl(Mode mode, bool vec, bool bwd) {
  return [mode, vec, bwd](const Args& a, const Values& out) {
    const Tensor& t = a.tensor(x_name(a));
    const Call c = parse_call(a, mode, vec, bwd);
    if (bwd)
      backward(t, mode, c.r, c.in_size, c.align, out.at(0).tensor());
    else
      forward(t, mode, c.r, c.align, out.at(0).tensor());
  };
}

MetaFn make_meta(Mode mode, bool vec, bool bwd) {
  return [mode, vec, bwd](const Args& a) -> Values {
    const Tensor& t = a.tensor(x_name(a));
    const Call c = parse_call(a, mode, vec, bwd);
    if (bwd) {
      check_backward(t, mode, c.r, c.in_size);
      return {meta::fresh(c.in_size, t.dtype())};
    }
    return {meta::fresh(check_forward(t, mode, c.r), t.dtype())};
  };
}

Literal FL(const std::vector<double>& v) {
  std::vector<Literal> items;
  for (double x : v) items.push_back(F(x));
  return Literal::list(std::move(items));
}

// One case of any overload: x is the input (forward) or grad_output (backward).
struct CaseSpec {
  Literal x;
  std::vector<int64_t> in_size;  // backward only
  std::optional<std::vector<int64_t>> out_size;
  std::optional<std::vector<double>> scales;
  bool align = false;
};

std::vector<Sample> upsample_samples(const SampleContext& ctx, Mode mode, bool vec, bool bwd) {
  std::vector<Sample> out;
  const bool has_align = mode != Mode::Nearest;
  auto add = [&](const std::string& label, const CaseSpec& s) {
    std::vector<Literal> args{s.x, s.out_size ? L(*s.out_size) : None()};
    if (bwd) args.push_back(L(s.in_size));
    if (has_align) args.push_back(B(s.align));
    if (vec) {
      args.push_back(s.scales ? FL(*s.scales) : None());
    } else {
      args[1] = s.out_size ? L(*s.out_size) : L({});
      if (s.scales) {
        args.push_back(F((*s.scales)[0]));
        args.push_back(F((*s.scales)[1]));
      }
    }
    out.push_back(make(label, args));
  };
  // A case from an input shape, output size and scales; builds grad_output for backward.
  auto sized = [&](const std::string& label, const Shape& in, DType t,
                   std::optional<std::vector<int64_t>> osize,
                   std::optional<std::vector<double>> scales, bool align,
                   const std::string& layout = "") {
    std::vector<int64_t> o;
    if (osize) {
      o = *osize;
    } else if (scales) {
      for (size_t i = 0; i < 2; ++i)
        o.push_back(static_cast<int64_t>(static_cast<double>(in[i + 2]) * (*scales)[i]));
    }
    CaseSpec s;
    s.align = align;
    const Shape shape = bwd ? Shape{in[0], in[1], o[0], o[1]} : in;
    if (layout == "channels_last") {
      s.x = T(shape, t, {shape[1] * shape[2] * shape[3], 1, shape[3] * shape[1], shape[1]});
    } else if (layout == "special") {
      s.x = T_fill(shape, t, "special");
    } else if (layout == "sliced") {
      s.x = T(shape, t,
              {shape[1] * shape[2] * shape[3] * 2, shape[2] * shape[3] * 2, shape[3] * 2, 2});
    } else if (layout == "expanded") {
      s.x = T(shape, t, {0, shape[2] * shape[3], shape[3], 1});
    } else {
      s.x = T(shape, t);
    }
    s.in_size = in;
    // .vec: output_size or scale_factors; .default: output_size always, scales optional.
    if (vec) {
      if (scales) {
        s.scales = scales;
      } else {
        s.out_size = o;
      }
    } else {
      s.out_size = o;
      s.scales = scales;
    }
    add(label, s);
  };
  const std::vector<bool> aligns =
      has_align ? std::vector<bool>{false, true} : std::vector<bool>{false};
  auto al = [&](bool a) { return has_align ? (a ? " align_corners" : "") : std::string(); };
  if (ctx.performance) {
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16}) {
      sized("[8, 64, 128, 128] x2 " + dtype_code_str(t), {8, 64, 128, 128}, t,
            std::vector<int64_t>{256, 256}, std::nullopt, false);
      sized("[8, 256, 64, 64] x2 by scale " + dtype_code_str(t), {8, 256, 64, 64}, t, std::nullopt,
            std::vector<double>{2.0, 2.0}, false);
    }
    return out;
  }
  std::vector<DType> dts = floating_dtypes();
  if (mode == Mode::Nearest && !bwd) dts.push_back(DType::UInt8);
  for (DType t : dts) {
    const std::string d = " " + dtype_code_str(t);
    for (bool a : aligns) {
      sized("up x2" + al(a) + d, {2, 3, 4, 5}, t, std::vector<int64_t>{8, 10}, std::nullopt, a);
      sized("up 4x5 -> 7x9" + al(a) + d, {1, 2, 4, 5}, t, std::vector<int64_t>{7, 9}, std::nullopt,
            a);
      sized("down 9x7 -> 4x3" + al(a) + d, {1, 2, 9, 7}, t, std::vector<int64_t>{4, 3},
            std::nullopt, a);
    }
    if (is_floating(t))
      sized("special values" + d, {1, 2, 5, 4}, t, std::vector<int64_t>{9, 7}, std::nullopt, false,
            "special");
  }
  const DType f32 = DType::Float32;
  for (bool a : aligns) {
    sized("scale factors 1.7, 2.5" + al(a), {1, 2, 5, 3}, f32, std::nullopt,
          std::vector<double>{1.7, 2.5}, a);
    sized("scale factors 0.5, 0.6 (down)" + al(a), {1, 2, 8, 9}, f32, std::nullopt,
          std::vector<double>{0.5, 0.6}, a);
    sized("scale factor 3, 1/3 source step" + al(a), {1, 1, 5, 7}, DType::Float64, std::nullopt,
          std::vector<double>{3.0, 3.0}, a);
    sized("same size (copy)" + al(a), {2, 2, 4, 5}, f32, std::vector<int64_t>{4, 5}, std::nullopt,
          a);
    sized("to 1x1" + al(a), {1, 2, 4, 5}, f32, std::vector<int64_t>{1, 1}, std::nullopt, a);
    sized("from 1x1" + al(a), {1, 2, 1, 1}, f32, std::vector<int64_t>{3, 4}, std::nullopt, a);
  }
  sized("channels-last", {2, 3, 4, 5}, f32, std::vector<int64_t>{7, 8}, std::nullopt, false,
        "channels_last");
  sized("sliced (step 2)", {2, 3, 4, 5}, f32, std::vector<int64_t>{6, 9}, std::nullopt, false,
        "sliced");
  sized("expanded batch (stride 0)", {3, 2, 4, 5}, f32, std::vector<int64_t>{5, 7}, std::nullopt,
        false, "expanded");
  sized("empty batch", {0, 3, 4, 5}, f32, std::vector<int64_t>{8, 10}, std::nullopt, false);
  sized("large ratio 3x2 -> 17x11", {1, 1, 3, 2}, f32, std::vector<int64_t>{17, 11}, std::nullopt,
        false);
  // Errors.
  sized("error: output size 0", {1, 2, 4, 5}, f32, std::vector<int64_t>{0, 3}, std::nullopt, false);
  if (!bwd) {
    CaseSpec s;
    s.x = T({2, 4, 5}, f32);
    s.out_size = std::vector<int64_t>{8, 10};
    add("error: 3-d input", s);
    s.x = T({1, 0, 4, 5}, f32);
    add("error: empty channels", s);
    if (vec) {
      s.x = T({1, 2, 4, 5}, f32);
      s.out_size = std::vector<int64_t>{8};
      add("error: output_size with one entry", s);
      s.out_size = std::vector<int64_t>{8, 10};
      s.scales = std::vector<double>{2.0, 2.0};
      add("error: both output_size and scale_factors", s);
      s.out_size.reset();
      s.scales.reset();
      add("error: neither output_size nor scale_factors", s);
    }
    s.x = T({1, 2, 4, 5}, DType::Int32);
    s.out_size = std::vector<int64_t>{8, 10};
    s.scales.reset();
    add("error: integral input", s);
  } else {
    CaseSpec s;
    s.x = T({1, 2, 8, 9}, f32);
    s.in_size = {1, 2, 4, 5};
    s.out_size = std::vector<int64_t>{8, 10};
    add("error: grad_output shape does not match", s);
    s.x = T({2, 8, 10}, f32);
    add("error: grad_output 3-d", s);
    s.x = T({1, 2, 8, 10}, f32);
    s.in_size = {2, 4, 5};
    add("error: input_size with 3 entries", s);
    s.x = T({1, 2, 8, 10}, DType::UInt8);
    s.in_size = {1, 2, 4, 5};
    add("error: uint8 grad", s);
    if (vec) {
      s.x = T({1, 2, 8, 10}, f32);
      s.out_size.reset();
      add("error: neither output_size nor scale_factors", s);
    }
  }
  return out;
}

// Backward: each input gradient sums about (out/in) * taps output gradients per axis.
ComparePolicy upsample_compare(Schema schema, bool bwd) {
  ComparePolicy c;
  if (!bwd) return c;
  c.tol_scale = [schema = std::move(schema)](const Values& values) {
    const Args a(values, schema);
    if (a.size() < 3 || !a.value("grad_output").is_tensor()) return 1.0;
    double in = 1;
    const Value& v = a.value("input_size");
    if (v.kind() == ValueKind::IntList && v.to_int_list().size() == 4) {
      in = static_cast<double>(std::max<int64_t>(numel_of(v.to_int_list()), 1));
    }
    const double ratio = static_cast<double>(a.tensor("grad_output").numel()) / in;
    return std::sqrt(std::max(1.0, 16.0 * ratio));
  };
  return c;
}

CostFn upsample_cost(Mode mode) {
  const double taps = mode == Mode::Nearest ? 1 : mode == Mode::Linear ? 4 : 16;
  return [taps](const Args& a, const Values& out) {
    Cost c;
    if (a.size() == 0 || out.empty() || !out[0].is_tensor()) return c;
    const Value& x = a.value(x_name(a));
    const double big = std::max(static_cast<double>(out[0].tensor().numel()),
                                x.is_tensor() ? static_cast<double>(x.tensor().numel()) : 0);
    c.flops = 2.0 * taps * big;
    c.bytes = nnops::bytes_of(x) + nnops::bytes_of(out[0]);
    return c;
  };
}

void add_op(OpRegistry& r, const std::string& schema, Mode mode, bool vec, bool bwd) {
  OpDef op = OpDef::from_schema(schema, "upsample");
  op.dtypes = floating_dtypes();
  if (mode == Mode::Nearest && !bwd) op.dtypes.push_back(DType::UInt8);
  op.meta = make_meta(mode, vec, bwd);
  op.ref = structured_ref(op.meta, make_impl(mode, vec, bwd));
  op.samples = [mode, vec, bwd](const SampleContext& c) {
    return upsample_samples(c, mode, vec, bwd);
  };
  op.cost = upsample_cost(mode);
  op.compare = upsample_compare(op.schema, bwd);
  r.add(std::move(op));
}

}  // namespace

void register_upsample_ops(OpRegistry& r) {
  add_op(r,
         "aten::upsample_nearest2d.vec(Tensor input, SymInt[]? output_size, float[]? "
         "scale_factors) -> Tensor",
         Mode::Nearest, true, false);
  add_op(r,
         "aten::upsample_nearest2d(Tensor self, SymInt[2] output_size, float? scales_h=None, "
         "float? scales_w=None) -> Tensor",
         Mode::Nearest, false, false);
  add_op(r,
         "aten::upsample_bilinear2d.vec(Tensor input, SymInt[]? output_size, bool align_corners, "
         "float[]? scale_factors) -> Tensor",
         Mode::Linear, true, false);
  add_op(r,
         "aten::upsample_bilinear2d(Tensor self, SymInt[2] output_size, bool align_corners, "
         "float? scales_h=None, float? scales_w=None) -> Tensor",
         Mode::Linear, false, false);
  add_op(r,
         "aten::upsample_bicubic2d.vec(Tensor input, SymInt[]? output_size, bool align_corners, "
         "float[]? scale_factors) -> Tensor",
         Mode::Cubic, true, false);
  add_op(r,
         "aten::upsample_bicubic2d(Tensor self, SymInt[2] output_size, bool align_corners, "
         "float? scales_h=None, float? scales_w=None) -> Tensor",
         Mode::Cubic, false, false);
  // The two backward .vec overloads were removed from newer PyTorch but occur in traces.
  add_op(r,
         "aten::upsample_nearest2d_backward.vec(Tensor grad_output, SymInt[]? output_size, "
         "SymInt[] input_size, float[]? scale_factors) -> Tensor",
         Mode::Nearest, true, true);
  add_op(r,
         "aten::upsample_nearest2d_backward(Tensor grad_output, SymInt[2] output_size, SymInt[4] "
         "input_size, float? scales_h=None, float? scales_w=None) -> Tensor",
         Mode::Nearest, false, true);
  add_op(r,
         "aten::upsample_bilinear2d_backward.vec(Tensor grad_output, SymInt[]? output_size, "
         "SymInt[] input_size, bool align_corners, float[]? scale_factors) -> Tensor",
         Mode::Linear, true, true);
  add_op(r,
         "aten::upsample_bilinear2d_backward(Tensor grad_output, SymInt[2] output_size, SymInt[4] "
         "input_size, bool align_corners, float? scales_h=None, float? scales_w=None) -> Tensor",
         Mode::Linear, false, true);
}

}  // namespace crucible
