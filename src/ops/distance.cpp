// Distances: aten._cdist_forward.default, aten._pdist_forward.default.
//
// Reference semantics (PyTorch 2.x, CPU; Distance.cpp, cpu/DistanceOpsKernel.cpp):
//  - _cdist_forward(x1 [B.., P, M], x2 [B.., R, M], p, compute_mode) -> [B.., P, R]; batch dims
//    broadcast. Checks: both at least 2-D ("cdist only supports at least 2D tensors, X1 got:
//    1D"), same M ("X1 and X2 must have the same number of columns. X1: 3 X2: 4"), floating
//    ("cdist only supports floating-point dtypes, X1 got: Long"), p >= 0 ("cdist only supports
//    non-negative p values"), compute_mode None/0/1/2 ("possible modes: 0, 1, 2, but was: 3"),
//    same dtypes. Only f32 and f64 are implemented ("cdist" not implemented for 'Half').
//  - P = 0 or R = 0 gives an empty result, M = 0 zeros.
//  - p = 0: the number of differing coordinates (a NaN difference gives NaN); p = 1: sum |d|;
//    p = 2: sqrt(sum d^2); p = inf: max |d| where NaN differences are ignored (std::max keeps
//    the running maximum, which starts at 0); other p: (sum |d|^p)^(1/p). inf - inf is NaN.
//  - p = 2 goes through a matrix product (_euclidean_dist: sqrt(clamp_min(|x1|^2 + |x2|^2 -
//    2 x1.x2, 1e-30))) when compute_mode is 1, or None/0 with P > 25 or R > 25; the reference
//    computes that formula in double on those calls (an inf coordinate then gives NaN), and the
//    direct formula otherwise.
//  - _pdist_forward(self [N, M], p=2): the distances of the pairs i < j in row-major order,
//    [N (N - 1) / 2]; self must be 2-D ("pdist only supports 2D tensors, got: 3D") and
//    contiguous ("_pdist_forward requires contiguous input"), floating f32/f64.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/ops/destination.h"
#include "ops/families.h"
#include "ops/meta_fn.h"
#include "ops/samples.h"
#include "ops/statistics_internal.h"
#include "ops/util.h"

