// Average pooling: aten.avg_pool2d, avg_pool3d, _adaptive_avg_pool2d, _adaptive_avg_pool3d and
// their backwards.
//
// Reference semantics (PyTorch 2.x, CPU; AveragePool2d/3d.cpp, AvgPoolKernel.cpp,
// AdaptiveAveragePooling.cpp):
//  - avg_pool: the geometry and checks of max pooling without dilation (see pooling.cpp). For
//    output o: start = o*s - p, end = min(start + k, i + p), pool_size = end - start (per dim,
//    multiplied), then start/end are clamped to [0, i). A window with no input element gives 0.
//    The divisor is divisor_override when given (0 raises "divisor must be not zero"), else
//    pool_size with count_include_pad, else the number of in-range elements.
//  - i64 is supported besides the floating types: the sum is exact and divided with C++'s
//    truncating division (torch: avg of [-1, -2, -3, -1] is -1); the backward adds
//    grad / divisor (truncated) to each window element.
//  - adaptive average pooling: window [floor(o*I/O), ceil((o+1)*I/O)) per dim, the mean; the
//    backward spreads grad / window size over the window. Floating types only.
// Sums are taken in double and rounded once.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "crucible/core/error.h"
#include "crucible/ops/destination.h"
#include "ops/families.h"
#include "ops/meta_fn.h"
#include "ops/pooling_internal.h"
#include "ops/samples.h"
#include "ops/util.h"

