// Samples of the max pooling ops (pooling.cpp): padding, stride, dilation, ceil_mode,
// unbatched, channels-last, sliced and tied inputs, special values, every dtype, defaults and
// keywords, ATen's errors; real-model shapes for timing.
#include <optional>
#include <string>
#include <vector>

#include "ops/pooling_internal.h"
#include "ops/samples.h"

namespace crucible::pooling {
namespace {

using namespace samples;

// ---- samples ----

struct Win {
  std::string label;
  Shape x;
  std::vector<int64_t> k, s, p, d;
  bool ceil = false;
  std::optional<Shape> strides;
};

Literal x_of(const Win& w, DType t, const std::string& fill = "") {
  Literal l = w.strides ? T(w.x, t, *w.strides) : T(w.x, t);
  if (!fill.empty()) l.tensor.fill = fill;
  return l;
}

// The output shape of a max_pool{nsp}d call.
Shape out_of(const Win& w, size_t nsp) {
  Shape out(w.x.begin(), w.x.end() - static_cast<int64_t>(nsp));
  auto at = [](const std::vector<int64_t>& v, size_t i, int64_t dflt) {
    return v.empty() ? dflt : v.size() == 1 ? v[0] : v[i];
  };
  for (size_t i = 0; i < nsp; ++i) {
    const int64_t k = at(w.k, i, 1);
    out.push_back(pooled_size(w.x[w.x.size() - nsp + i], k, at(w.s, i, k), at(w.p, i, 0),
                              at(w.d, i, 1), w.ceil));
  }
  return out;
}

std::vector<Win> max_wins2d() {
  return {
      {"3x3/2 padding 1", {2, 3, 7, 8}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false, {}},
      {"2x3 stride (1, 2), dilation (2, 1)",
       {2, 2, 7, 7},
       {2, 3},
       {1, 2},
       {1, 1},
       {2, 1},
       false,
       {}},
      {"ceil_mode", {1, 2, 6, 7}, {3, 3}, {2, 2}, {0, 0}, {1, 1}, true, {}},
      {"ceil_mode drops a window starting in the padding",
       {1, 2, 5, 5},
       {2, 2},
       {2, 2},
       {1, 1},
       {1, 1},
       true,
       {}},
      {"unbatched", {3, 6, 6}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false, {}},
      {"channels-last", {2, 3, 6, 5}, {3, 2}, {1, 1}, {1, 1}, {1, 1}, false, Shape{90, 1, 15, 3}},
      {"sliced input", {2, 2, 5, 6}, {2, 2}, {1, 2}, {1, 0}, {1, 1}, false, Shape{120, 60, 12, 2}},
      {"ties (rows expanded along W)",
       {1, 2, 6, 6},
       {3, 3},
       {1, 1},
       {1, 1},
       {1, 1},
       false,
       Shape{0, 6, 1, 0}},
      {"1x1 kernel", {2, 3, 4, 3}, {1, 1}, {1, 1}, {0, 0}, {1, 1}, false, {}},
      {"single values for every dim", {2, 2, 7, 6}, {3}, {2}, {1}, {1}, false, {}},
  };
}

std::vector<Win> max_wins3d() {
  return {
      {"3-d 2x2x2", {2, 2, 4, 5, 4}, {2, 2, 2}, {2, 2, 2}, {0, 1, 0}, {1, 1, 1}, false, {}},
      {"3-d dilation, ceil_mode",
       {1, 2, 5, 5, 6},
       {2, 3, 2},
       {2, 1, 2},
       {1, 1, 1},
       {1, 1, 2},
       true,
       {}},
      {"3-d unbatched", {2, 3, 4, 4}, {3}, {2}, {1}, {1}, false, {}},
      {"3-d channels-last",
       {2, 3, 3, 4, 4},
       {2, 2, 2},
       {1, 1, 1},
       {1, 1, 1},
       {1, 1, 1},
       false,
       Shape{144, 1, 48, 12, 3}},
  };
}

Sample max_fwd(const std::string& label, const Win& w, DType t, const std::string& fill = "") {
  return make(label, {x_of(w, t, fill), L(w.k), L(w.s), L(w.p), L(w.d), B(w.ceil)});
}

Sample max_bwd(int64_t nsp, const std::string& label, const Win& w, DType t,
               const std::string& fill = "") {
  const Shape out = out_of(w, static_cast<size_t>(nsp));
  Literal go = T(out, t);
  if (!fill.empty()) go.tensor.fill = fill;
  return make(label,
              {go, x_of(w, t), L(w.k), L(w.s), L(w.p), L(w.d), B(w.ceil), T(out, DType::Int64)});
}

void add_max_errors(std::vector<Sample>& out, int64_t nsp, bool backward) {
  const DType f32 = DType::Float32;
  const Shape x = nsp == 2 ? Shape{1, 2, 5, 5} : Shape{1, 2, 5, 5, 5};
  auto rep = [nsp](int64_t v) { return std::vector<int64_t>(static_cast<size_t>(nsp), v); };
  auto add = [&](const std::string& label, Win w) {
    w.x = w.x.empty() ? x : w.x;
    if (!backward) {
      out.push_back(max_fwd("error: " + label, w, f32));
    } else {
      Sample s =
          max_bwd(nsp, "error: " + label, {"", x, rep(2), rep(2), rep(0), rep(1), false, {}}, f32);
      // The case's positional literals, as the schema orders them: self, kernel_size, stride,
      // padding, dilation.
      s.call.args[1] = T(w.x, f32);
      s.call.args[2] = L(w.k);
      s.call.args[3] = L(w.s);
      s.call.args[4] = L(w.p);
      s.call.args[5] = L(w.d);
      out.push_back(s);
    }
  };
  add("padding more than half the kernel", {"", {}, rep(3), rep(1), rep(2), rep(1), false, {}});
  add("kernel 0", {"", {}, rep(0), rep(1), rep(0), rep(1), false, {}});
  add("dilation 0", {"", {}, rep(2), rep(1), rep(0), rep(0), false, {}});
  add("kernel_size with too many values", {"",
                                           {},
                                           std::vector<int64_t>(static_cast<size_t>(nsp + 1), 2),
                                           {},
                                           rep(0),
                                           rep(1),
                                           false,
                                           {}});
  add("kernel larger than the input", {"", {}, rep(6), rep(1), rep(0), rep(1), false, {}});
  Shape empty_c = x;
  empty_c[1] = 0;
  add("empty channels", {"", empty_c, rep(2), rep(2), rep(0), rep(1), false, {}});
  Shape too_few(x.begin() + 2, x.end());
  add("input without channels", {"", too_few, rep(2), rep(2), rep(0), rep(1), false, {}});
  if (!backward) {
    Win w{"", x, rep(2), rep(2), rep(0), rep(1), false, {}};
    out.push_back(
        make("error: bool", {x_of(w, DType::Bool), L(w.k), L(w.s), L(w.p), L(w.d), B(false)}));
  } else {
    Win w{"", x, rep(2), rep(2), rep(0), rep(1), false, {}};
    Sample s = max_bwd(nsp, "error: grad_output of the wrong size", w, f32);
    s.call.args[0] = T(x, f32);  // grad_output, the first positional literal
    out.push_back(s);
  }
}

}  // namespace

std::vector<Sample> max_pool_samples(const SampleContext& ctx, int64_t nsp, bool backward) {
  std::vector<Sample> out;
  const DType f32 = DType::Float32;
  auto one = [&](const std::string& label, const Win& w, DType t, const std::string& fill = "") {
    out.push_back(backward ? max_bwd(nsp, label, w, t, fill) : max_fwd(label, w, t, fill));
  };
  if (ctx.performance) {
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16}) {
      if (nsp == 2) {
        one("ResNet stem 3x3/2 [32, 64, 112, 112] " + dtype_code_str(t),
            {"", {32, 64, 112, 112}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false, {}}, t);
        one("2x2/2 [32, 64, 112, 112] " + dtype_code_str(t),
            {"", {32, 64, 112, 112}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false, {}}, t);
      } else {
        one("3-d 3x3x3/2 [8, 64, 16, 56, 56] " + dtype_code_str(t),
            {"", {8, 64, 16, 56, 56}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, false, {}}, t);
      }
    }
    return out;
  }
  const std::vector<Win> wins = nsp == 2 ? max_wins2d() : max_wins3d();
  for (const Win& w : wins) one(w.label + " f32", w, f32);
  for (DType t : {DType::Float64, DType::Float16, DType::BFloat16}) {
    one(wins[0].label + " " + dtype_code_str(t), wins[0], t);
    one("special values " + dtype_code_str(t), wins[0], t, "special");
  }
  one("special values f32", wins[0], f32, "special");
  one("special values, ceil_mode f32", wins[nsp == 2 ? 2 : 1], f32, "special");
  {
    Win w = wins[0];
    w.x[0] = 0;
    one("empty batch", w, f32);
  }
  if (!backward) {
    // Defaults: stride [] (the kernel), padding 0, dilation 1, ceil_mode False.
    const Win& w = wins[0];
    out.push_back(make("defaults (kernel only)", {T(w.x, f32), L(w.k)}));
    out.push_back(make("keywords", {T(w.x, f32), L(w.k)},
                       {{"stride", L({1})}, {"padding", L({1})}, {"ceil_mode", B(true)}}));
    out.push_back(make("stride omitted ([])", {T(w.x, f32), L(w.k), L({}), L(w.p)}));
  }
  add_max_errors(out, nsp, backward);
  return out;
}