namespace crucible {
namespace {

using namespace samples;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Distance of two rows given as accessors a(k), b(k), k < m.
template <typename A, typename B>
double distance(const A& a, const B& b, int64_t m, double p) {
  double acc = 0;
  for (int64_t k = 0; k < m; ++k) {
    const double d = std::fabs(a(k) - b(k));
    if (p == 0) {
      acc += std::isnan(d) ? kNaN : (d != 0 ? 1.0 : 0.0);
    } else if (p == 1) {
      acc += d;
    } else if (p == 2) {
      acc += d * d;
    } else if (std::isinf(p)) {
      if (d > acc) acc = d;  // NaN ignored, as std::max(acc, d)
    } else {
      acc += std::pow(d, p);
    }
  }
  if (p == 0 || p == 1 || std::isinf(p)) return acc;
  if (p == 2) return std::sqrt(acc);
  return std::pow(acc, 1.0 / p);
}

template <typename A, typename B>
double euclidean_mm(const A& a, const B& b, int64_t m) {
  double aa = 0, bb = 0, ab = 0;
  for (int64_t k = 0; k < m; ++k) {
    aa += a(k) * a(k);
    bb += b(k) * b(k);
    ab += a(k) * b(k);
  }
  const double d2 = aa + bb - 2 * ab;
  return std::sqrt(std::isnan(d2) ? d2 : std::max(d2, 1e-30));
}

bool distance_dtype(DType t) { return t == DType::Float32 || t == DType::Float64; }

// _cdist_forward's checks (the kernel's dtype only where there is something to compute); the
// output's shape [B.., P, R].
Shape cdist_shape(const Args& a) {
  const Tensor& x1 = a.tensor("x1");
  const Tensor& x2 = a.tensor("x2");
  const double p = a.real("p");
  const std::optional<int64_t> mode = a.opt_integer("compute_mode");
  if (x1.dim() < 2)
    op_error("cdist only supports at least 2D tensors, X1 got: " + std::to_string(x1.dim()) + "D");
  if (x2.dim() < 2)
    op_error("cdist only supports at least 2D tensors, X2 got: " + std::to_string(x2.dim()) + "D");
  if (x1.size(-1) != x2.size(-1))
    op_error("X1 and X2 must have the same number of columns. X1: " + std::to_string(x1.size(-1)) +
             " X2: " + std::to_string(x2.size(-1)));
  if (!is_floating(x1.dtype()))
    op_error("cdist only supports floating-point dtypes, X1 got: " + scalar_type_name(x1.dtype()));
  if (!is_floating(x2.dtype()))
    op_error("cdist only supports floating-point dtypes, X2 got: " + scalar_type_name(x2.dtype()));
  if (!(p >= 0)) op_error("cdist only supports non-negative p values");
  if (mode && (*mode < 0 || *mode > 2))
    op_error("possible modes: 0, 1, 2, but was: " + std::to_string(*mode));
  if (x1.dtype() != x2.dtype())
    op_error("expected scalar type " + scalar_type_name(x1.dtype()) + " but found " +
             scalar_type_name(x2.dtype()));
  const int64_t r1 = x1.size(-2), r2 = x2.size(-2);
  const Shape b1(x1.shape().begin(), x1.shape().end() - 2);
  const Shape b2(x2.shape().begin(), x2.shape().end() - 2);
  Shape out_shape = broadcast_shapes(b1, b2);
  out_shape.push_back(r1);
  out_shape.push_back(r2);
  if (numel_of(out_shape) != 0 && !distance_dtype(x1.dtype()))
    not_implemented_for("cdist", x1.dtype());
  return out_shape;
}

// _cdist_forward into its output (zero-filled; meta: cdist_shape). The operands are read once
// into f64 (broadcast over the batch dims first).
void cdist_impl(const Args& a, const Values& outs) {
  const Tensor& x1 = a.tensor("x1");
  const Tensor& x2 = a.tensor("x2");
  const double p = a.real("p");
  const std::optional<int64_t> mode = a.opt_integer("compute_mode");
  const Tensor& out = outs.at(0).tensor();
  const Shape& out_shape = out.shape();
  const Shape batch(out_shape.begin(), out_shape.end() - 2);
  const int64_t r1 = x1.size(-2), r2 = x2.size(-2), m = x1.size(-1);
  const int64_t nb = numel_of(batch);
  if (r1 == 0 || r2 == 0 || nb == 0 || m == 0) return;
  const bool mm =
      p == 2 && (mode.value_or(0) == 1 || (mode.value_or(0) == 0 && (r1 > 25 || r2 > 25)));
  Shape full1 = batch, full2 = batch;
  full1.insert(full1.end(), {r1, m});
  full2.insert(full2.end(), {r2, m});
  const opsutil::Doubles e1 = opsutil::read_doubles(x1.expand(full1));
  const opsutil::Doubles e2 = opsutil::read_doubles(x2.expand(full2));
  std::vector<double> d(static_cast<size_t>(out.numel()));
  for (int64_t b = 0; b < nb; ++b) {
    for (int64_t i = 0; i < r1; ++i) {
      for (int64_t j = 0; j < r2; ++j) {
        auto fa = [&](int64_t k) { return e1[static_cast<size_t>((b * r1 + i) * m + k)]; };
        auto fb = [&](int64_t k) { return e2[static_cast<size_t>((b * r2 + j) * m + k)]; };
        d[static_cast<size_t>((b * r1 + i) * r2 + j)] =
            mm ? euclidean_mm(fa, fb, m) : distance(fa, fb, m, p);
      }
    }
  }
  opsutil::write_doubles(out, d.data());
}

// _pdist_forward's checks (the kernel's dtype only where there are pairs); the number of pairs.
int64_t pdist_pairs(const Args& a) {
  const Tensor& self = a.tensor("self");
  if (self.dim() != 2)
    op_error("pdist only supports 2D tensors, got: " + std::to_string(self.dim()) + "D");
  if (!self.is_contiguous()) op_error("_pdist_forward requires contiguous input");
  if (!is_floating(self.dtype())) op_error("pdist only supports floating-point dtypes");
  const int64_t n = self.size(0);
  if (n > 1 && !distance_dtype(self.dtype())) not_implemented_for("pdist", self.dtype());
  return n > 1 ? n * (n - 1) / 2 : 0;
}

// _pdist_forward into its output (zero-filled; meta: pdist_pairs).
void pdist_impl(const Args& a, const Values& outs) {
  const Tensor& self = a.tensor("self");
  const double p = a.real("p");
  const int64_t n = self.size(0), m = self.size(1);
  if (n <= 1 || m == 0) return;
  const opsutil::Doubles x = opsutil::read_doubles(self);
  std::vector<double> d(static_cast<size_t>(outs.at(0).tensor().numel()));
  size_t o = 0;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = i + 1; j < n; ++j) {
      auto fa = [&](int64_t k) { return x[static_cast<size_t>(i * m + k)]; };
      auto fb = [&](int64_t k) { return x[static_cast<size_t>(j * m + k)]; };
      d[o++] = distance(fa, fb, m, p);
    }
  }
  opsutil::write_doubles(outs.at(0).tensor(), d.data());
}

