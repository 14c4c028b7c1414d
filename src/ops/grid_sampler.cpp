// Spatial sampling: aten.grid_sampler_2d.default and aten.grid_sampler_2d_backward.default.
//
// Reference semantics (PyTorch 2.x, CPU; GridSampler.h, GridSamplerUtils.h, GridSampler.cpp):
//  - input [N, C, H, W], grid [N, Ho, Wo, 2] holding (x, y) in [-1, 1] (x indexes W), output
//    [N, C, Ho, Wo]. interpolation_mode 0 bilinear, 1 nearest, 2 bicubic; padding_mode 0 zeros,
//    1 border, 2 reflection.
//  - unnormalize: align_corners ? (c + 1) / 2 * (size - 1) : ((c + 1) * size - 1) / 2; then
//    (bilinear, nearest) border clips to [0, size - 1], reflection reflects about the pixel
//    edges (align_corners=False: -0.5 and size - 0.5; True: the centres 0 and size - 1) and
//    clips. Out-of-range taps read 0 (zeros padding).
//  - bilinear: the four neighbours of (ix, iy) with the usual area weights; nearest:
//    nearbyint (half to even); bicubic: 4x4 taps around floor(ix), floor(iy) of the
//    unnormalized (unpadded) coordinate, A = -0.75, each tap's integer coordinate passed through
//    the padding mode (then bounds-checked).
//  - backward: grad_input (if output_mask[0], else undefined) scatters grad_output with the same
//    weights; grad_grid (always returned) is d out / d grid: the interpolation weights'
//    derivatives times the unnormalize factor and the padding's derivative (0 where clipped, -1
//    where reflected an odd number of times); 0 for nearest.
//  - checks: input and grid the same dtype, 4-d both, same batch, grid's last dim 2, non-empty
//    spatial input dims. dtypes: f32 and f64 (the CPU kernel's dispatch) and f16 (CUDA's: the
//    f16 calls of real models come from CUDA; ATen's CPU raises "not implemented for 'Half'").
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/ops/destination.h"
#include "crucible/ops/rules/grid_sampler.h"
#include "ops/families.h"
#include "ops/meta_fn.h"
#include "ops/norm_internal.h"
#include "ops/samples.h"
#include "ops/util.h"

