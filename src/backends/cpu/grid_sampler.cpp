// The `cpu` backend's grid sampling: grid_sampler_2d and grid_sampler_2d_backward, every
// interpolation (bilinear, nearest, bicubic) and padding mode (zeros, border, reflection),
// with and without align_corners; f32, f64 and f16 (computed as CUDA does: ATen's CPU has no
// f16 kernel).
//
// Each grid point's taps (at most 16 input positions and weights, plus the weights'
// derivatives for the backward) are computed once in f64 and applied to every channel. The
// forward reads the input as f32 (f32, f16) or f64 and sums each output in f64; the backward
// works on f64 copies. Each output element is rounded once. The forward
// spreads output rows over the pool, the backward whole batch entries (a batch entry's
// points scatter into its own part of grad_input only). The argument checks are the
// catalog's meta functions.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "backends/cpu/index_util.h"
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/shape_copy.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"
#include "crucible/ops/rules/grid_sampler.h"

namespace crucible::cpu {
namespace {

using grid::apply_padding;
using grid::Coord;
using grid::cubic_weights;
using grid::CubicWeights;
using grid::kBicubic;
using grid::kNearest;
using grid::unnormalize;

// A source position as an index; NaN and values beyond int64's range give -1, which the bounds
// check drops.
inline int64_t to_index(double v) {
  return v > -9.0e18 && v < 9.0e18 ? static_cast<int64_t>(v) : -1;
}

// The in-bounds taps of one grid point: offsets y * w + x, weights and weight derivatives
// with respect to the source x and y; mx, my: d source / d grid.
struct Taps {
  int n = 0;
  int64_t at[16];
  double w[16], dwx[16], dwy[16];
  double mx = 0, my = 0;
};

struct Geometry {
  int64_t h, w, interp, padding;
  bool align;
};

void taps_at(double gx, double gy, const Geometry& g, Taps& t) {
  t.n = 0;
  auto add = [&](int64_t yi, int64_t xi, double wt, double dx, double dy) {
    if (yi < 0 || yi >= g.h || xi < 0 || xi >= g.w) return;
    t.at[t.n] = yi * g.w + xi;
    t.w[t.n] = wt;
    t.dwx[t.n] = dx;
    t.dwy[t.n] = dy;
    ++t.n;
  };
  if (g.interp == kBicubic) {
    const Coord cx = unnormalize(gx, g.w, g.align), cy = unnormalize(gy, g.h, g.align);
    t.mx = cx.grad;
    t.my = cy.grad;
    const double fx = std::floor(cx.v), fy = std::floor(cy.v);
    const CubicWeights wx = cubic_weights(cx.v - fx), wy = cubic_weights(cy.v - fy);
    int64_t xs[4], ys[4];
    for (int i = 0; i < 4; ++i) {
      // Each tap's coordinate goes through the padding mode.
      xs[i] = to_index(apply_padding({fx - 1 + i, 1}, g.w, g.padding, g.align).v);
      ys[i] = to_index(apply_padding({fy - 1 + i, 1}, g.h, g.padding, g.align).v);
    }
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 4; ++i)
        add(ys[j], xs[i], wx.w[i] * wy.w[j], wx.dw[i] * wy.w[j], wx.w[i] * wy.dw[j]);
    return;
  }
  const Coord cx = apply_padding(unnormalize(gx, g.w, g.align), g.w, g.padding, g.align);
  const Coord cy = apply_padding(unnormalize(gy, g.h, g.align), g.h, g.padding, g.align);
  t.mx = cx.grad;
  t.my = cy.grad;
  if (g.interp == kNearest) {
    const double rx = std::nearbyint(cx.v), ry = std::nearbyint(cy.v);
    if (std::isfinite(rx) && std::isfinite(ry)) add(to_index(ry), to_index(rx), 1.0, 0.0, 0.0);
    return;
  }
  const double x0 = std::floor(cx.v), y0 = std::floor(cy.v);
  if (!std::isfinite(x0) || !std::isfinite(y0)) return;
  const double x1 = x0 + 1, y1 = y0 + 1, ix = cx.v, iy = cy.v;
  const int64_t xi0 = to_index(x0), yi0 = to_index(y0), xi1 = to_index(x1), yi1 = to_index(y1);
  add(yi0, xi0, (x1 - ix) * (y1 - iy), -(y1 - iy), -(x1 - ix));
  add(yi0, xi1, (ix - x0) * (y1 - iy), (y1 - iy), -(ix - x0));
  add(yi1, xi0, (x1 - ix) * (iy - y0), -(iy - y0), (x1 - ix));
  add(yi1, xi1, (ix - x0) * (iy - y0), (iy - y0), (ix - x0));
}

// The forward over rows (b, y) of the output: the taps of a row's points first, then each
// channel's row, reading one input plane (T: f32 or f64) and writing contiguous outputs.
template <typename T>
void forward_rows(const T* ip, const double* gp, T* op_, const Geometry& geo, int64_t n, int64_t c,
                  int64_t ho, int64_t wo) {
  const int64_t plane = geo.h * geo.w, oplane = ho * wo;
  parallel_for(0, n * ho, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, wo * c)),
               [&](int64_t r0, int64_t r1) {
                 std::vector<Taps> taps(static_cast<size_t>(wo));
                 for (int64_t r = r0; r < r1; ++r) {
                   const int64_t b = r / ho, y = r % ho;
                   for (int64_t x = 0; x < wo; ++x) {
                     const double* g = gp + (r * wo + x) * 2;
                     taps_at(g[0], g[1], geo, taps[static_cast<size_t>(x)]);
                   }
                   for (int64_t ch = 0; ch < c; ++ch) {
                     const T* src = ip + (b * c + ch) * plane;
                     T* dst = op_ + (b * c + ch) * oplane + y * wo;
                     for (int64_t x = 0; x < wo; ++x) {
                       const Taps& t = taps[static_cast<size_t>(x)];
                       double acc = 0;
                       for (int k = 0; k < t.n; ++k)
                         acc += t.w[k] * static_cast<double>(src[t.at[k]]);
                       dst[x] = static_cast<T>(acc);
                     }
                   }
                 }
               });
}

