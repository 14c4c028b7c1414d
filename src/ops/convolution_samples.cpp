// Samples of aten.convolution.default and aten.convolution_backward.default: 1-d, 2-d, 3-d,
// groups, depthwise, transposed, channels-last and strided layouts, every dtype, every
// output_mask, special values, ATen's errors; real-model shapes for timing.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ops/convolution_internal.h"
#include "ops/samples.h"

namespace crucible::conv {
namespace {

using namespace samples;

// ---- samples ----

// A convolution call: input, weight, bias (None when !has_bias), stride, padding, dilation,
// transposed, output_padding, groups.
struct Call {
  Shape x, w;
  bool bias = true;
  std::vector<int64_t> stride, padding, dilation, output_padding;
  bool transposed = false;
  int64_t groups = 1;
  std::optional<Shape> x_strides, w_strides;
};

Call call2d(Shape x, Shape w, bool bias = true) {
  const size_t nsp = x.size() - 2;
  Call c;
  c.x = std::move(x);
  c.w = std::move(w);
  c.bias = bias;
  c.stride.assign(nsp, 1);
  c.padding.assign(nsp, 0);
  c.dilation.assign(nsp, 1);
  c.output_padding.assign(nsp, 0);
  return c;
}

int64_t out_channels(const Call& c) { return c.transposed ? c.w[1] * c.groups : c.w[0]; }

// The output shape of a valid call (for grad_output in backward samples).
Shape output_shape(const Call& c) {
  Shape out{c.x[0], out_channels(c)};
  const size_t nsp = c.x.size() - 2;
  auto at = [](const std::vector<int64_t>& v, size_t d) { return v.size() == 1 ? v[0] : v[d]; };
  for (size_t d = 0; d < nsp; ++d) {
    const int64_t k = at(c.dilation, d) * (c.w[d + 2] - 1) + 1;
    if (!c.transposed)
      out.push_back((c.x[d + 2] + 2 * at(c.padding, d) - k) / at(c.stride, d) + 1);
    else
      out.push_back((c.x[d + 2] - 1) * at(c.stride, d) - 2 * at(c.padding, d) + k +
                    at(c.output_padding, d));
  }
  return out;
}

Literal tensor_of(const Shape& s, DType t, const std::optional<Shape>& strides,
                  const std::string& fill = "") {
  Literal l = strides ? T(s, t, *strides) : T(s, t);
  if (!fill.empty()) l.tensor.fill = fill;
  return l;
}

Sample forward_sample(const std::string& label, const Call& c, DType t,
                      const std::string& fill = "") {
  return make(label, {tensor_of(c.x, t, c.x_strides, fill), tensor_of(c.w, t, c.w_strides),
                      c.bias ? T({out_channels(c)}, t) : None(), L(c.stride), L(c.padding),
                      L(c.dilation), B(c.transposed), L(c.output_padding), I(c.groups)});
}

Sample backward_sample(const std::string& label, const Call& c, DType t,
                       std::vector<bool> mask = {true, true, true}) {
  std::vector<Literal> m;
  for (bool b : mask) m.push_back(B(b));
  return make(
      label, {T(output_shape(c), t), tensor_of(c.x, t, c.x_strides), tensor_of(c.w, t, c.w_strides),
              c.bias ? L({out_channels(c)}) : None(), L(c.stride), L(c.padding), L(c.dilation),
              B(c.transposed), L(c.output_padding), I(c.groups), Literal::list(std::move(m))});
}

// Valid geometries shared by the forward and backward samples.
std::vector<std::pair<std::string, Call>> geometries() {
  std::vector<std::pair<std::string, Call>> out;
  out.emplace_back("2-d 3x3", call2d({2, 3, 6, 7}, {4, 3, 3, 3}));
  {
    Call c = call2d({2, 3, 7, 6}, {4, 3, 3, 2}, false);
    c.stride = {2, 1};
    c.padding = {1, 0};
    c.dilation = {1, 2};
    out.emplace_back("2-d stride, padding, dilation, no bias", c);
  }
  {
    Call c = call2d({2, 4, 5, 5}, {6, 2, 3, 3});
    c.groups = 2;
    c.padding = {1, 1};
    out.emplace_back("2-d groups=2", c);
  }
  {
    Call c = call2d({1, 4, 6, 6}, {4, 1, 3, 3});
    c.groups = 4;
    c.stride = {2, 2};
    c.padding = {1, 1};
    out.emplace_back("depthwise", c);
  }
  out.emplace_back("1x1", call2d({2, 5, 4, 3}, {3, 5, 1, 1}));
  {
    Call c = call2d({2, 3, 11}, {4, 3, 3});
    c.stride = {2};
    c.padding = {2};
    c.dilation = {2};
    out.emplace_back("1-d", c);
  }
  {
    Call c = call2d({1, 2, 4, 5, 4}, {3, 2, 2, 3, 2});
    c.stride = {1, 2, 1};
    c.padding = {1, 0, 1};
    out.emplace_back("3-d", c);
  }
  {
    Call c = call2d({1, 4, 3, 4}, {4, 3, 3, 3});
    c.transposed = true;
    c.stride = {2, 2};
    c.padding = {1, 1};
    c.output_padding = {1, 1};
    out.emplace_back("transposed 2-d, output_padding", c);
  }
  {
    Call c = call2d({2, 4, 3, 3}, {4, 2, 2, 3}, false);
    c.transposed = true;
    c.groups = 2;
    c.stride = {2, 1};
    c.dilation = {1, 2};
    c.output_padding = {1, 1};  // < stride in dim 0, < dilation in dim 1
    out.emplace_back("transposed groups=2, dilation", c);
  }
  {
    Call c = call2d({2, 3, 5}, {3, 2, 3});
    c.transposed = true;
    c.stride = {3};
    c.padding = {1};
    out.emplace_back("transposed 1-d", c);
  }
  {
    Call c = call2d({1, 2, 2, 3, 2}, {2, 2, 2, 2, 3});
    c.transposed = true;
    c.stride = {2, 1, 2};
    out.emplace_back("transposed 3-d", c);
  }
  {
    // Channels-last input and weight ([N, C, H, W] stored as [N, H, W, C]).
    Call c = call2d({2, 3, 5, 6}, {4, 3, 3, 3});
    c.padding = {1, 1};
    c.x_strides = Shape{90, 1, 18, 3};
    c.w_strides = Shape{27, 1, 9, 3};
    out.emplace_back("channels-last", c);
  }
  {
    // Every other column of a wider input; a weight with a batch stride of 0 (expanded).
    Call c = call2d({2, 3, 5, 6}, {4, 3, 2, 2});
    c.x_strides = Shape{360, 120, 24, 2};
    c.w_strides = Shape{0, 4, 2, 1};
    out.emplace_back("sliced input, expanded weight", c);
  }
  return out;
}

}  // namespace

std::vector<Sample> convolution_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  const DType f32 = DType::Float32;
  if (ctx.performance) {
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16}) {
      const std::string d = " " + dtype_code_str(t);
      Call c = call2d({32, 64, 56, 56}, {64, 64, 3, 3}, false);
      c.padding = {1, 1};
      out.push_back(forward_sample("ResNet 3x3 [32, 64, 56, 56]" + d, c, t));
      Call stem = call2d({32, 3, 224, 224}, {64, 3, 7, 7}, false);
      stem.stride = {2, 2};
      stem.padding = {3, 3};
      out.push_back(forward_sample("ResNet stem 7x7/2 [32, 3, 224, 224]" + d, stem, t));
      out.push_back(forward_sample("1x1 [32, 256, 56, 56] -> 64" + d,
                                   call2d({32, 256, 56, 56}, {64, 256, 1, 1}), t));
      Call dw = call2d({32, 96, 56, 56}, {96, 1, 3, 3});
      dw.groups = 96;
      dw.padding = {1, 1};
      out.push_back(forward_sample("depthwise 3x3 [32, 96, 56, 56]" + d, dw, t));
      Call tr = call2d({16, 512, 4, 4}, {512, 256, 4, 4}, false);
      tr.transposed = true;
      tr.stride = {2, 2};
      tr.padding = {1, 1};
      out.push_back(forward_sample("DCGAN transposed [16, 512, 4, 4]" + d, tr, t));
    }
    return out;
  }
  for (const auto& [label, c] : geometries()) out.push_back(forward_sample(label + " f32", c, f32));
  const Call basic = geometries()[0].second;
  for (DType t : {DType::Float64, DType::Float16, DType::BFloat16}) {
    out.push_back(forward_sample("2-d 3x3 " + dtype_code_str(t), basic, t));
    out.push_back(forward_sample("transposed 2-d " + dtype_code_str(t), geometries()[7].second, t));
    out.push_back(forward_sample("special values " + dtype_code_str(t), basic, t, "special"));
  }
  out.push_back(forward_sample("special values f32", basic, f32, "special"));
  for (DType t : integral_dtypes(false))
    out.push_back(forward_sample("2-d 3x3 " + dtype_code_str(t) + " (exact, wraps)", basic, t));
  out.push_back(forward_sample("transposed 2-d i64", geometries()[7].second, DType::Int64));
  {
    Call c = basic;
    c.stride = {2};
    c.padding = {1};
    out.push_back(forward_sample("one value for every spatial dim", c, f32));
  }
  {
    Call c = basic;
    c.x = {0, 3, 6, 7};
    out.push_back(forward_sample("empty batch", c, f32));
  }
  {
    Call c = call2d({1, 2, 3, 3}, {3, 2, 3, 3});
    out.push_back(forward_sample("kernel equals the input (1x1 output)", c, f32));
  }
  // Errors.
  auto err = [&](const std::string& label, Call c, DType t = DType::Float32) {
    out.push_back(forward_sample("error: " + label, c, t));
  };
  err("input channels differ from weight", call2d({1, 4, 5, 5}, {3, 2, 3, 3}));
  {
    Call c = call2d({1, 4, 5, 5}, {3, 2, 3, 3});
    c.transposed = true;
    err("transposed input channels differ from weight.size(0)", c);
  }
  {
    Call c = call2d({1, 4, 5, 5}, {3, 2, 3, 3}, false);
    c.groups = 2;
    err("groups does not divide out channels", c);
  }
  {
    Call c = call2d({1, 8, 5, 5}, {3, 2, 3, 3}, false);
    c.groups = 4;
    err("groups larger than out channels", c);
  }
  {
    Call c = call2d({1, 2, 5, 5}, {3, 2, 3, 3});
    c.groups = 0;
    err("groups=0", c);
  }
  err("kernel larger than the padded input", call2d({1, 2, 2, 5}, {3, 2, 3, 3}));
  {
    Call c = call2d({1, 2, 3, 3}, {3, 2, 2, 2});
    c.dilation = {3, 1};
    err("dilated kernel larger than the input", c);
  }
  {
    Call c = call2d({1, 2, 5, 5}, {3, 2, 3});
    c.stride = {1};
    c.padding = {0};
    c.dilation = {1};
    c.output_padding = {0};
    err("input dims differ from weight dims", c);
  }
  {
    Call c = call2d({2, 5, 5}, {3, 2, 3, 3});
    err("unbatched input", c);
  }
  {
    Call c = call2d({1, 2, 5, 5}, {3, 2, 3, 3});
    c.padding = {-1, 0};
    err("negative padding", c);
  }
  {
    Call c = call2d({1, 2, 5, 5}, {3, 2, 3, 3});
    c.stride = {0, 1};
    err("stride 0", c);
  }
  {
    Call c = call2d({1, 2, 5, 5}, {3, 2, 3, 3});
    c.dilation = {0, 1};
    err("dilation 0", c);
  }
  {
    Call c = call2d({1, 2, 5, 5}, {3, 2, 3, 3});
    c.padding = {0, 0, 0};
    err("padding list of the wrong length", c);
  }
  {
    Call c = call2d({1, 2, 5, 5}, {2, 3, 3, 3});
    c.transposed = true;
    c.stride = {2, 2};
    c.output_padding = {2, 0};
    err("output_padding not smaller than stride or dilation", c);
  }
  {
    Call c = call2d({1, 2, 5, 5}, {2, 3, 3, 3});
    c.transposed = true;
    c.output_padding = {-1, 0};
    err("negative output_padding", c);
  }
  {
    Call c = call2d({1, 2, 1, 1}, {2, 3, 3, 3});
    c.transposed = true;
    c.padding = {2, 2};
    err("transposed output too small", c);
  }
  err("bool", basic, DType::Bool);
  err("transposed i32", geometries()[7].second, DType::Int32);
  out.push_back(make("error: bias of the wrong size",
                     {T({1, 2, 5, 5}, f32), T({3, 2, 3, 3}, f32), T({4}, f32), L({1, 1}), L({0, 0}),
                      L({1, 1}), B(false), L({0, 0}), I(1)}));
  out.push_back(make("error: weight 2-d", {T({1, 2}, f32), T({3, 2}, f32), None(), L({}), L({}),
                                           L({}), B(false), L({}), I(1)}));
  out.push_back(make("error: input and weight dtypes differ",
                     {T({1, 2, 5, 5}, f32), T({3, 2, 3, 3}, DType::Float64), None(), L({1, 1}),
                      L({0, 0}), L({1, 1}), B(false), L({0, 0}), I(1)}));
  return out;
}

