// Sliding blocks: aten.im2col.default (unfold), aten.col2im.default (fold) and
// aten.im2col_backward.default.
//
// Reference semantics (PyTorch 2.x, CPU; Im2Col.cpp, Col2Im.cpp, im2col_shape_check.h):
//  - kernel_size, dilation, padding, stride (and output_size) are lists of exactly 2 values
//    ("It is expected kernel_size equals to 2, but got size 1"); kernel, dilation and stride
//    must be > 0, padding >= 0.
//  - im2col: input [N, C, H, W] (or unbatched [C, H, W]; N may be 0, C, H, W may not) gives
//    [N, C*kh*kw, L] with L = oh * ow, o = (i + 2p - (d(k-1) + 1)) / s + 1 >= 1 in each dim;
//    out[n, (c*kh + i)*kw + j, oh*OW + ow] = in[n, c, oh*sh - ph + i*dh, ow*sw - pw + j*dw], 0
//    outside the input.
//  - col2im: input [N, C*kh*kw, L] (or [C*kh*kw, L]) folds back into [N, C, H, W] (H, W =
//    output_size), summing every block element landing on the same position. dim 1 must be
//    divisible by kh*kw and L must equal the number of blocks that fit output_size.
//  - im2col_backward (removed from newer PyTorch but present in traces) is col2im with
//    output_size = input_size.
//  - dtypes: floating only (f16, bf16, f32, f64); integers and bool raise from the dispatch.
// im2col copies exactly; col2im sums in double and rounds once.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/ops/destination.h"
#include "crucible/ops/rules/im2col.h"
#include "ops/families.h"
#include "ops/meta_fn.h"
#include "ops/samples.h"
#include "ops/util.h"