void forward_kernel(const OpDef&, const Args& a, const Values& outputs) {
  const Tensor& mt = outputs[0].tensor();
  if (mt.numel() == 0) return;
  const Tensor& input = a.tensor("input");
  const Tensor& grid = a.tensor("grid");
  const Geometry geo{input.size(2), input.size(3), a.integer("interpolation_mode"),
                     a.integer("padding_mode"), a.flag("align_corners")};
  const int64_t n = input.size(0), c = input.size(1), ho = grid.size(1), wo = grid.size(2);
  // f32 and f16 (exact in f32) are read as f32, f64 as f64; every output is one f64 sum,
  // rounded once.
  const DType work = input.dtype() == DType::Float64 ? DType::Float64 : DType::Float32;
  const Tensor out = output_buffer(outputs[0], mt.shape(), work);
  const Tensor in = contiguous_as(input, work);
  const Tensor gr = contiguous_as(grid, DType::Float64);
  if (work == DType::Float64)
    forward_rows(in.data<double>(), gr.data<double>(), out.data<double>(), geo, n, c, ho, wo);
  else
    forward_rows(in.data<float>(), gr.data<double>(), out.data<float>(), geo, n, c, ho, wo);
  store_output(out, outputs[0]);
}

// Both gradients are summed in f64 and rounded once into the meta function's outputs (the
// input's gradient is None when output_mask leaves it out).
void backward_kernel(const OpDef&, const Args& a, const Values& outputs) {
  const Tensor& go = a.tensor("grad_output");
  const Tensor& input = a.tensor("input");
  const Tensor& grid = a.tensor("grid");
  const Geometry geo{input.size(2), input.size(3), a.integer("interpolation_mode"),
                     a.integer("padding_mode"), a.flag("align_corners")};
  const int64_t n = input.size(0), c = input.size(1), ho = grid.size(1), wo = grid.size(2);
  const int64_t plane = geo.h * geo.w, oplane = ho * wo;
  Tensor gin = Tensor::zeros(input.shape(), DType::Float64);
  Tensor ggrid = Tensor::zeros(grid.shape(), DType::Float64);
  if (grid.numel() > 0 && input.numel() > 0) {
    const Tensor in = contiguous_as(input, DType::Float64);
    const Tensor gr = contiguous_as(grid, DType::Float64);
    const Tensor gd = contiguous_as(go, DType::Float64);
    const double *ip = in.data<double>(), *gp = gr.data<double>(), *gop = gd.data<double>();
    double *gi = gin.data<double>(), *gg = ggrid.data<double>();
    const bool nearest = geo.interp == kNearest;
    parallel_for(0, n, 1, [&](int64_t b0, int64_t b1) {
      Taps t;
      for (int64_t b = b0; b < b1; ++b) {
        for (int64_t p = 0; p < oplane; ++p) {
          const int64_t g = (b * oplane + p) * 2;
          taps_at(gp[g], gp[g + 1], geo, t);
          double sx = 0, sy = 0;
          for (int64_t ch = 0; ch < c; ++ch) {
            const double gv = gop[(b * c + ch) * oplane + p];
            const double* src = ip + (b * c + ch) * plane;
            double* dst = gi + (b * c + ch) * plane;
            for (int k = 0; k < t.n; ++k) {
              dst[t.at[k]] += t.w[k] * gv;
              const double v = src[t.at[k]];
              sx += t.dwx[k] * v * gv;
              sy += t.dwy[k] * v * gv;
            }
          }
          if (!nearest) {
            gg[g] = sx * t.mx;
            gg[g + 1] = sy * t.my;
          }
        }
      }
    });
  }
  store_output(gin, outputs[0]);
  store_output(ggrid, outputs[1]);
}

}  // namespace

void register_grid_sampler_kernels(KernelTable& t) {
  // Every floating dtype, so that bf16 raises as the reference does (the meta function's check).
  const std::vector<DType> dtypes = {DType::Float16, DType::BFloat16, DType::Float32,
                                     DType::Float64};
  t.add("aten.grid_sampler_2d.default", {.dtypes = dtypes, .run_into = &forward_kernel});
  t.add("aten.grid_sampler_2d_backward.default", {.dtypes = dtypes, .run_into = &backward_kernel});
}

}  // namespace crucible::cpu