namespace crucible::pooling {
namespace {

using namespace samples;

// One output's window: clamped ranges and its divisor.
struct Window {
  int64_t lo[3], hi[3];
  int64_t divisor;
  bool empty;
};

Window avg_window(const Geo& g, const int64_t o[3], bool count_include_pad,
                  std::optional<int64_t> divisor_override) {
  Window w{};
  int64_t pool = 1, inside = 1;
  w.empty = false;
  for (int i = 0; i < 3; ++i) {
    int64_t a = o[i] * g.s[i] - g.p[i];
    int64_t b = std::min(a + g.k[i], g.in[i] + g.p[i]);
    pool *= b - a;
    a = std::max<int64_t>(a, 0);
    b = std::min(b, g.in[i]);
    w.lo[i] = a;
    w.hi[i] = b;
    if (a >= b) w.empty = true;
    inside *= std::max<int64_t>(b - a, 0);
  }
  w.divisor = divisor_override ? *divisor_override : count_include_pad ? pool : inside;
  return w;
}

Window adaptive_window(const Geo& g, const int64_t o[3]) {
  Window w{};
  w.divisor = 1;
  for (int i = 0; i < 3; ++i) {
    w.lo[i] = g.start(i, o[i]);
    w.hi[i] = g.end(i, o[i]);
    w.divisor *= w.hi[i] - w.lo[i];
  }
  w.empty = false;
  return w;
}

void unflatten(const Geo& g, int64_t o, int64_t out[3]) {
  out[2] = o % g.out[2];
  out[1] = (o / g.out[2]) % g.out[1];
  out[0] = o / (g.out[1] * g.out[2]);
}

template <typename Fn>
void for_each(const Geo& g, const Window& w, Fn fn) {
  for (int64_t a = w.lo[0]; a < w.hi[0]; ++a)
    for (int64_t b = w.lo[1]; b < w.hi[1]; ++b)
      for (int64_t c = w.lo[2]; c < w.hi[2]; ++c) fn((a * g.in[1] + b) * g.in[2] + c);
}

// Forward into `out`: sum(window) / divisor (0 for an empty window).
template <typename WindowFn>
void pool_forward(const Geo& g, const Tensor& self, const Tensor& out, WindowFn window_of) {
  const int64_t ip = g.in_plane(), op = g.out_plane();
  const bool exact = !is_floating(self.dtype());
  const opsutil::Doubles x = exact ? opsutil::Doubles() : opsutil::read_doubles(self);
  std::vector<double> y(exact ? 0 : static_cast<size_t>(out.numel()), 0.0);
  for (int64_t pl = 0; pl < g.planes; ++pl) {
    for (int64_t o = 0; o < op; ++o) {
      int64_t oo[3];
      unflatten(g, o, oo);
      const Window w = window_of(oo);
      if (w.empty) continue;  // 0 (the outputs start zero-filled; y too)
      if (exact) {
        int64_t sum = 0;
        for_each(g, w, [&](int64_t pos) { sum += self.get_int(pl * ip + pos); });
        out.set_int(pl * op + o, sum / w.divisor);
      } else {
        double sum = 0;
        for_each(g, w, [&](int64_t pos) { sum += x[pl * ip + pos]; });
        y[pl * op + o] = sum / static_cast<double>(w.divisor);
      }
    }
  }
  if (!exact) opsutil::write_doubles(out, y.data());
}

// Backward into `gi`: every window element gets grad / divisor.
template <typename WindowFn>
void pool_backward(const Geo& g, const Tensor& grad_out, const Tensor& self, const Tensor& gi,
                   WindowFn window_of) {
  const int64_t ip = g.in_plane(), op = g.out_plane();
  const bool exact = !is_floating(self.dtype());
  std::vector<double> acc(exact ? 0 : static_cast<size_t>(self.numel()), 0.0);
  std::vector<int64_t> iacc(exact ? static_cast<size_t>(self.numel()) : 0, 0);
  const opsutil::Doubles gv = exact ? opsutil::Doubles() : opsutil::read_doubles(grad_out);
  for (int64_t pl = 0; pl < g.planes; ++pl) {
    for (int64_t o = 0; o < op; ++o) {
      int64_t oo[3];
      unflatten(g, o, oo);
      const Window w = window_of(oo);
      if (w.empty) continue;
      if (exact) {
        const int64_t v = grad_out.get_int(pl * op + o) / w.divisor;
        for_each(g, w, [&](int64_t pos) { iacc[pl * ip + pos] += v; });
      } else {
        const double v = gv[pl * op + o] / static_cast<double>(w.divisor);
        for_each(g, w, [&](int64_t pos) { acc[pl * ip + pos] += v; });
      }
    }
  }
  if (exact)
    for (int64_t i = 0; i < gi.numel(); ++i) gi.set_int(i, iacc[i]);
  else
    opsutil::write_doubles(gi, acc.data());
}

std::optional<int64_t> divisor_of(const Value& v) {
  std::optional<int64_t> d = v.opt_int();
  if (d && *d == 0) op_error("divisor must be not zero");
  return d;
}

// The checked geometry of avg_pool{2,3}d.
Geo avg_pool_geo(const Args& a, int64_t nsp) {
  const Tensor& self = a.tensor("self");
  const std::string name = nsp == 2 ? "avg_pool2d" : "avg_pool3d";
  const Geo g = window_geo(name, self, nsp, a.value("kernel_size"), a.value("stride"),
                           a.value("padding"), nullptr, a.flag("ceil_mode"));
  divisor_of(a.value("divisor_override"));
  check_dtype(nsp == 2 ? "avg_pool2d" : "avg_pool3d_out_frame", self.dtype(), true);
  return g;
}

Values avg_pool_meta(const Args& a, int64_t nsp) {
  return {meta::fresh(avg_pool_geo(a, nsp).out_shape, a.tensor("self").dtype())};
}

// avg_pool{2,3}d into its output (meta: avg_pool_meta; the geometry worked out again).
void avg_pool_impl(const Args& a, const Values& out, int64_t nsp) {
  const Geo g = avg_pool_geo(a, nsp);
  const bool cip = a.flag("count_include_pad");
  const std::optional<int64_t> div = a.value("divisor_override").opt_int();
  pool_forward(g, a.tensor("self"), out.at(0).tensor(),
               [&](const int64_t o[3]) { return avg_window(g, o, cip, div); });
}

// The checked geometry of avg_pool{2,3}d_backward.
Geo avg_pool_backward_geo(const Args& a, int64_t nsp) {
  const Tensor& go = a.tensor("grad_output");
  const Tensor& self = a.tensor("self");
  const std::string name = nsp == 2 ? "avg_pool2d" : "avg_pool3d";
  const Geo g = window_geo(name, self, nsp, a.value("kernel_size"), a.value("stride"),
                           a.value("padding"), nullptr, a.flag("ceil_mode"));
  divisor_of(a.value("divisor_override"));
  check_dtype(nsp == 2 ? "avg_pool2d_backward_out_frame" : "avg_pool3d_backward_out_frame",
              self.dtype(), true);
  CRUCIBLE_CHECK(go.dtype() == self.dtype(),
                 "expected grad_output and self to have the same dtype");
  check_shape(go, g.out_shape, "grad_output");
  return g;
}

// grad_input of a pooling backward: self's shape, grad_output's dtype.
Values backward_meta(const Args& a) {
  return {meta::fresh(a.tensor("self").shape(), a.tensor("grad_output").dtype())};
}

// avg_pool{2,3}d_backward into grad_input (meta: avg_pool_backward_geo, backward_meta).
void avg_pool_backward_impl(const Args& a, const Values& out, int64_t nsp) {
  const Geo g = avg_pool_backward_geo(a, nsp);
  const bool cip = a.flag("count_include_pad");
  const std::optional<int64_t> div = a.value("divisor_override").opt_int();
  pool_backward(g, a.tensor("grad_output"), a.tensor("self"), out.at(0).tensor(),
                [&](const int64_t o[3]) { return avg_window(g, o, cip, div); });
}

// The checked geometry of _adaptive_avg_pool{2,3}d.
Geo adaptive_avg_geo(const Args& a, int64_t nsp) {
  const Tensor& self = a.tensor("self");
  const std::string name = nsp == 2 ? "adaptive_avg_pool2d" : "adaptive_avg_pool3d";
  const Geo g = adaptive_geo(name, self, nsp, a.value("output_size"));
  check_dtype(nsp == 2 ? "adaptive_avg_pool2d" : "adaptive_avg_pool3d_cpu", self.dtype(), false);
  return g;
}

Values adaptive_avg_meta(const Args& a, int64_t nsp) {
  return {meta::fresh(adaptive_avg_geo(a, nsp).out_shape, a.tensor("self").dtype())};
}

void adaptive_avg_impl(const Args& a, const Values& out, int64_t nsp) {
  const Geo g = adaptive_avg_geo(a, nsp);
  pool_forward(g, a.tensor("self"), out.at(0).tensor(),
               [&](const int64_t o[3]) { return adaptive_window(g, o); });
}

// The checked geometry of _adaptive_avg_pool{2,3}d_backward.
Geo adaptive_avg_backward_geo(const Args& a, int64_t nsp) {
  const Tensor& go = a.tensor("grad_output");
  const Tensor& self = a.tensor("self");
  const std::string name =
      nsp == 2 ? "adaptive_avg_pool2d_backward" : "adaptive_avg_pool3d_backward";
  CRUCIBLE_CHECK(go.dim() == self.dim(),
                 name + "(): grad_output and self must have the same number of dims");
  std::vector<int64_t> os;
  for (int64_t i = nsp; i >= 1; --i) {
    if (go.size(-i) == 0) {
      op_error(name +
               "(): Expected grad_output to have non-zero size for non-batch dimensions, "
               "but grad_output has sizes " +
               shape_str(go.shape()) + " with dimension " + std::to_string(go.dim() - i) +
               " being empty");
    }
    os.push_back(go.size(-i));
  }
  const Geo g =
      adaptive_geo(nsp == 2 ? "adaptive_avg_pool2d" : "adaptive_avg_pool3d", self, nsp, Value(os));
  check_dtype(name, self.dtype(), false);
  CRUCIBLE_CHECK(go.dtype() == self.dtype(),
                 "expected grad_output and self to have the same dtype");
  check_shape(go, g.out_shape, "grad_output");
  return g;
}

void adaptive_avg_backward_impl(const Args& a, const Values& out, int64_t nsp) {
  const Geo g = adaptive_avg_backward_geo(a, nsp);
  pool_backward(g, a.tensor("grad_output"), a.tensor("self"), out.at(0).tensor(),
                [&](const int64_t o[3]) { return adaptive_window(g, o); });
}

// An output averages up to prod(k) elements (forward) and a grad_input element collects up to
// prod(ceil(k/s)) windows (backward): sqrt of the window volume bounds both.
std::function<double(const Values&)> window_tol(Schema schema) {
  return [schema = std::move(schema)](const Values& values) {
    const Args a(values, schema);
    if (a.size() <= a.index("kernel_size") || a.value("kernel_size").kind() != ValueKind::IntList)
      return 1.0;
    double v = 1;
    for (int64_t k : a.ints("kernel_size")) v *= static_cast<double>(std::max<int64_t>(k, 1));
    return std::sqrt(v);
  };
}

// Adaptive windows span at most ceil(I/O) + 1 elements per dim.
std::function<double(const Values&)> adaptive_tol(Schema schema, int64_t nsp, bool backward) {
  return [schema = std::move(schema), nsp, backward](const Values& values) {
    const Args a(values, schema);
    if (a.size() < 2 || !a.value("self").is_tensor()) return 1.0;
    const Tensor& self = a.tensor("self");
    std::vector<int64_t> os;
    if (backward) {
      if (!a.value("grad_output").is_tensor() || a.tensor("grad_output").dim() < nsp) return 1.0;
      for (int64_t i = nsp; i >= 1; --i) os.push_back(a.tensor("grad_output").size(-i));
    } else {
      if (a.value("output_size").kind() != ValueKind::IntList) return 1.0;
      os = a.ints("output_size");
    }
    if (self.dim() < nsp || static_cast<int64_t>(os.size()) != nsp) return 1.0;
    double v = 1;
    for (int64_t i = 0; i < nsp; ++i) {
      const int64_t in = self.size(self.dim() - nsp + i), o = std::max<int64_t>(os[i], 1);
      v *= static_cast<double>((backward ? (o + in - 1) / in : (in + o - 1) / o) + 1);
    }
    return std::sqrt(v);
  };
}

Cost avg_cost(const Args& a, const Values& out) {
  Cost c;
  for (const Value& v : a.values()) c.bytes += bytes_of(v);  // every argument
  for (const Value& v : out) c.bytes += bytes_of(v);
  // The first argument: grad_output of a backward, self of a forward.
  const char* first = a.has("grad_output") ? "grad_output" : "self";
  if (a.size() > 0 && a.value(first).is_tensor())
    c.flops = static_cast<double>(a.tensor(first).numel());
  return c;
}

// ---- samples ----

struct Avg {
  std::string label;
  Shape x;
  std::vector<int64_t> k, s, p;
  bool ceil = false, cip = true;
  std::optional<int64_t> div;
  std::optional<Shape> strides;
};

Shape avg_out(const Avg& w, size_t nsp) {
  Shape out(w.x.begin(), w.x.end() - static_cast<int64_t>(nsp));
  auto at = [](const std::vector<int64_t>& v, size_t i, int64_t dflt) {
    return v.empty() ? dflt : v.size() == 1 ? v[0] : v[i];
  };
  for (size_t i = 0; i < nsp; ++i) {
    const int64_t k = at(w.k, i, 1);
    out.push_back(
        pooled_size(w.x[w.x.size() - nsp + i], k, at(w.s, i, k), at(w.p, i, 0), 1, w.ceil));
  }
  return out;
}

// A call of avg_pool{nsp}d (or its backward, with grad_output of the output's shape).
Sample avg_sample(int64_t nsp, const std::string& label, const Avg& w, DType t, bool backward,
                  const std::string& fill = "") {
  Literal x = w.strides ? T(w.x, t, *w.strides) : T(w.x, t);
  const Literal div = w.div ? I(*w.div) : None();
  if (!backward) {
    if (!fill.empty()) x.tensor.fill = fill;
    return make(label, {x, L(w.k), L(w.s), L(w.p), B(w.ceil), B(w.cip), div});
  }
  Literal go = T(avg_out(w, static_cast<size_t>(nsp)), t);
  if (!fill.empty()) go.tensor.fill = fill;
  return make(label, {go, x, L(w.k), L(w.s), L(w.p), B(w.ceil), B(w.cip), div});
}

std::vector<Avg> avg_wins(int64_t nsp) {
  if (nsp == 3) {
    return {
        {"3-d 2x2x2", {2, 2, 4, 5, 4}, {2, 2, 2}, {2, 2, 2}, {0, 1, 0}, false, true, {}, {}},
        {"3-d padding, count_include_pad=False",
         {1, 2, 5, 4, 5},
         {3, 2, 3},
         {2, 1, 2},
         {1, 1, 1},
         false,
         false,
         {},
         {}},
        {"3-d ceil_mode, divisor_override",
         {1, 2, 5, 5, 6},
         {2, 3, 2},
         {2, 2, 2},
         {1, 1, 0},
         true,
         true,
         5,
         {}},
        {"3-d unbatched", {2, 3, 4, 4}, {3}, {2}, {1}, false, true, {}, {}},
        {"3-d channels-last",
         {2, 3, 3, 4, 4},
         {2, 2, 2},
         {1, 1, 1},
         {1, 1, 1},
         false,
         true,
         {},
         Shape{144, 1, 48, 12, 3}},
    };
  }
  return {
      {"3x3/2 padding 1", {2, 3, 7, 8}, {3, 3}, {2, 2}, {1, 1}, false, true, {}, {}},
      {"count_include_pad=False", {2, 3, 7, 8}, {3, 3}, {2, 2}, {1, 1}, false, false, {}, {}},
      {"divisor_override 4", {2, 2, 6, 7}, {3, 2}, {1, 2}, {1, 1}, false, true, 4, {}},
      {"ceil_mode", {1, 2, 6, 7}, {3, 3}, {2, 2}, {0, 0}, true, true, {}, {}},
      {"ceil_mode, padding, count_include_pad=False",
       {1, 2, 5, 5},
       {2, 2},
       {2, 2},
       {1, 1},
       true,
       false,
       {},
       {}},
      {"ceil_mode, padding, count_include_pad",
       {1, 2, 6, 5},
       {3, 2},
       {2, 2},
       {1, 1},
       true,
       true,
       {},
       {}},
      {"unbatched", {3, 6, 6}, {2, 2}, {2, 2}, {0, 0}, false, true, {}, {}},
      {"channels-last", {2, 3, 6, 5}, {3, 2}, {1, 1}, {1, 1}, false, true, {}, Shape{90, 1, 15, 3}},
      {"sliced input",
       {2, 2, 5, 6},
       {2, 2},
       {1, 2},
       {1, 0},
       false,
       true,
       {},
       Shape{120, 60, 12, 2}},
      {"single values for every dim", {2, 2, 7, 6}, {3}, {2}, {1}, false, true, {}, {}},
  };
}

std::vector<Sample> avg_samples(const SampleContext& ctx, int64_t nsp, bool backward) {
  std::vector<Sample> out;
  const DType f32 = DType::Float32;
  if (ctx.performance) {
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16}) {
      if (nsp == 2) {
        out.push_back(avg_sample(
            nsp, "2x2/2 [128, 512, 24, 24] " + dtype_code_str(t),
            {"", {128, 512, 24, 24}, {2, 2}, {2, 2}, {0, 0}, true, false, {}, {}}, t, backward));
        out.push_back(avg_sample(
            nsp, "3x3/1 padding 1 [32, 192, 56, 56] " + dtype_code_str(t),
            {"", {32, 192, 56, 56}, {3, 3}, {1, 1}, {1, 1}, false, false, {}, {}}, t, backward));
      } else {
        out.push_back(avg_sample(
            nsp, "3-d 2x2x2 [8, 64, 16, 56, 56] " + dtype_code_str(t),
            {"", {8, 64, 16, 56, 56}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, false, true, {}, {}}, t,
            backward));
      }
    }
    return out;
  }
  const std::vector<Avg> wins = avg_wins(nsp);
  for (const Avg& w : wins) out.push_back(avg_sample(nsp, w.label + " f32", w, f32, backward));
  for (DType t : {DType::Float64, DType::Float16, DType::BFloat16, DType::Int64}) {
    out.push_back(avg_sample(nsp, wins[0].label + " " + dtype_code_str(t), wins[0], t, backward));
    if (is_floating(t))
      out.push_back(
          avg_sample(nsp, "special values " + dtype_code_str(t), wins[1], t, backward, "special"));
  }
  out.push_back(avg_sample(nsp, "count_include_pad=False i64 (truncating division)", wins[1],
                           DType::Int64, backward));
  out.push_back(avg_sample(nsp, "special values f32", wins[0], f32, backward, "special"));
  {
    Avg w = wins[0];
    w.x[0] = 0;
    out.push_back(avg_sample(nsp, "empty batch", w, f32, backward));
  }
  if (!backward) {
    const Avg& w = wins[0];
    out.push_back(make("defaults (kernel only)", {T(w.x, f32), L(w.k)}));
    out.push_back(
        make("keywords", {T(w.x, f32), L(w.k)},
             {{"padding", L({1})}, {"count_include_pad", B(false)}, {"divisor_override", I(3)}}));
  }
  auto rep = [nsp](int64_t v) { return std::vector<int64_t>(static_cast<size_t>(nsp), v); };
  const Shape x = nsp == 2 ? Shape{1, 2, 5, 5} : Shape{1, 2, 5, 5, 5};
  auto err = [&](const std::string& label, Avg w, DType t = DType::Float32) {
    if (w.x.empty()) w.x = x;
    if (!backward) {
      out.push_back(avg_sample(nsp, "error: " + label, w, t, false));
      return;
    }
    // grad_output from a valid geometry (the bad one may not have an output size at all).
    Sample s = avg_sample(nsp, "error: " + label,
                          {"", x, rep(2), rep(2), rep(0), false, true, {}, {}}, t, true);
    // The case's positional literals, as the schema orders them: self, kernel_size, stride,
    // padding, divisor_override.
    s.call.args[1] = T(w.x, t);
    s.call.args[2] = L(w.k);
    s.call.args[3] = L(w.s);
    s.call.args[4] = L(w.p);
    s.call.args[7] = w.div ? I(*w.div) : None();
    out.push_back(s);
  };
  err("padding more than half the kernel", {"", {}, rep(3), rep(1), rep(2), false, true, {}, {}});
  err("kernel 0", {"", {}, rep(0), rep(1), rep(0), false, true, {}, {}});
  err("stride 0", {"", {}, rep(2), rep(0), rep(0), false, true, {}, {}});
  err("divisor_override 0", {"", {}, rep(2), rep(2), rep(0), false, true, 0, {}});
  err("kernel larger than the input", {"", {}, rep(6), rep(1), rep(0), false, true, {}, {}});
  {
    Shape e = x;
    e[1] = 0;
    err("empty channels", {"", e, rep(2), rep(2), rep(0), false, true, {}, {}});
  }
  err("kernel_size with too many values", {"",
                                           {},
                                           std::vector<int64_t>(static_cast<size_t>(nsp + 1), 2),
                                           {},
                                           rep(0),
                                           false,
                                           true,
                                           {},
                                           {}});
  err("bool", {"", {}, rep(2), rep(2), rep(0), false, true, {}, {}}, DType::Bool);
  err("i32", {"", {}, rep(2), rep(2), rep(0), false, true, {}, {}}, DType::Int32);
  if (backward) {
    Sample s = avg_sample(nsp, "error: grad_output of the wrong size",
                          {"", x, rep(2), rep(2), rep(0), false, true, {}, {}}, f32, true);
    s.call.args[0] = T(x, f32);  // grad_output, the first positional literal
    out.push_back(s);
  }
  return out;
}