// Each distance folds M terms: sqrt(M) widening; the matrix-product path of p = 2 loses a few
// more bits to cancellation, hence a factor 4.
ComparePolicy distance_compare() {
  ComparePolicy c;
  // Inherently positional: a comparison policy sees the plain values; x1 (cdist) and self
  // (pdist) come first.
  c.tol_scale = [](const Values& a) {
    if (a.empty() || !a[0].is_tensor() || a[0].tensor().dim() < 1) return 1.0;
    return 4.0 * std::sqrt(static_cast<double>(std::max<int64_t>(a[0].tensor().size(-1), 1)));
  };
  return c;
}

Cost cdist_cost(const Args& a, const Values& out) {
  Cost c = stats::read_write_cost(a, out, 0);
  if (a.size() > a.index("x2") && a.value("x2").is_tensor()) {
    const Tensor& x2 = a.tensor("x2");
    c.bytes += static_cast<double>(x2.numel()) * static_cast<double>(x2.itemsize());
    if (!out.empty() && out[0].is_tensor() && x2.dim() >= 1)
      c.flops =
          3.0 * static_cast<double>(out[0].tensor().numel()) * static_cast<double>(x2.size(-1));
  }
  return c;
}

Cost pdist_cost(const Args& a, const Values& out) {
  Cost c = stats::read_write_cost(a, out, 0);
  if (!out.empty() && out[0].is_tensor() && a.size() > a.index("self") &&
      a.value("self").is_tensor() && a.tensor("self").dim() == 2)
    c.flops = 3.0 * static_cast<double>(out[0].tensor().numel()) *
              static_cast<double>(a.tensor("self").size(1));
  return c;
}

std::vector<Sample> cdist_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  const DType f32 = DType::Float32, f64 = DType::Float64;
  const double inf = kInf;
  if (ctx.performance) {
    out.push_back(make("p=2 mm [4, 512, 64] x [4, 512, 64] f32",
                       {T({4, 512, 64}, f32), T({4, 512, 64}, f32), F(2.0), None()}));
    out.push_back(make("p=2 direct [512, 64] x [1024, 64] f32",
                       {T({512, 64}, f32), T({1024, 64}, f32), F(2.0), I(2)}));
    out.push_back(make("p=1 [512, 64] x [1024, 64] f32",
                       {T({512, 64}, f32), T({1024, 64}, f32), F(1.0), None()}));
    return out;
  }
  for (DType t : {f32, f64}) {
    for (double p : {0.0, 1.0, 2.0, 3.0, 0.5, inf}) {
      const std::string ps = std::isinf(p) ? "inf" : std::to_string(p).substr(0, 3);
      out.push_back(
          make("p=" + ps + " " + dtype_code_str(t), {T({5, 4}, t), T({6, 4}, t), F(p), None()}));
    }
  }
  out.push_back(make("p=2 mm path (P > 25)", {T({30, 5}, f32), T({7, 5}, f32), F(2.0), None()}));
  out.push_back(make("p=2 compute_mode 1 (mm)", {T({5, 8}, f32), T({6, 8}, f32), F(2.0), I(1)}));
  out.push_back(
      make("p=2 compute_mode 2 (direct), P > 25", {T({30, 5}, f32), T({7, 5}, f32), F(2.0), I(2)}));
  out.push_back(make("p=2 compute_mode 0", {T({5, 3}, f64), T({4, 3}, f64), F(2.0), I(0)}));
  out.push_back(make("p=1 with P > 25", {T({30, 3}, f32), T({4, 3}, f32), F(1.0), None()}));
  out.push_back(make("batched", {T({2, 4, 3}, f32), T({2, 5, 3}, f32), F(2.0), None()}));
  out.push_back(make("batch broadcast", {T({2, 1, 4, 3}, f32), T({3, 5, 3}, f32), F(1.0), None()}));
  out.push_back(make("transposed x1", {T_transposed(5, 3, f32), T({4, 3}, f32), F(2.0), None()}));
  out.push_back(
      make("expanded x2 (stride 0)", {T({4, 3}, f32), T({5, 3}, f32, {0, 1}), F(2.0), None()}));
  out.push_back(make("sliced x1", {T({3, 4}, f32, {10, 2}), T({2, 4}, f32), F(3.0), None()}));
  out.push_back(make("empty P", {T({0, 3}, f32), T({4, 3}, f32), F(2.0), None()}));
  out.push_back(make("empty M gives zeros", {T({2, 0}, f32), T({3, 0}, f32), F(2.0), None()}));
  out.push_back(make("empty batch", {T({0, 2, 3}, f32), T({0, 4, 3}, f32), F(2.0), None()}));
  // Special values in f64, where ATen's kernels compute in the reference's precision (an f32
  // kernel overflows d * d where the f64 reference does not).
  for (double p : {0.0, 1.0, 2.0, 3.0, inf}) {
    const std::string ps = std::isinf(p) ? "inf" : std::to_string(static_cast<int>(p));
    out.push_back(make("special values p=" + ps, {T_fill({4, 6}, f64, "special"),
                                                  T_fill({5, 6}, f64, "special"), F(p), None()}));
  }
  out.push_back(make("special values, mm path",
                     {T_fill({4, 6}, f64, "special"), T({5, 6}, f64), F(2.0), I(1)}));
  out.push_back(make("error: 1-d x1", {T({3}, f32), T({2, 3}, f32), F(2.0), None()}));
  out.push_back(make("error: columns differ", {T({4, 3}, f32), T({2, 4}, f32), F(2.0), None()}));
  out.push_back(make("error: negative p", {T({4, 3}, f32), T({2, 3}, f32), F(-1.0), None()}));
  out.push_back(make("error: compute_mode 3", {T({4, 3}, f32), T({2, 3}, f32), F(2.0), I(3)}));
  out.push_back(make("error: integral inputs",
                     {T({4, 3}, DType::Int64), T({2, 3}, DType::Int64), F(2.0), None()}));
  out.push_back(make("error: f16 (not implemented)",
                     {T({4, 3}, DType::Float16), T({2, 3}, DType::Float16), F(1.0), None()}));
  out.push_back(make("error: dtypes differ", {T({4, 3}, f32), T({2, 3}, f64), F(2.0), None()}));
  out.push_back(make("error: batch dims do not broadcast",
                     {T({2, 4, 3}, f32), T({3, 2, 3}, f32), F(2.0), None()}));
  return out;
}

