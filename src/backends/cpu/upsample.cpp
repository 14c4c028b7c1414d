// The `cpu` backend's 2-d upsampling: upsample_{nearest,bilinear,bicubic}2d (.vec and .default)
// and the nearest and bilinear backward ops. Arguments and taps are the catalog's
// (crucible/ops/rules/upsample.h); destination-passing: the meta functions checked the call and
// sized the contiguous output. Nearest forward copies elements (upsample_nearest.cpp); the
// others run as two one-axis f32 passes (upsample_separable.cpp) for f16/bf16/f32, and directly in
// f64, in the reference's order, for f64 and for calls with extreme values (see nn_util.h).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backends/cpu/index_util.h"
#include "backends/cpu/nn.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/shape_copy.h"
#include "backends/cpu/upsample_internal.h"
#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"

namespace crucible::cpu {
namespace upsample {
namespace {

// The reference's computation in f64 (taps in the same order, products (wa * wb) * x).
void forward_f64(const Plan& p, const Tensor& x, const Tensor& out) {
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
}

void backward_f64(const Plan& p, const Tensor& g, const Tensor& out) {
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
}

// The plan of a call whose input is [N, C, ih, iw] (`in`) and output [N, C, oh, ow].
Plan plan_of(Mode mode, const Shape& in, const upsampling::Resolved& r, bool align) {
  Plan p;
  p.nc = in[0] * in[1];
  p.ih = in[2];
  p.iw = in[3];
  p.oh = r.out_size[0];
  p.ow = r.out_size[1];
  p.th = axis_taps(mode, p.ih, p.oh, align, r.sh);
  p.tw = axis_taps(mode, p.iw, p.ow, align, r.sw);
  return p;
}

// Into `out` ([N, C, oh, ow], contiguous, x's dtype).
void forward(const Tensor& x, Mode mode, const upsampling::Resolved& r, bool align,
             const Value& out) {
  const Tensor& o = out.tensor();
  if (o.numel() == 0) return;
  const Plan p = plan_of(mode, x.shape(), r, align);
  const DType dt = x.dtype();
  if (mode == Mode::Nearest) {
    const Tensor xc = contiguous_as(x, dt);
    nearest_copy(p, static_cast<const char*>(xc.data_ptr()), static_cast<char*>(o.data_ptr()),
                 xc.itemsize());
    return;
  }
  if (dt != DType::Float64) {
    const Tensor xc = contiguous_as(x, DType::Float32);
    const Tensor buf = output_buffer(out, o.shape(), DType::Float32);
    if (separable_forward_f32(p, xc.data<float>(), buf.data<float>()))
      return store_output(buf, out);
  }
  const Tensor buf = output_buffer(out, o.shape(), DType::Float64);
  forward_f64(p, contiguous_as(x, DType::Float64), buf);
  store_output(buf, out);
}

// Into `out` (in_size, contiguous, g's dtype).
void backward(const Tensor& g, Mode mode, const upsampling::Resolved& r,
              const std::vector<int64_t>& in_size, bool align, const Value& out) {
  const Tensor& o = out.tensor();
  if (o.numel() == 0) return;
  const Plan p = plan_of(mode, in_size, r, align);
  const DType dt = g.dtype();
  if (dt != DType::Float64) {
    const Tensor gc = contiguous_as(g, DType::Float32);
    const Tensor buf = output_buffer(out, o.shape(), DType::Float32);
    if (separable_backward_f32(p, gc.data<float>(), buf.data<float>()))
      return store_output(buf, out);
  }
  const Tensor buf = output_buffer(out, o.shape(), DType::Float64);
  backward_f64(p, contiguous_as(g, DType::Float64), buf);
  store_output(buf, out);
}

// The arguments of each overload, read as the reference reads them.
template <Mode kMode, bool kVec, bool kBackward>
void upsample_kernel(const OpDef&, const Args& a, const Values& out) {
  const Tensor& t = a.tensor(upsampling::x_name(a));
  const upsampling::Call c = upsampling::parse_call(a, kMode, kVec, kBackward);
  if (kBackward) return backward(t, kMode, c.r, c.in_size, c.align, out[0]);
  forward(t, kMode, c.r, c.align, out[0]);
}

// ATen's uint8 bilinear/bicubic forward is fixed-point arithmetic the reference does not model.
template <Mode kMode>
bool forward_supports(const OpDef& op, const Values& args, std::string* why) {
  const Args a(args, op.schema);
  if (kMode == Mode::Nearest || a.tensor(upsampling::x_name(a)).dtype() != DType::UInt8)
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
  auto add = [&](const char* name, KernelIntoFn fn, SupportsFn supports = nullptr) {
    t.add(name, {.supports = supports, .dtypes = all, .run_into = fn});
  };
  add("aten.upsample_nearest2d.vec", upsample_kernel<Mode::Nearest, true, false>);
  add("aten.upsample_nearest2d.default", upsample_kernel<Mode::Nearest, false, false>);
  add("aten.upsample_bilinear2d.vec", upsample_kernel<Mode::Linear, true, false>,
      upsample::forward_supports<Mode::Linear>);
  add("aten.upsample_bilinear2d.default", upsample_kernel<Mode::Linear, false, false>,
      upsample::forward_supports<Mode::Linear>);
  add("aten.upsample_bicubic2d.vec", upsample_kernel<Mode::Cubic, true, false>,
      upsample::forward_supports<Mode::Cubic>);
  add("aten.upsample_bicubic2d.default", upsample_kernel<Mode::Cubic, false, false>,
      upsample::forward_supports<Mode::Cubic>);
  add("aten.upsample_nearest2d_backward.vec", upsample_kernel<Mode::Nearest, true, true>);
  add("aten.upsample_nearest2d_backward.default", upsample_kernel<Mode::Nearest, false, true>);
  add("aten.upsample_bilinear2d_backward.vec", upsample_kernel<Mode::Linear, true, true>);
  add("aten.upsample_bilinear2d_backward.default", upsample_kernel<Mode::Linear, false, true>);
}

}  // namespace crucible::cpu