namespace crucible {
namespace im2col {
namespace {

void check_dtype(DType t, const char* kernel) {
  if (!is_floating(t) || t == DType::Float8E4M3FN || t == DType::Float8E5M2)
    not_implemented_for(kernel, t);
}

}  // namespace

Pair pair_arg(const Value& v, const char* name) {
  const std::vector<int64_t> l = v.to_int_list();
  if (l.size() != 2) {
    op_error(std::string("It is expected ") + name + " equals to 2, but got size " +
             std::to_string(l.size()));
  }
  return {l[0], l[1]};
}

std::string pair_str(Pair p) {
  return "(" + std::to_string(p.h) + ", " + std::to_string(p.w) + ")";
}

Blocks check_blocks(const Args& a) {
  Blocks b{pair_arg(a.value("kernel_size"), "kernel_size"),
           pair_arg(a.value("dilation"), "dilation"), pair_arg(a.value("padding"), "padding"),
           pair_arg(a.value("stride"), "stride")};
  if (b.kernel.h <= 0 || b.kernel.w <= 0) {
    op_error("kernel size should be greater than zero, but got kernel_height: " +
             std::to_string(b.kernel.h) + " kernel_width: " + std::to_string(b.kernel.w));
  }
  if (b.dilation.h <= 0 || b.dilation.w <= 0) {
    op_error("dilation should be greater than zero, but got dilation_height: " +
             std::to_string(b.dilation.h) + " dilation_width: " + std::to_string(b.dilation.w));
  }
  if (b.padding.h < 0 || b.padding.w < 0) {
    op_error("padding should be non-negative, but got pad_height: " + std::to_string(b.padding.h) +
             " pad_width: " + std::to_string(b.padding.w));
  }
  if (b.stride.h <= 0 || b.stride.w <= 0) {
    op_error("stride should be greater than zero, but got stride_height: " +
             std::to_string(b.stride.h) + " stride_width: " + std::to_string(b.stride.w));
  }
  return b;
}

int64_t n_blocks(int64_t n, int64_t k, int64_t d, int64_t p, int64_t s) {
  return (n + 2 * p - (d * (k - 1) + 1)) / s + 1;
}

Unfold im2col_plan(const Args& args) {
  const Tensor& self = args.tensor("self");
  const Blocks b = check_blocks(args);
  const bool batched = self.dim() == 4;
  const bool valid = (self.dim() == 3 || self.dim() == 4) && self.size(-3) != 0 &&
                     self.size(-2) != 0 && self.size(-1) != 0;
  if (!valid) {
    op_error(
        "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
        "dimensions for input, but got: " +
        shape_str(self.shape()));
  }
  const int64_t n = batched ? self.size(0) : 1, c = self.size(-3), h = self.size(-2),
                w = self.size(-1);
  const int64_t oh = n_blocks(h, b.kernel.h, b.dilation.h, b.padding.h, b.stride.h);
  const int64_t ow = n_blocks(w, b.kernel.w, b.dilation.w, b.padding.w, b.stride.w);
  if (oh < 1 || ow < 1) {
    op_error("Given input with spatial size (" + std::to_string(h) + ", " + std::to_string(w) +
             "), kernel_size=" + pair_str(b.kernel) + ", dilation=" + pair_str(b.dilation) +
             ", padding=" + pair_str(b.padding) +
             ", calculated shape of the array of sliding blocks as (" + std::to_string(oh) + ", " +
             std::to_string(ow) + "), but its components must be at least one.");
  }
  check_dtype(self.dtype(), "im2col_out_cpu");
  const int64_t kk = b.kernel.h * b.kernel.w, l = oh * ow;
  Shape out_shape{c * kk, l};
  if (batched) out_shape.insert(out_shape.begin(), n);
  return {b, n, c, h, w, oh, ow, out_shape};
}

Unfold fold_plan(const Args& a, const char* input_name, const char* size_name) {
  const Pair size = pair_arg(a.value(size_name), size_name);
  const Blocks b = check_blocks(a);
  const Tensor& self = a.tensor(input_name);
  const bool batched = self.dim() == 3;
  const bool valid =
      (self.dim() == 2 || self.dim() == 3) && self.size(-2) != 0 && self.size(-1) != 0;
  if (!valid) {
    op_error(
        "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
        "dimensions for input, but got: " +
        shape_str(self.shape()));
  }
  const int64_t kk = b.kernel.h * b.kernel.w;
  const int64_t rows = self.size(-2), l = self.size(-1);
  if (rows % kk != 0) {
    op_error(
        "Expected size of input's dimension 1 to be divisible by the product of "
        "kernel_size, but got input.size(1)=" +
        std::to_string(rows) + " and kernel_size=" + pair_str(b.kernel) + ".");
  }
  const int64_t oh = n_blocks(size.h, b.kernel.h, b.dilation.h, b.padding.h, b.stride.h);
  const int64_t ow = n_blocks(size.w, b.kernel.w, b.dilation.w, b.padding.w, b.stride.w);
  const std::string geometry =
      "Given output_size=" + pair_str(size) + ", kernel_size=" + pair_str(b.kernel) +
      ", dilation=" + pair_str(b.dilation) + ", padding=" + pair_str(b.padding) +
      ", stride=" + pair_str(b.stride);
  if (l != oh * ow) {
    op_error(geometry +
             ", expected size of input's dimension 2 to match the calculated number of sliding "
             "blocks " +
             std::to_string(oh) + " * " + std::to_string(ow) + " = " + std::to_string(oh * ow) +
             ", but got input.size(2)=" + std::to_string(l) + ".");
  }
  if (oh < 1 || ow < 1) {
    op_error(geometry + ", calculated shape of the array of sliding blocks as (" +
             std::to_string(oh) + ", " + std::to_string(ow) +
             "), which is too small (non-positive)");
  }
  check_dtype(self.dtype(), "col2im_out_cpu");
  const int64_t n = batched ? self.size(0) : 1, c = rows / kk, h = size.h, w = size.w;
  Shape out_shape{c, h, w};
  if (batched) out_shape.insert(out_shape.begin(), n);
  return {b, n, c, h, w, oh, ow, out_shape};
}

}  // namespace im2col

namespace {

using namespace samples;

Values im2col_meta(const Args& args) {
  return {meta::fresh(im2col::im2col_plan(args).out_shape, args.tensor("self").dtype())};
}

// im2col into its output (zero-filled; meta: im2col_plan): the input read once into f64 (every
// float dtype round-trips through double exactly), the columns gathered, then stored.
void im2col_impl(const Args& args, const Values& outs) {
  const auto [b, n, c, h, w, oh, ow, out_shape] = im2col::im2col_plan(args);
  const int64_t kk = b.kernel.h * b.kernel.w, l = oh * ow;
  const Tensor& out = outs.at(0).tensor();
  const opsutil::Doubles src = opsutil::read_doubles(args.tensor("self"));
  std::vector<double> col(static_cast<size_t>(out.numel()), 0.0);
  for (int64_t in = 0; in < n; ++in)
    for (int64_t ic = 0; ic < c; ++ic)
      for (int64_t i = 0; i < b.kernel.h; ++i)
        for (int64_t j = 0; j < b.kernel.w; ++j) {
          const int64_t row = (ic * b.kernel.h + i) * b.kernel.w + j;
          for (int64_t y = 0; y < oh; ++y) {
            const int64_t ih = y * b.stride.h - b.padding.h + i * b.dilation.h;
            if (ih < 0 || ih >= h) continue;
            for (int64_t x = 0; x < ow; ++x) {
              const int64_t iw = x * b.stride.w - b.padding.w + j * b.dilation.w;
              if (iw < 0 || iw >= w) continue;
              col[(in * c * kk + row) * l + y * ow + x] = src[((in * c + ic) * h + ih) * w + iw];
            }
          }
        }
  opsutil::write_doubles(out, col.data());
}

// col2im of `input_name` into the image size `size_name` (col2im and im2col_backward), into
// `out`.
void fold(const Args& args, const char* input_name, const char* size_name, const Tensor& out) {
  const auto [b, n, c, h, w, oh, ow, out_shape] = im2col::fold_plan(args, input_name, size_name);
  const Tensor& self = args.tensor(input_name);
  const int64_t rows = self.size(-2), l = self.size(-1);
  const opsutil::Doubles src = opsutil::read_doubles(self);
  std::vector<double> acc(static_cast<size_t>(n * c * h * w), 0.0);
  for (int64_t in = 0; in < n; ++in)
    for (int64_t ic = 0; ic < c; ++ic)
      for (int64_t i = 0; i < b.kernel.h; ++i)
        for (int64_t j = 0; j < b.kernel.w; ++j) {
          const int64_t row = (ic * b.kernel.h + i) * b.kernel.w + j;
          for (int64_t y = 0; y < oh; ++y) {
            const int64_t ih = y * b.stride.h - b.padding.h + i * b.dilation.h;
            if (ih < 0 || ih >= h) continue;
            for (int64_t x = 0; x < ow; ++x) {
              const int64_t iw = x * b.stride.w - b.padding.w + j * b.dilation.w;
              if (iw < 0 || iw >= w) continue;
              acc[((in * c + ic) * h + ih) * w + iw] += src[(in * rows + row) * l + y * ow + x];
            }
          }
        }
  opsutil::write_doubles(out, acc.data());
}

// col2im and im2col_backward (the folded input is `self` / `grad_output`, the output size
// `output_size` / `input_size`).
Values fold_meta(const Args& args, const char* self_name, const char* size_name) {
  return {meta::fresh(im2col::fold_plan(args, self_name, size_name).out_shape,
                      args.tensor(self_name).dtype())};
}

// Each folded element sums at most kh*kw block elements.
double fold_tol_scale(const Args& a) {
  if (a.size() < 3 || a.value("kernel_size").kind() != ValueKind::IntList) return 1.0;
  const std::vector<int64_t> k = a.ints("kernel_size");
  double v = 1;
  for (int64_t x : k) v *= static_cast<double>(std::max<int64_t>(x, 1));
  return std::sqrt(v);
}

// The folded or unfolded input: im2col's and col2im's `self`, im2col_backward's `grad_output`.
const char* input_name(const Args& a) { return a.has("self") ? "self" : "grad_output"; }

Cost copy_cost(const Args& a, const Values& out) {
  Cost c;
  if (a.size() > 0 && a.value(input_name(a)).is_tensor()) {
    const Tensor& in = a.tensor(input_name(a));
    c.bytes += static_cast<double>(in.numel() * in.itemsize());
  }
  if (!out.empty() && out[0].is_tensor())
    c.bytes += static_cast<double>(out[0].tensor().numel() * out[0].tensor().itemsize());
  return c;
}

Cost fold_cost(const Args& a, const Values& out) {
  Cost c = copy_cost(a, out);
  if (a.size() > 0 && a.value(input_name(a)).is_tensor())
    c.flops = static_cast<double>(a.tensor(input_name(a)).numel());
  return c;
}

// ---- samples ----

struct Geom {
  std::string label;
  Shape in;  // [N, C, H, W] or [C, H, W]
  std::vector<int64_t> k, d, p, s;
  std::optional<Shape> strides;  // of the im2col input
};

std::vector<Geom> geometries() {
  return {
      {"2x3 kernel", {2, 3, 5, 6}, {2, 3}, {1, 1}, {0, 0}, {1, 1}, {}},
      {"padding and stride", {2, 2, 5, 7}, {3, 3}, {1, 1}, {1, 2}, {2, 2}, {}},
      {"dilation", {1, 3, 7, 6}, {2, 2}, {2, 3}, {1, 0}, {1, 1}, {}},
      {"overlapping 3x3, stride 1, padding 1", {1, 2, 6, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {}},
      {"unbatched", {3, 4, 5}, {2, 2}, {1, 1}, {0, 1}, {1, 2}, {}},
      {"kernel 9x1 (ConvBert)", {1, 4, 12, 1}, {9, 1}, {1, 1}, {4, 0}, {1, 1}, {}},
      {"kernel equals the input", {2, 2, 3, 4}, {3, 4}, {1, 1}, {0, 0}, {1, 1}, {}},
      {"channels-last input", {2, 3, 5, 4}, {2, 2}, {1, 1}, {1, 1}, {2, 1}, Shape{60, 1, 12, 3}},
      {"sliced input", {2, 2, 4, 5}, {2, 3}, {1, 1}, {0, 1}, {1, 1}, Shape{80, 40, 10, 2}},
  };
}

// The column tensor shape im2col gives for `g`.
Shape cols_shape(const Geom& g) {
  const size_t b = g.in.size() - 3;
  const int64_t oh = im2col::n_blocks(g.in[b + 1], g.k[0], g.d[0], g.p[0], g.s[0]);
  const int64_t ow = im2col::n_blocks(g.in[b + 2], g.k[1], g.d[1], g.p[1], g.s[1]);
  Shape s{g.in[b] * g.k[0] * g.k[1], oh * ow};
  if (b == 1) s.insert(s.begin(), g.in[0]);
  return s;
}

Sample im2col_sample(const std::string& label, const Geom& g, DType t,
                     const std::string& fill = "") {
  Literal x = g.strides ? T(g.in, t, *g.strides) : T(g.in, t);
  if (!fill.empty()) x.tensor.fill = fill;
  return make(label, {x, L(g.k), L(g.d), L(g.p), L(g.s)});
}

Sample fold_sample(const std::string& label, const Geom& g, DType t, const std::string& fill = "",
                   std::optional<Literal> cols = std::nullopt) {
  Literal x = cols ? *cols : T(cols_shape(g), t);
  if (!fill.empty()) x.tensor.fill = fill;
  const size_t b = g.in.size() - 3;
  return make(label, {x, L({g.in[b + 1], g.in[b + 2]}), L(g.k), L(g.d), L(g.p), L(g.s)});
}

std::vector<Sample> im2col_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  const DType f32 = DType::Float32;
  if (ctx.performance) {
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16}) {
      out.push_back(im2col_sample("3x3 padding 1 [16, 64, 56, 56] " + dtype_code_str(t),
                                  {"", {16, 64, 56, 56}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {}}, t));
      out.push_back(im2col_sample("patches 16x16/16 [64, 3, 224, 224] " + dtype_code_str(t),
                                  {"", {64, 3, 224, 224}, {16, 16}, {1, 1}, {0, 0}, {16, 16}, {}},
                                  t));
    }
    return out;
  }
  for (const Geom& g : geometries()) out.push_back(im2col_sample(g.label + " f32", g, f32));
  for (DType t : {DType::Float64, DType::Float16, DType::BFloat16}) {
    out.push_back(
        im2col_sample(geometries()[1].label + " " + dtype_code_str(t), geometries()[1], t));
    out.push_back(
        im2col_sample("special values " + dtype_code_str(t), geometries()[0], t, "special"));
  }
  out.push_back(im2col_sample("special values f32", geometries()[1], f32, "special"));
  out.push_back(
      im2col_sample("empty batch", {"", {0, 2, 4, 4}, {2, 2}, {1, 1}, {0, 0}, {1, 1}, {}}, f32));
  auto err = [&](const std::string& label, const Geom& g, DType t = DType::Float32) {
    out.push_back(im2col_sample("error: " + label, g, t));
  };
  err("kernel 0", {"", {1, 2, 4, 4}, {0, 2}, {1, 1}, {0, 0}, {1, 1}, {}});
  err("dilation 0", {"", {1, 2, 4, 4}, {2, 2}, {1, 0}, {0, 0}, {1, 1}, {}});
  err("negative padding", {"", {1, 2, 4, 4}, {2, 2}, {1, 1}, {-1, 0}, {1, 1}, {}});
  err("stride 0", {"", {1, 2, 4, 4}, {2, 2}, {1, 1}, {0, 0}, {0, 1}, {}});
  err("kernel_size of one value", {"", {1, 2, 4, 4}, {2}, {1, 1}, {0, 0}, {1, 1}, {}});
  err("empty channels", {"", {1, 0, 4, 4}, {2, 2}, {1, 1}, {0, 0}, {1, 1}, {}});
  err("no block fits", {"", {1, 2, 2, 4}, {3, 2}, {1, 1}, {0, 0}, {1, 1}, {}});
  err("i64", geometries()[0], DType::Int64);
  err("bool", geometries()[0], DType::Bool);
  out.push_back(
      make("error: 2-d input", {T({4, 4}, f32), L({2, 2}), L({1, 1}), L({0, 0}), L({1, 1})}));
  return out;
}