std::vector<Sample> convolution_backward_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  const DType f32 = DType::Float32;
  if (ctx.performance) {
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16}) {
      const std::string d = " " + dtype_code_str(t);
      Call c = call2d({32, 64, 56, 56}, {64, 64, 3, 3}, false);
      c.padding = {1, 1};
      out.push_back(backward_sample("ResNet 3x3 [32, 64, 56, 56]" + d, c, t, {true, true, false}));
      Call pw = call2d({32, 256, 56, 56}, {64, 256, 1, 1});
      out.push_back(backward_sample("1x1 [32, 256, 56, 56] -> 64" + d, pw, t));
      Call dw = call2d({32, 96, 56, 56}, {96, 1, 3, 3});
      dw.groups = 96;
      dw.padding = {1, 1};
      out.push_back(backward_sample("depthwise 3x3 [32, 96, 56, 56]" + d, dw, t));
    }
    return out;
  }
  for (const auto& [label, c] : geometries())
    out.push_back(backward_sample(label + " f32", c, f32));
  const Call basic = geometries()[0].second;
  const Call tr = geometries()[7].second;
  for (DType t : {DType::Float64, DType::Float16, DType::BFloat16}) {
    out.push_back(backward_sample("2-d 3x3 " + dtype_code_str(t), basic, t));
    out.push_back(backward_sample("transposed 2-d " + dtype_code_str(t), tr, t));
  }
  // Every output_mask combination, plain and transposed.
  for (int m = 0; m < 8; ++m) {
    const std::vector<bool> mask = {(m & 4) != 0, (m & 2) != 0, (m & 1) != 0};
    std::string ms = "[";
    for (size_t i = 0; i < 3; ++i) ms += std::string(i ? ", " : "") + (mask[i] ? "T" : "F");
    ms += "]";
    out.push_back(backward_sample("output_mask " + ms, basic, f32, mask));
    if (m != 7) out.push_back(backward_sample("transposed, output_mask " + ms, tr, f32, mask));
  }
  {
    Call c = basic;
    c.bias = false;
    out.push_back(backward_sample("no bias (bias_sizes None), grad_bias still asked", c, f32));
  }
  {
    Call c = basic;
    c.x = {0, 3, 6, 7};
    out.push_back(backward_sample("empty batch (zero grad_weight)", c, f32));
  }
  {
    Sample s = backward_sample("special values in grad_output", basic, f32);
    s.call.args[0].tensor.fill = "special";
    out.push_back(s);
  }
  {
    Call c = call2d({1, 4, 5, 5}, {3, 2, 3, 3});
    Sample s = backward_sample("error: input channels differ from weight", c, f32);
    s.call.args[0] = T({1, 3, 3, 3}, f32);
    out.push_back(s);
  }
  {
    Call c = basic;
    c.groups = 0;
    Sample s = backward_sample("error: groups=0", c, f32);
    s.call.args[0] = T(output_shape(basic), f32);
    out.push_back(s);
  }
  out.push_back(backward_sample("error: i64 (no integer backward)", basic, DType::Int64));
  {
    Sample s = backward_sample("error: grad_output dtype differs", basic, f32);
    s.call.args[0] = T(output_shape(basic), DType::Float64);
    out.push_back(s);
  }
  {
    Call c = call2d({1, 2, 2, 5}, {3, 2, 3, 3});
    Sample s = backward_sample("error: kernel larger than the padded input", c, f32);
    s.call.args[0] = T({1, 3, 1, 3}, f32);
    out.push_back(s);
  }
  return out;
}

}  // namespace crucible::conv