std::vector<Sample> adaptive_avg_samples(const SampleContext& ctx, int64_t nsp, bool backward) {
  std::vector<Sample> out;
  const DType f32 = DType::Float32;
  auto one = [&](const std::string& label, const Shape& x, std::vector<int64_t> os, DType t,
                 const std::string& fill = "", std::optional<Shape> strides = std::nullopt) {
    Literal xl = strides ? T(x, t, *strides) : T(x, t);
    if (!backward) {
      if (!fill.empty()) xl.tensor.fill = fill;
      out.push_back(make(label, {xl, L(os)}));
      return;
    }
    Shape o(x.begin(), x.end() - nsp);
    o.insert(o.end(), os.begin(), os.end());
    Literal go = T(o, t);
    if (!fill.empty()) go.tensor.fill = fill;
    out.push_back(make(label, {go, xl}));
  };
  if (ctx.performance) {
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16}) {
      if (nsp == 2) {
        one("global [128, 2048, 7, 7] -> 1x1 " + dtype_code_str(t), {128, 2048, 7, 7}, {1, 1}, t);
        one("[64, 512, 14, 14] -> 7x7 " + dtype_code_str(t), {64, 512, 14, 14}, {7, 7}, t);
      } else {
        one("3-d global [16, 512, 8, 14, 14] -> 1x1x1 " + dtype_code_str(t), {16, 512, 8, 14, 14},
            {1, 1, 1}, t);
      }
    }
    return out;
  }
  if (nsp == 2) {
    one("7x9 -> 3x4 f32", {2, 3, 7, 9}, {3, 4}, f32);
    one("global (1x1)", {2, 3, 5, 4}, {1, 1}, f32);
    one("output larger than input", {1, 2, 3, 2}, {5, 4}, f32);
    one("same size", {1, 2, 4, 4}, {4, 4}, f32);
    one("unbatched", {3, 5, 6}, {2, 3}, f32);
    one("channels-last", {2, 3, 6, 5}, {4, 2}, f32, "", Shape{90, 1, 15, 3});
    if (!backward) one("output size 0", {1, 2, 4, 4}, {0, 2}, f32);
    one("empty batch", {0, 3, 4, 4}, {2, 2}, f32);
    for (DType t : {DType::Float64, DType::Float16, DType::BFloat16}) {
      one("7x9 -> 3x4 " + dtype_code_str(t), {2, 3, 7, 9}, {3, 4}, t);
      one("special values " + dtype_code_str(t), {2, 3, 7, 9}, {3, 4}, t, "special");
    }
    one("special values f32", {2, 3, 7, 9}, {3, 4}, f32, "special");
  } else {
    one("3-d 5x7x6 -> 2x3x4 f32", {2, 2, 5, 7, 6}, {2, 3, 4}, f32);
    one("3-d global", {2, 3, 3, 4, 5}, {1, 1, 1}, f32);
    one("3-d output larger than input", {1, 2, 2, 3, 2}, {3, 4, 3}, f32);
    one("3-d unbatched", {2, 4, 5, 3}, {2, 2, 2}, f32);
    one("3-d channels-last", {2, 3, 3, 4, 4}, {2, 3, 2}, f32, "", Shape{144, 1, 48, 12, 3});
    one("3-d empty batch", {0, 2, 3, 3, 3}, {2, 2, 2}, f32);
    for (DType t : {DType::Float64, DType::Float16, DType::BFloat16}) {
      one("3-d " + dtype_code_str(t), {2, 2, 5, 7, 6}, {2, 3, 4}, t);
      one("3-d special values " + dtype_code_str(t), {2, 2, 5, 7, 6}, {2, 3, 4}, t, "special");
    }
    one("3-d special values f32", {2, 2, 5, 7, 6}, {2, 3, 4}, f32, "special");
  }
  const Shape x = nsp == 2 ? Shape{1, 2, 4, 4} : Shape{1, 2, 4, 4, 4};
  const std::vector<int64_t> os(static_cast<size_t>(nsp), 2);
  Shape e = x;
  e[1] = 0;
  if (!backward) {
    out.push_back(make("error: output_size with too few values", {T(x, f32), L({2})}));
    out.push_back(make("error: too few dims", {T(Shape(x.begin() + 2, x.end()), f32), L(os)}));
    out.push_back(make("error: empty channels", {T(e, f32), L(os)}));
    out.push_back(
        make("error: negative output size", {T(x, f32), L(std::vector<int64_t>(os.size(), -1))}));
    out.push_back(make("error: i64", {T(x, DType::Int64), L(os)}));
  } else {
    Shape eo = e;
    for (int64_t i = 0; i < nsp; ++i) eo[2 + i] = 2;
    out.push_back(make("error: empty channels", {T(eo, f32), T(e, f32)}));
    out.push_back(make("error: i64", {T(eo, DType::Int64), T(x, DType::Int64)}));
    Shape go = x;
    for (int64_t i = 0; i < nsp; ++i) go[2 + i] = 2;
    Shape empty_go = go;
    empty_go[2] = 0;
    out.push_back(
        make("error: grad_output with an empty spatial dim", {T(empty_go, f32), T(x, f32)}));
    out.push_back(make("error: grad_output dtype differs", {T(go, DType::Float64), T(x, f32)}));
  }
  return out;
}

}  // namespace