// col2im and im2col_backward share their samples (same argument layout).
std::vector<Sample> fold_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  const DType f32 = DType::Float32;
  if (ctx.performance) {
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16}) {
      out.push_back(fold_sample("3x3 padding 1 into [16, 64, 56, 56] " + dtype_code_str(t),
                                {"", {16, 64, 56, 56}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {}}, t));
      out.push_back(fold_sample("ConvBert 9x1 [8, 3456, 512] (transposed) " + dtype_code_str(t),
                                {"", {8, 384, 512, 1}, {9, 1}, {1, 1}, {4, 0}, {1, 1}, {}}, t, "",
                                T({8, 3456, 512}, t, {1769472, 1, 3456})));
    }
    return out;
  }
  for (const Geom& g : geometries()) {
    if (g.strides) continue;
    out.push_back(fold_sample(g.label + " f32", g, f32));
  }
  for (DType t : {DType::Float64, DType::Float16, DType::BFloat16}) {
    out.push_back(fold_sample(geometries()[3].label + " " + dtype_code_str(t), geometries()[3], t));
    out.push_back(
        fold_sample("special values " + dtype_code_str(t), geometries()[3], t, "special"));
  }
  out.push_back(fold_sample("special values f32", geometries()[1], f32, "special"));
  // Columns stored transposed, as the ConvBert trace passes them.
  out.push_back(fold_sample("transposed columns", geometries()[5], f32, "",
                            T({1, 36, 12}, f32, {432, 1, 36})));
  out.push_back(
      fold_sample("empty batch", {"", {0, 2, 4, 4}, {2, 2}, {1, 1}, {0, 0}, {1, 1}, {}}, f32));
  const Geom g0 = geometries()[0];
  out.push_back(
      fold_sample("error: rows not divisible by the kernel", g0, f32, "", T({2, 17, 12}, f32)));
  out.push_back(fold_sample("error: wrong number of blocks", g0, f32, "", T({2, 18, 11}, f32)));
  out.push_back(fold_sample("error: empty rows", g0, f32, "", T({2, 0, 12}, f32)));
  out.push_back(fold_sample("error: 4-d input", g0, f32, "", T({1, 2, 18, 12}, f32)));
  out.push_back(fold_sample("error: i64", g0, DType::Int64));
  out.push_back(make("error: kernel 0",
                     {T({2, 18, 12}, f32), L({5, 6}), L({0, 3}), L({1, 1}), L({0, 0}), L({1, 1})}));
  out.push_back(make("error: stride 0",
                     {T({2, 18, 12}, f32), L({5, 6}), L({2, 3}), L({1, 1}), L({0, 0}), L({1, 0})}));
  out.push_back(make("error: negative padding", {T({2, 18, 12}, f32), L({5, 6}), L({2, 3}),
                                                 L({1, 1}), L({0, -1}), L({1, 1})}));
  out.push_back(make("error: size of one value",
                     {T({2, 18, 12}, f32), L({5}), L({2, 3}), L({1, 1}), L({0, 0}), L({1, 1})}));
  return out;
}