namespace crucible {
namespace {

using namespace samples;  // NOLINT(google-build-using-namespace)

using grid::apply_padding;
using grid::Coord;
using grid::cubic_weights;
using grid::CubicWeights;
using grid::kBicubic;
using grid::kBilinear;
using grid::kBorder;
using grid::kNearest;
using grid::kReflection;
using grid::kZeros;
using grid::unnormalize;

// One tap of the interpolation of one output point: input position and weight, plus the
// weight's derivatives with respect to the (padded) source coordinates x and y.
struct Tap {
  int64_t y, x;
  double w, dwx, dwy;
};

// The taps for sampling at grid point (gx, gy); out-of-range taps are dropped (zero padding).
// (mx, my): d source / d grid for x and y.
std::vector<Tap> taps_at(double gx, double gy, int64_t h, int64_t w, int64_t interp,
                         int64_t padding, bool align, double& mx, double& my) {
  std::vector<Tap> taps;
  auto in_bounds = [&](int64_t yy, int64_t xx) { return yy >= 0 && yy < h && xx >= 0 && xx < w; };
  if (interp == kBicubic) {
    const Coord cx = unnormalize(gx, w, align), cy = unnormalize(gy, h, align);
    mx = cx.grad;
    my = cy.grad;
    const double fx = std::floor(cx.v), fy = std::floor(cy.v);
    const CubicWeights wx = cubic_weights(cx.v - fx), wy = cubic_weights(cy.v - fy);
    for (int j = 0; j < 4; ++j) {
      for (int i = 0; i < 4; ++i) {
        // get_value_bounded: the tap's coordinate goes through the padding mode.
        const double px = apply_padding({fx - 1 + i, 1}, w, padding, align).v;
        const double py = apply_padding({fy - 1 + j, 1}, h, padding, align).v;
        const auto xi = static_cast<int64_t>(px), yi = static_cast<int64_t>(py);
        if (!in_bounds(yi, xi)) continue;
        taps.push_back({yi, xi, wx.w[i] * wy.w[j], wx.dw[i] * wy.w[j], wx.w[i] * wy.dw[j]});
      }
    }
    return taps;
  }
  const Coord cx = apply_padding(unnormalize(gx, w, align), w, padding, align);
  const Coord cy = apply_padding(unnormalize(gy, h, align), h, padding, align);
  mx = cx.grad;
  my = cy.grad;
  if (interp == kNearest) {
    const double rx = std::nearbyint(cx.v), ry = std::nearbyint(cy.v);
    if (std::isfinite(rx) && std::isfinite(ry)) {
      const auto xi = static_cast<int64_t>(rx), yi = static_cast<int64_t>(ry);
      if (in_bounds(yi, xi)) taps.push_back({yi, xi, 1.0, 0.0, 0.0});
    }
    return taps;
  }
  const double x0 = std::floor(cx.v), y0 = std::floor(cy.v);
  if (!std::isfinite(x0) || !std::isfinite(y0)) return taps;
  const double x1 = x0 + 1, y1 = y0 + 1;
  const double ix = cx.v, iy = cy.v;
  const Tap corners[4] = {
      {static_cast<int64_t>(y0), static_cast<int64_t>(x0), (x1 - ix) * (y1 - iy), -(y1 - iy),
       -(x1 - ix)},
      {static_cast<int64_t>(y0), static_cast<int64_t>(x1), (ix - x0) * (y1 - iy), (y1 - iy),
       -(ix - x0)},
      {static_cast<int64_t>(y1), static_cast<int64_t>(x0), (x1 - ix) * (iy - y0), -(iy - y0),
       (x1 - ix)},
      {static_cast<int64_t>(y1), static_cast<int64_t>(x1), (ix - x0) * (iy - y0), (iy - y0),
       (ix - x0)},
  };
  for (const Tap& t : corners)
    if (in_bounds(t.y, t.x)) taps.push_back(t);
  return taps;
}

void check_inputs(const Tensor& input, const Tensor& grid, int64_t interp, int64_t padding) {
  if (input.dtype() != grid.dtype()) {
    op_error("grid_sampler(): expected input and grid to have same dtype, but input has " +
             scalar_type_name(input.dtype()) + " and grid has " + scalar_type_name(grid.dtype()));
  }
  const std::string sizes = "input with sizes " + shape_str(input.shape()) +
                            " and grid with sizes " + shape_str(grid.shape());
  if (input.dim() != grid.dim()) {
    op_error(
        "grid_sampler(): expected input and grid to have the same number of dimensions, but "
        "got " +
        sizes);
  }
  if (input.dim() != 4) {
    op_error("grid_sampler(): expected 4D input and grid with same number of dimensions, but got " +
             sizes);
  }
  if (input.size(0) != grid.size(0)) {
    op_error("grid_sampler(): expected grid and input to have same batch size, but got " + sizes);
  }
  if (grid.size(-1) != 2) {
    op_error(
        "grid_sampler(): expected grid to have size 2 in last dimension, but got grid with "
        "sizes " +
        shape_str(grid.shape()));
  }
  for (int64_t i = 2; i < 4; ++i) {
    if (input.size(i) <= 0) {
      op_error(
          "grid_sampler(): expected input to have non-empty spatial dimensions, but input "
          "has sizes " +
          shape_str(input.shape()) + " with dimension " + std::to_string(i) + " being empty");
    }
  }
  if (interp < 0 || interp > 2)
    op_error("grid_sampler(): unknown interpolation mode " + std::to_string(interp));
  if (padding < 0 || padding > 2)
    op_error("grid_sampler(): unknown padding mode " + std::to_string(padding));
  // f16: ATen's CPU kernel has none ("not implemented for 'Half'"), CUDA's computes it; a
  // real-model call in f16 comes from CUDA, so the reference computes it (in f64, rounded once).
  if (input.dtype() != DType::Float32 && input.dtype() != DType::Float64 &&
      input.dtype() != DType::Float16) {
    not_implemented_for("grid_sampler_2d_cpu", input.dtype());
  }
}

// grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners)'s checks; the
// output's shape [N, C, Ho, Wo].
Shape check_forward(const Args& a) {
  const Tensor& input = a.tensor("input");
  const Tensor& grid = a.tensor("grid");
  check_inputs(input, grid, a.integer("interpolation_mode"), a.integer("padding_mode"));
  return {input.size(0), input.size(1), grid.size(1), grid.size(2)};
}

// grid_sampler_2d into its output (meta: check_forward); input and grid read once into f64.
void grid_sampler_impl(const Args& a, const Values& outs) {
  const Tensor& input = a.tensor("input");
  const Tensor& grid = a.tensor("grid");
  const int64_t interp = a.integer("interpolation_mode"), padding = a.integer("padding_mode");
  const bool align = a.flag("align_corners");
  const int64_t n = input.size(0), c = input.size(1), h = input.size(2), w = input.size(3);
  const int64_t ho = grid.size(1), wo = grid.size(2);
  const opsutil::Doubles in = opsutil::read_doubles(input);
  const opsutil::Doubles gr = opsutil::read_doubles(grid);
  std::vector<double> out(static_cast<size_t>(outs.at(0).tensor().numel()));
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t y = 0; y < ho; ++y) {
      for (int64_t x = 0; x < wo; ++x) {
        const int64_t g = ((b * ho + y) * wo + x) * 2;
        double mx = 0, my = 0;
        const auto taps = taps_at(gr[g], gr[g + 1], h, w, interp, padding, align, mx, my);
        for (int64_t ch = 0; ch < c; ++ch) {
          double acc = 0;
          for (const Tap& t : taps) acc += t.w * in[((b * c + ch) * h + t.y) * w + t.x];
          out[((b * c + ch) * ho + y) * wo + x] = acc;
        }
      }
    }
  }
  opsutil::write_doubles(outs.at(0).tensor(), out.data());
}