void register_pooling_avg_ops(OpRegistry& r) {
  const std::vector<DType> avg_dtypes = {DType::Float16, DType::BFloat16, DType::Float32,
                                         DType::Float64, DType::Int64};
  for (int64_t nsp : {2, 3}) {
    const std::string n = std::to_string(nsp);
    {
      OpDef op =
          OpDef::from_schema("aten::avg_pool" + n + "d(Tensor self, int[" + n +
                                 "] kernel_size, int[" + n + "] stride=[], int[" + n +
                                 "] padding=0, bool ceil_mode=False, bool "
                                 "count_include_pad=True, int? divisor_override=None) -> Tensor",
                             "pooling");
      op.dtypes = avg_dtypes;
      op.meta = [nsp](const Args& a) { return avg_pool_meta(a, nsp); };
      op.ref = structured_ref(
          op.meta, [nsp](const Args& a, const Values& out) { avg_pool_impl(a, out, nsp); });
      op.samples = [nsp](const SampleContext& c) { return avg_samples(c, nsp, false); };
      op.cost = avg_cost;
      op.compare.tol_scale = window_tol(op.schema);
      r.add(std::move(op));
    }
    {
      OpDef op = OpDef::from_schema("aten::avg_pool" + n +
                                        "d_backward(Tensor grad_output, Tensor self, int[" + n +
                                        "] kernel_size, int[" + n + "] stride, int[" + n +
                                        "] padding, bool ceil_mode, bool "
                                        "count_include_pad, int? divisor_override) -> Tensor",
                                    "pooling");
      op.dtypes = avg_dtypes;
      op.meta = [nsp](const Args& a) {
        avg_pool_backward_geo(a, nsp);
        return backward_meta(a);
      };
      op.ref = structured_ref(op.meta, [nsp](const Args& a, const Values& out) {
        avg_pool_backward_impl(a, out, nsp);
      });
      op.samples = [nsp](const SampleContext& c) { return avg_samples(c, nsp, true); };
      op.cost = avg_cost;
      op.compare.tol_scale = window_tol(op.schema);
      r.add(std::move(op));
    }
    {
      OpDef op = OpDef::from_schema("aten::_adaptive_avg_pool" + n + "d(Tensor self, SymInt[" + n +
                                        "] output_size) -> Tensor",
                                    "pooling");
      op.dtypes = floating_dtypes();
      op.meta = [nsp](const Args& a) { return adaptive_avg_meta(a, nsp); };
      op.ref = structured_ref(
          op.meta, [nsp](const Args& a, const Values& out) { adaptive_avg_impl(a, out, nsp); });
      op.samples = [nsp](const SampleContext& c) { return adaptive_avg_samples(c, nsp, false); };
      op.cost = avg_cost;
      op.compare.tol_scale = adaptive_tol(op.schema, nsp, false);
      r.add(std::move(op));
    }
    {
      OpDef op = OpDef::from_schema(
          "aten::_adaptive_avg_pool" + n + "d_backward(Tensor grad_output, Tensor self) -> Tensor",
          "pooling");
      op.dtypes = floating_dtypes();
      op.meta = [nsp](const Args& a) {
        adaptive_avg_backward_geo(a, nsp);
        return backward_meta(a);
      };
      op.ref = structured_ref(op.meta, [nsp](const Args& a, const Values& out) {
        adaptive_avg_backward_impl(a, out, nsp);
      });
      op.samples = [nsp](const SampleContext& c) { return adaptive_avg_samples(c, nsp, true); };
      op.cost = avg_cost;
      op.compare.tol_scale = adaptive_tol(op.schema, nsp, true);
      r.add(std::move(op));
    }
  }
}

}  // namespace crucible::pooling