std::vector<DType> fold_dtypes() { return floating_dtypes(); }

}  // namespace

void register_im2col_ops(OpRegistry& r) {
  {
    OpDef op = OpDef::from_schema(
        "aten::im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] "
        "stride) -> Tensor",
        "convolution");
    op.dtypes = fold_dtypes();
    op.meta = im2col_meta;
    op.ref = structured_ref(op.meta, im2col_impl);
    op.samples = im2col_samples;
    op.cost = copy_cost;
    r.add(std::move(op));
  }
  {
    OpDef op = OpDef::from_schema(
        "aten::col2im(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation, "
        "int[2] padding, int[2] stride) -> Tensor",
        "convolution");
    op.dtypes = fold_dtypes();
    op.meta = [](const Args& args) { return fold_meta(args, "self", "output_size"); };
    op.ref = structured_ref(op.meta, [](const Args& args, const Values& out) {
      fold(args, "self", "output_size", out.at(0).tensor());
    });
    op.samples = fold_samples;
    op.cost = fold_cost;
    op.compare.tol_scale = [schema = op.schema](const Values& a) {
      return fold_tol_scale(Args(a, schema));
    };
    r.add(std::move(op));
  }
  {
    // Not in newer PyTorch's op list; the traces still call it.
    OpDef op = OpDef::from_schema(
        "aten::im2col_backward(Tensor grad_output, int[2] input_size, int[2] kernel_size, int[2] "
        "dilation, int[2] padding, int[2] stride) -> Tensor",
        "convolution");
    op.dtypes = fold_dtypes();
    op.meta = [](const Args& args) { return fold_meta(args, "grad_output", "input_size"); };
    op.ref = structured_ref(op.meta, [](const Args& args, const Values& out) {
      fold(args, "grad_output", "input_size", out.at(0).tensor());
    });
    op.samples = fold_samples;
    op.cost = fold_cost;
    op.compare.tol_scale = [schema = op.schema](const Values& a) {
      return fold_tol_scale(Args(a, schema));
    };
    r.add(std::move(op));
  }
}

}  // namespace crucible