// grid_sampler_2d_backward(grad_output, input, grid, interpolation_mode, padding_mode,
// align_corners, output_mask)'s checks.
void check_backward(const Args& a) {
  const Tensor& go = a.tensor("grad_output");
  const Tensor& input = a.tensor("input");
  const Tensor& grid = a.tensor("grid");
  check_inputs(input, grid, a.integer("interpolation_mode"), a.integer("padding_mode"));
  const Shape expect{input.size(0), input.size(1), grid.size(1), grid.size(2)};
  if (go.shape() != expect) {
    op_error("grid_sampler_2d_backward: grad_output must have shape " + shape_str(expect) +
             ", got " + shape_str(go.shape()));
  }
  if (go.dtype() != input.dtype()) {
    op_error("expected scalar type " + scalar_type_name(input.dtype()) + " but found " +
             scalar_type_name(go.dtype()));
  }
}

// grad_input (when output_mask[0]) shaped like input, and grad_grid shaped like grid.
Values grid_sampler_backward_meta(const Args& a) {
  check_backward(a);
  Values out(2);
  if (a.value("output_mask").bool_list().at(0)) out[0] = meta::fresh_like(a.tensor("input"));
  out[1] = meta::fresh_like(a.tensor("grid"));
  return out;
}

// The backward into (grad_input where output_mask[0], grad_grid), both zero-filled (meta:
// grid_sampler_backward_meta); the inputs read once into f64.
void grid_sampler_backward_impl(const Args& a, const Values& outs) {
  const Tensor& input = a.tensor("input");
  const Tensor& grid = a.tensor("grid");
  const int64_t interp = a.integer("interpolation_mode"), padding = a.integer("padding_mode");
  const bool align = a.flag("align_corners");
  const int64_t n = input.size(0), c = input.size(1), h = input.size(2), w = input.size(3);
  const int64_t ho = grid.size(1), wo = grid.size(2);
  const opsutil::Doubles go = opsutil::read_doubles(a.tensor("grad_output"));
  const opsutil::Doubles in = opsutil::read_doubles(input);
  const opsutil::Doubles gr = opsutil::read_doubles(grid);
  std::vector<double> gin(static_cast<size_t>(input.numel()), 0.0);
  std::vector<double> ggrid(gr.size(), 0.0);
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t y = 0; y < ho; ++y) {
      for (int64_t x = 0; x < wo; ++x) {
        const int64_t g = ((b * ho + y) * wo + x) * 2;
        double mx = 0, my = 0;
        const auto taps = taps_at(gr[g], gr[g + 1], h, w, interp, padding, align, mx, my);
        double gx = 0, gy = 0;
        for (int64_t ch = 0; ch < c; ++ch) {
          const double gv = go[((b * c + ch) * ho + y) * wo + x];
          for (const Tap& t : taps) {
            const int64_t idx = ((b * c + ch) * h + t.y) * w + t.x;
            gin[idx] += t.w * gv;
            const double v = in[idx];
            gx += t.dwx * v * gv;
            gy += t.dwy * v * gv;
          }
        }
        if (interp != kNearest) {
          ggrid[g] = gx * mx;
          ggrid[g + 1] = gy * my;
        }
      }
    }
  }
  if (outs.at(0).is_tensor()) opsutil::write_doubles(outs[0].tensor(), gin.data());
  opsutil::write_doubles(outs.at(1).tensor(), ggrid.data());
}