std::vector<Sample> pdist_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  const DType f32 = DType::Float32, f64 = DType::Float64;
  if (ctx.performance) {
    out.push_back(make("[2048, 64] p=2 f32", {T({2048, 64}, f32), F(2.0)}));
    out.push_back(make("[2048, 64] p=1 f32", {T({2048, 64}, f32), F(1.0)}));
    return out;
  }
  for (DType t : {f32, f64}) {
    for (double p : {0.0, 1.0, 2.0, 3.0, 0.5, kInf}) {
      const std::string ps = std::isinf(p) ? "inf" : std::to_string(p).substr(0, 3);
      out.push_back(make("p=" + ps + " " + dtype_code_str(t), {T({7, 4}, t), F(p)}));
    }
  }
  out.push_back(make("default p", {T({6, 5}, f32)}));
  out.push_back(make("p as keyword", {T({6, 5}, f32)}, {{"p", F(1.0)}}));
  out.push_back(make("many rows", {T({40, 3}, f32), F(2.0)}));
  out.push_back(make("one row gives empty", {T({1, 3}, f32), F(2.0)}));
  out.push_back(make("no rows gives empty", {T({0, 3}, f32), F(2.0)}));
  out.push_back(make("empty M gives zeros", {T({4, 0}, f32), F(2.0)}));
  for (double p : {0.0, 1.0, 2.0, kInf}) {
    const std::string ps = std::isinf(p) ? "inf" : std::to_string(static_cast<int>(p));
    out.push_back(make("special values p=" + ps, {T_fill({6, 6}, f64, "special"), F(p)}));
  }
  out.push_back(make("error: transposed (not contiguous)", {T_transposed(5, 4, f32), F(2.0)}));
  out.push_back(make("error: 3-d", {T({2, 3, 4}, f32), F(2.0)}));
  out.push_back(make("error: 1-d", {T({4}, f32), F(2.0)}));
  out.push_back(make("error: integral", {T({4, 3}, DType::Int64), F(2.0)}));
  out.push_back(make("error: f16 (not implemented)", {T({4, 3}, DType::Float16), F(2.0)}));
  return out;
}

}  // namespace

void register_distance_ops(OpRegistry& r) {
  {
    OpDef op = OpDef::from_schema(
        "aten::_cdist_forward(Tensor x1, Tensor x2, float p, int? compute_mode) -> Tensor",
        "distance");
    op.dtypes = {DType::Float32, DType::Float64};
    op.meta = [](const Args& a) {
      return Values{meta::fresh(cdist_shape(a), a.tensor("x1").dtype())};
    };
    op.ref = structured_ref(op.meta, cdist_impl);
    op.samples = cdist_samples;
    op.cost = cdist_cost;
    op.compare = distance_compare();
    r.add(std::move(op));
  }
  {
    OpDef op =
        OpDef::from_schema("aten::_pdist_forward(Tensor self, float p=2.) -> Tensor", "distance");
    op.dtypes = {DType::Float32, DType::Float64};
    op.meta = [](const Args& a) {
      return Values{meta::fresh({pdist_pairs(a)}, a.tensor("self").dtype())};
    };
    op.ref = structured_ref(op.meta, pdist_impl);
    op.samples = pdist_samples;
    op.cost = pdist_cost;
    op.compare = distance_compare();
    r.add(std::move(op));
  }
}

}  // namespace crucible