std::vector<Sample> adaptive_max_samples(const SampleContext& ctx, bool backward) {
  std::vector<Sample> out;
  const DType f32 = DType::Float32;
  auto one = [&](const std::string& label, const Shape& x, std::vector<int64_t> os, DType t,
                 const std::string& fill = "", std::optional<Shape> strides = std::nullopt) {
    Literal xl = strides ? T(x, t, *strides) : T(x, t);
    if (!backward && !fill.empty()) xl.tensor.fill = fill;
    if (!backward) {
      out.push_back(make(label, {xl, L(os)}));
      return;
    }
    Shape o(x.begin(), x.end() - 2);
    o.insert(o.end(), os.begin(), os.end());
    Literal go = T(o, t);
    if (!fill.empty()) go.tensor.fill = fill;
    out.push_back(make(label, {go, xl, T(o, DType::Int64)}));
  };
  if (ctx.performance) {
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16})
      one("[64, 512, 14, 14] -> 7x7 " + dtype_code_str(t), {64, 512, 14, 14}, {7, 7}, t);
    return out;
  }
  one("7x9 -> 3x4 f32", {2, 3, 7, 9}, {3, 4}, f32);
  one("global (1x1)", {2, 3, 5, 4}, {1, 1}, f32);
  one("output larger than input", {1, 2, 3, 2}, {5, 4}, f32);
  one("unbatched", {3, 5, 6}, {2, 3}, f32);
  one("channels-last", {2, 3, 6, 5}, {4, 2}, f32, "", Shape{90, 1, 15, 3});
  one("same size", {1, 2, 4, 4}, {4, 4}, f32);
  for (DType t : {DType::Float64, DType::Float16, DType::BFloat16}) {
    one("7x9 -> 3x4 " + dtype_code_str(t), {2, 3, 7, 9}, {3, 4}, t);
    one("special values " + dtype_code_str(t), {2, 3, 7, 9}, {3, 4}, t, "special");
  }
  one("special values f32", {2, 3, 7, 9}, {3, 4}, f32, "special");
  one("empty batch", {0, 3, 4, 4}, {2, 2}, f32);
  if (!backward) {
    out.push_back(make("error: output_size of one value", {T({1, 2, 4, 4}, f32), L({2})}));
    out.push_back(make("error: 2-d input", {T({4, 4}, f32), L({2, 2})}));
    out.push_back(make("error: empty channels", {T({1, 0, 4, 4}, f32), L({2, 2})}));
    out.push_back(make("error: bool", {T({1, 2, 4, 4}, DType::Bool), L({2, 2})}));
  } else {
    out.push_back(make("error: empty channels", {T({1, 0, 2, 2}, f32), T({1, 0, 4, 4}, f32),
                                                 T({1, 0, 2, 2}, DType::Int64)}));
    out.push_back(
        make("error: indices of the wrong size",
             {T({1, 2, 2, 2}, f32), T({1, 2, 4, 4}, f32), T({1, 2, 3, 2}, DType::Int64)}));
  }
  return out;
}

}  // namespace crucible::pooling