std::vector<Sample> grid_samples(const SampleContext& ctx, bool bwd) {
  std::vector<Sample> out;
  auto add = [&](const std::string& label, const Shape& in, const Shape& grid_hw, DType t,
                 int64_t interp, int64_t padding, bool align, const std::string& layout = "",
                 std::vector<bool> mask = {true, true}) {
    const Shape gshape{in[0], grid_hw[0], grid_hw[1], 2};
    Literal x = layout == "special" ? T_fill(in, t, "special")
                : layout == "channels_last"
                    ? T(in, t, {in[1] * in[2] * in[3], 1, in[3] * in[1], in[1]})
                    : T(in, t);
    Literal g = layout == "grid_transposed"
                    ? T(gshape, t, {gshape[1] * gshape[2] * 2, 2, gshape[1] * 2, 1})
                    : T(gshape, t);
    if (!bwd) {
      out.push_back(make(label, {x, g, I(interp), I(padding), B(align)}));
    } else {
      out.push_back(make(label, {T({in[0], in[1], grid_hw[0], grid_hw[1]}, t), x, g, I(interp),
                                 I(padding), B(align), nnops::bool_list(mask)}));
    }
  };
  const char* interp_names[3] = {"bilinear", "nearest", "bicubic"};
  const char* pad_names[3] = {"zeros", "border", "reflection"};
  if (ctx.performance) {
    for (int64_t i : {kBilinear, kBicubic})
      add(std::string("[8, 64, 64, 64] -> 64x64 ") + interp_names[i], {8, 64, 64, 64}, {64, 64},
          DType::Float32, i, kZeros, false);
    return out;
  }
  for (int64_t i : {kBilinear, kNearest, kBicubic}) {
    for (int64_t p : {kZeros, kBorder, kReflection}) {
      for (bool al : {false, true}) {
        add(std::string(interp_names[i]) + " " + pad_names[p] + (al ? " align_corners" : ""),
            {2, 3, 4, 5}, {3, 4}, DType::Float32, i, p, al);
      }
    }
    add(std::string(interp_names[i]) + " f64", {1, 2, 5, 4}, {3, 3}, DType::Float64, i, kZeros,
        false);
    add(std::string(interp_names[i]) + " special values in input", {1, 2, 4, 4}, {3, 3},
        DType::Float32, i, kBorder, false, "special");
  }
  const DType f32 = DType::Float32;
  add("1x1 input, reflection", {1, 2, 1, 1}, {2, 3}, f32, kBilinear, kReflection, false);
  add("1x1 input, reflection, align_corners", {1, 2, 1, 1}, {2, 3}, f32, kBilinear, kReflection,
      true);
  add("channels-last input", {2, 3, 4, 5}, {3, 4}, f32, kBilinear, kZeros, false, "channels_last");
  add("transposed grid", {2, 3, 4, 5}, {3, 4}, f32, kBicubic, kBorder, true, "grid_transposed");
  add("empty batch", {0, 3, 4, 5}, {3, 4}, f32, kBilinear, kZeros, false);
  add("empty output grid", {1, 3, 4, 5}, {0, 4}, f32, kBilinear, kZeros, false);
  if (bwd) {
    add("mask [False, True]", {2, 3, 4, 5}, {3, 4}, f32, kBilinear, kBorder, false, "",
        {false, true});
    add("mask [True, False] bicubic", {2, 3, 4, 5}, {3, 4}, f32, kBicubic, kReflection, false, "",
        {true, false});
  }
  // f16 computes on CUDA (ATen's CPU has no f16 kernel): judged numerically, not as an error.
  add("f16 (CUDA)", {1, 2, 4, 4}, {3, 3}, DType::Float16, kBilinear, kZeros, false);
  add("f16 bicubic border (CUDA)", {1, 2, 5, 4}, {3, 3}, DType::Float16, kBicubic, kBorder, true);
  add("error: unknown interpolation mode", {1, 2, 4, 4}, {3, 3}, f32, 3, kZeros, false);
  add("error: unknown padding mode", {1, 2, 4, 4}, {3, 3}, f32, kBilinear, 5, false);
  add("error: empty spatial input", {1, 2, 0, 4}, {3, 3}, f32, kBilinear, kZeros, false);
  const Literal g33 = T({1, 3, 3, 2}, f32);
  auto tail = [](std::vector<Literal> v) {
    v.push_back(I(kBilinear));
    v.push_back(I(kZeros));
    v.push_back(B(false));
    return v;
  };
  auto err = [&](const std::string& label, const Literal& in, const Literal& grid) {
    if (!bwd) {
      out.push_back(make(label, tail({in, grid})));
    } else {
      std::vector<Literal> v = tail({T({1, 2, 3, 3}, f32), in, grid});
      v.push_back(nnops::bool_list({true, true}));
      out.push_back(make(label, v));
    }
  };
  err("error: dtypes differ", T({1, 2, 4, 4}, f32), T({1, 3, 3, 2}, DType::Float64));
  err("error: batch sizes differ", T({2, 2, 4, 4}, f32), g33);
  err("error: grid last dim 3", T({1, 2, 4, 4}, f32), T({1, 3, 3, 3}, f32));
  err("error: 3-d input", T({2, 4, 4}, f32), T({2, 4, 2}, f32));
  if (bwd) {
    out.push_back(make("error: grad_output shape",
                       {T({1, 2, 3, 4}, f32), T({1, 2, 4, 4}, f32), g33, I(kBilinear), I(kZeros),
                        B(false), nnops::bool_list({true, true})}));
  }
  return out;
}

CostFn grid_cost(bool bwd) {
  return [bwd](const Args& a, const Values& out) {
    Cost c;
    const Value& res = out.empty() ? Value() : out[0];
    if (a.size() <= a.index("grid") || !a.value("input").is_tensor()) return c;
    const Tensor& grid = a.tensor("grid");
    const double points = static_cast<double>(grid.numel() / 2);
    const double ch =
        a.tensor("input").dim() > 1 ? static_cast<double>(a.tensor("input").size(1)) : 1;
    c.flops = (bwd ? 4.0 : 2.0) * 16.0 * points * ch;
    c.bytes = nnops::bytes_of_all(a) + nnops::bytes_of_all(out);
    (void)res;
    return c;
  };
}

}  // namespace

void register_grid_sampler_ops(OpRegistry& r) {
  {
    OpDef op = OpDef::from_schema(
        "aten::grid_sampler_2d(Tensor input, Tensor grid, int interpolation_mode, int "
        "padding_mode, bool align_corners) -> Tensor",
        "sampling");
    op.dtypes = {DType::Float16, DType::Float32, DType::Float64};
    op.meta = [](const Args& a) {
      return Values{meta::fresh(check_forward(a), a.tensor("input").dtype())};
    };
    op.ref = structured_ref(op.meta, grid_sampler_impl);
    op.samples = [](const SampleContext& c) { return grid_samples(c, false); };
    op.cost = grid_cost(false);
    r.add(std::move(op));
  }
  {
    OpDef op = OpDef::from_schema(
        "aten::grid_sampler_2d_backward(Tensor grad_output, Tensor input, Tensor grid, int "
        "interpolation_mode, int padding_mode, bool align_corners, bool[2] output_mask) -> "
        "(Tensor, Tensor)",
        "sampling");
    op.dtypes = {DType::Float16, DType::Float32, DType::Float64};
    op.meta = grid_sampler_backward_meta;
    op.ref = structured_ref(op.meta, grid_sampler_backward_impl);
    op.samples = [](const SampleContext& c) { return grid_samples(c, true); };
    op.cost = grid_cost(true);
    // grad_grid sums C channels x 16 taps; grad_input sums the points that hit each pixel.
    op.compare.tol_scale = [schema = op.schema](const Values& v) {
      const Args a(v, schema);
      if (a.size() < 3 || !a.value("input").is_tensor() || !a.value("grid").is_tensor() ||
          a.tensor("input").dim() < 2)
        return 1.0;
      const Tensor& in = a.tensor("input");
      const double per_pixel = in.numel() > 0 ? static_cast<double>(a.tensor("grid").numel()) /
                                                    static_cast<double>(in.numel())
                                              : 1.0;
      return std::sqrt(std::max({1.0, 16.0 * static_cast<double>(in.size(1)), 16.0 * per_pixel}));
    };
    r.add(std::move(op));
  }
}

}  // namespace crucible
