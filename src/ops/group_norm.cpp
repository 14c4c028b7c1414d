// Group normalisation and the layer-norm backward: aten.native_group_norm.default,
// aten.native_group_norm_backward.default, aten.native_layer_norm_backward.default.
//
// Reference semantics (PyTorch 2.x, CPU; group_norm.cpp, layer_norm.cpp, cpu/*_kernel.cpp):
//  - native_group_norm(X, gamma?, beta?, N, C, HxW, group, eps): X holds N * C * HxW elements
//    (laid out [N, C, HxW]); group > 0 divides C; gamma/beta are 1-d of C elements. Each (n, g)
//    normalises D * HxW elements (D = C / group) with the biased variance:
//    Y = (X - mean) * rstd * gamma[c] + beta[c], rstd = 1 / sqrt(max(var, 0) + eps).
//    mean and rstd are [N, group], f32 for a mixed reduced-precision input (f32 gamma/beta),
//    else X's dtype. X must be contiguous (or channels-last contiguous), gamma/beta contiguous.
//  - native_group_norm_backward: dX, dgamma, dbeta per output_mask; dgamma/dbeta are [C] with
//    gamma's dtype (X's when gamma is undefined); N == 0 gives zeros. dY must have X's dtype;
//    mean/rstd must be contiguous.
//  - native_layer_norm_backward(dY, X, normalized_shape, mean, rstd, weight?, bias?, mask): the
//    forward's checks (norm.cpp); dgamma has weight's dtype and shape, dbeta bias's (ATen's
//    empty_like(weight)/empty_like(bias): asking for them without the tensor raises); M == 0
//    gives zero dgamma/dbeta.
//  - Backward formulas (per row / group of K elements, s = 1/K):
//    dX = rstd * g * gamma + b * x + c with b = (db * mean - ds) * rstd^3 * s,
//    c = -b * mean - db * rstd * s, ds = sum g * gamma * x, db = sum g * gamma.
//  - mean/rstd dtypes in the backward: ATen's CPU kernel reads them as the parameter type (the
//    input's dtype, or f32 when mixed); the reference also accepts f32 statistics for an f16/bf16
//    input, the layout CUDA produces and real-model traces carry (values are well defined).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/ops/destination.h"
#include "ops/families.h"
#include "ops/meta_fn.h"
#include "ops/norm_internal.h"
#include "ops/samples.h"
#include "ops/util.h"

namespace crucible {

namespace nnops {

bool memory_format_contiguous(const Tensor& t) {
  if (t.is_contiguous()) return true;
  if (t.dim() != 4 && t.dim() != 5) return false;
  std::vector<int64_t> order{0};
  for (int64_t d = 2; d < t.dim(); ++d) order.push_back(d);
  order.push_back(1);
  int64_t expect = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    if (t.size(*it) != 1 && t.stride(*it) != expect) return false;
    expect *= t.size(*it);
  }
  return true;
}

void layer_norm_backward_f64(const double* dy, const double* x, const double* mean,
                             const double* rstd, const double* w, int64_t m, int64_t n, double* dx,
                             double* dw, double* db) {
  auto gamma = [&](int64_t j) { return w ? w[j] : 1.0; };
  if (dx) {
    const double s = n > 0 ? 1.0 / static_cast<double>(n) : 0.0;
    for (int64_t row = 0; row < m; ++row) {
      const double mu = mean[row], rs = rstd[row];
      double ds = 0, dbs = 0;
      for (int64_t j = 0; j < n; ++j) {
        const double gg = dy[row * n + j] * gamma(j);
        ds += gg * x[row * n + j];
        dbs += gg;
      }
      const double bb = (dbs * mu - ds) * rs * rs * rs * s;
      const double cc = -bb * mu - dbs * rs * s;
      for (int64_t j = 0; j < n; ++j) {
        const int64_t i = row * n + j;
        dx[i] = rs * dy[i] * gamma(j) + bb * x[i] + cc;
      }
    }
  }
  for (int64_t j = 0; j < n; ++j) {
    double g = 0, b = 0;
    for (int64_t row = 0; row < m; ++row) {
      const double gy = dy[row * n + j];
      g += gy * (x[row * n + j] - mean[row]) * rstd[row];
      b += gy;
    }
    if (dw) dw[j] = g;
    if (db) db[j] = b;
  }
}

}  // namespace nnops

namespace {

using namespace samples;  // NOLINT(google-build-using-namespace)
using OptT = std::optional<Tensor>;

const DType kF32 = DType::Float32;

void check_stats_dtype(const char* name, const Tensor& s, const Tensor& x, DType pdt) {
  if (s.dtype() != pdt && !(nnops::is_half_or_bf16(x.dtype()) && s.dtype() == kF32)) {
    op_error(std::string(name) + ": expected scalar type " + scalar_type_name(pdt) + " but found " +
             scalar_type_name(s.dtype()));
  }
}

struct GroupArgs {
  int64_t n, c, hxw, group;
};

void check_group_inputs(const Tensor& x, const OptT& w, const OptT& b, const GroupArgs& g) {
  if (g.group <= 0)
    op_error("Expected num groups to be greater than 0, got " + std::to_string(g.group));
  if (g.c % g.group != 0) {
    op_error(
        "Expected number of channels in input to be divisible by num_groups, but got input "
        "of shape " +
        shape_str(x.shape()) + " and num_groups=" + std::to_string(g.group));
  }
  for (const auto& [p, what] : {std::pair{&w, "weight"}, std::pair{&b, "bias"}}) {
    if (*p && ((*p)->dim() != 1 || (*p)->numel() != g.c)) {
      op_error(std::string("Expected ") + what +
               " to be a vector of size equal to the number of channels in input, but got " + what +
               " of shape " + shape_str((*p)->shape()) + " and input of shape " +
               shape_str(x.shape()));
    }
  }
  if (g.n < 0 || g.hxw < 0 || x.numel() != g.n * g.c * g.hxw) {
    op_error("Expected input with N * C * HxW = " + std::to_string(g.n * g.c * g.hxw) +
             " elements, but got input of shape " + shape_str(x.shape()));
  }
}

GroupArgs group_args(const Args& a) {
  return {a.integer("N"), a.integer("C"), a.integer("HxW"), a.integer("group")};
}

// The checks of native_group_norm and its outputs (y, mean, rstd) as meta tensors.
Values group_norm_meta(const Args& a) {
  const Tensor& x = a.tensor("input");
  const OptT w = a.opt_tensor("weight"), b = a.opt_tensor("bias");
  const GroupArgs g = group_args(a);
  check_group_inputs(x, w, b, g);
  if (!nnops::memory_format_contiguous(x))
    op_error("Expected X.is_contiguous(memory_format) to be true, but got false.");
  if (w && !w->is_contiguous())
    op_error("Expected !gamma.defined() || gamma.is_contiguous() to be true, but got false.");
  if (b && !b->is_contiguous())
    op_error("Expected !beta.defined() || beta.is_contiguous() to be true, but got false.");
  const DType pdt = nnops::param_dtype(x, {w, b});
  nnops::check_floating_dispatch(x.dtype(), "GroupNormKernelImpl");
  return {meta::fresh(x.shape(), x.dtype()), meta::fresh({g.n, g.group}, pdt),
          meta::fresh({g.n, g.group}, pdt)};
}

// native_group_norm into its three outputs (meta: group_norm_meta).
void group_norm_impl(const Args& a, const Values& outputs) {
  const Tensor& x = a.tensor("input");
  const OptT w = a.opt_tensor("weight"), b = a.opt_tensor("bias");
  const GroupArgs g = group_args(a);
  const double eps = a.real("eps");
  const int64_t d = g.c / g.group, k = d * g.hxw;
  const Tensor& y = outputs.at(0).tensor();
  const Tensor &mean_t = outputs.at(1).tensor(), &rstd_t = outputs.at(2).tensor();
  for (int64_t row = 0; row < g.n * g.group; ++row) {
    const int64_t base = row * k;
    double s = 0;
    for (int64_t j = 0; j < k; ++j) s += x.get(base + j);
    const double mean = k > 0 ? s / static_cast<double>(k) : 0.0;
    double sq = 0;
    for (int64_t j = 0; j < k; ++j) sq += (x.get(base + j) - mean) * (x.get(base + j) - mean);
    const double var = k > 0 ? sq / static_cast<double>(k) : 0.0;
    const double rstd = 1.0 / std::sqrt(std::max(var, 0.0) + eps);
    for (int64_t j = 0; j < k; ++j) {
      const int64_t ch = (row % g.group) * d + j / g.hxw;
      double v = (x.get(base + j) - mean) * rstd;
      if (w) v *= w->get(ch);
      if (b) v += b->get(ch);
      y.set(base + j, v);
    }
    mean_t.set(row, mean);
    rstd_t.set(row, rstd);
  }
}

// The checks of native_group_norm_backward and its outputs (None where output_mask is false)
// as meta tensors.
Values group_norm_backward_meta(const Args& a) {
  const Tensor& dy = a.tensor("grad_out");
  const Tensor& x = a.tensor("input");
  const Tensor& mean = a.tensor("mean");
  const Tensor& rstd = a.tensor("rstd");
  const OptT w = a.opt_tensor("weight");
  const GroupArgs g = group_args(a);
  const std::vector<bool> mask = a.value("output_mask").bool_list();
  if (x.dtype() != dy.dtype()) op_error("Expected scalar types of X and dY are same.");
  check_group_inputs(x, w, std::nullopt, g);
  if (dy.shape() != x.shape())
    op_error("dY must have X's shape " + shape_str(x.shape()) + ", got " + shape_str(dy.shape()));
  if (!mean.is_contiguous()) op_error("Expected mean.is_contiguous() to be true, but got false.");
  if (!rstd.is_contiguous()) op_error("Expected rstd.is_contiguous() to be true, but got false.");
  if (w && !w->is_contiguous())
    op_error("Expected !gamma.defined() || gamma.is_contiguous() to be true, but got false.");
  nnops::check_floating_dispatch(x.dtype(), "GroupNormBackwardKernelImpl");
  const DType pdt = nnops::param_dtype(x, {w});
  check_stats_dtype("mean", mean, x, pdt);
  check_stats_dtype("rstd", rstd, x, pdt);
  if (mean.numel() != g.n * g.group || rstd.numel() != g.n * g.group) {
    op_error("Expected mean and rstd with N * group = " + std::to_string(g.n * g.group) +
             " elements, got " + std::to_string(mean.numel()) + " and " +
             std::to_string(rstd.numel()));
  }
  const DType dparam = w ? w->dtype() : x.dtype();
  Values out(3);
  if (mask.at(0)) out[0] = meta::fresh(x.shape(), x.dtype());
  if (mask.at(1)) out[1] = meta::fresh({g.c}, dparam);
  if (mask.at(2)) out[2] = meta::fresh({g.c}, dparam);
  return out;
}

// native_group_norm_backward into the outputs output_mask asks for (zero-filled; meta:
// group_norm_backward_meta); dy and x read once into f64.
void group_norm_backward_impl(const Args& a, const Values& out) {
  const Tensor& x = a.tensor("input");
  const Tensor& mean = a.tensor("mean");
  const Tensor& rstd = a.tensor("rstd");
  const OptT w = a.opt_tensor("weight");
  const GroupArgs g = group_args(a);
  const int64_t d = g.c / g.group, k = d * g.hxw;
  const double s = k > 0 ? 1.0 / static_cast<double>(k) : 0.0;
  const opsutil::Doubles dy = opsutil::read_doubles(a.tensor("grad_out"));
  const opsutil::Doubles xv = opsutil::read_doubles(x);
  auto gamma = [&](int64_t ch) { return w ? w->get(ch) : 1.0; };
  // ds[n, c] = sum_hw dy * x, db[n, c] = sum_hw dy.
  std::vector<double> ds(g.n * g.c, 0.0), db(g.n * g.c, 0.0);
  for (size_t i = 0; i < xv.size(); ++i) {
    ds[i / static_cast<size_t>(g.hxw)] += dy[i] * xv[i];
    db[i / static_cast<size_t>(g.hxw)] += dy[i];
  }
  if (out.at(0).is_tensor()) {
    std::vector<double> dx(xv.size(), 0.0);
    for (int64_t row = 0; row < g.n * g.group; ++row) {
      const int64_t n = row / g.group, grp = row % g.group;
      const double mu = mean.get(row), rs = rstd.get(row);
      double ds_g = 0, db_g = 0;
      for (int64_t ch = grp * d; ch < (grp + 1) * d; ++ch) {
        ds_g += ds[n * g.c + ch] * gamma(ch);
        db_g += db[n * g.c + ch] * gamma(ch);
      }
      const double c2 = (db_g * mu - ds_g) * rs * rs * rs * s;
      const double c3 = -c2 * mu - db_g * rs * s;
      for (int64_t j = 0; j < k; ++j) {
        const int64_t i = row * k + j;
        const int64_t ch = grp * d + j / g.hxw;
        dx[i] = rs * gamma(ch) * dy[i] + c2 * xv[i] + c3;
      }
    }
    opsutil::write_doubles(out[0].tensor(), dx.data());
  }
  if (out.at(1).is_tensor()) {
    for (int64_t ch = 0; ch < g.c; ++ch) {
      double acc = 0;
      for (int64_t n = 0; n < g.n; ++n) {
        const int64_t row = n * g.group + ch / d;
        acc += (ds[n * g.c + ch] - db[n * g.c + ch] * mean.get(row)) * rstd.get(row);
      }
      out[1].tensor().set(ch, acc);
    }
  }
  if (out.at(2).is_tensor()) {
    for (int64_t ch = 0; ch < g.c; ++ch) {
      double acc = 0;
      for (int64_t n = 0; n < g.n; ++n) acc += db[n * g.c + ch];
      out[2].tensor().set(ch, acc);
    }
  }
}

// The checks of native_layer_norm_backward and its outputs (None where output_mask is false)
// as meta tensors.
Values layer_norm_backward_meta(const Args& a) {
  const Tensor& dy = a.tensor("grad_out");
  const Tensor& x = a.tensor("input");
  const std::vector<int64_t> normalized = a.ints("normalized_shape");
  const Tensor& mean = a.tensor("mean");
  const Tensor& rstd = a.tensor("rstd");
  const OptT w = a.opt_tensor("weight"), b = a.opt_tensor("bias");
  const std::vector<bool> mask = a.value("output_mask").bool_list();
  // _check_layer_norm_inputs (the forward's checks; see norm.cpp).
  const std::string ns = shape_str(normalized);
  if (normalized.empty()) {
    op_error(
        "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least "
        "one element, but got normalized_shape = " +
        ns);
  }
  if (w && w->shape() != normalized) {
    op_error("Expected weight to be of same shape as normalized_shape, but got weight of shape " +
             shape_str(w->shape()) + " and normalized_shape = " + ns);
  }
  if (b && b->shape() != normalized) {
    op_error("Expected bias to be of same shape as normalized_shape, but got bias of shape " +
             shape_str(b->shape()) + " and normalized_shape = " + ns);
  }
  const int64_t nd = x.dim(), nn = static_cast<int64_t>(normalized.size());
  bool matches = nd >= nn;
  for (int64_t i = 0; matches && i < nn; ++i) matches = x.size(nd - nn + i) == normalized[i];
  if (!matches) {
    std::string tail;
    for (int64_t s : normalized) tail += ", " + std::to_string(s);
    op_error("Given normalized_shape=" + ns + ", expected input with shape [*" + tail +
             "], but got input of size" + shape_str(x.shape()));
  }
  const DType pdt = nnops::param_dtype(x, {w, b});
  nnops::check_floating_dispatch(x.dtype(), "LayerNormBackwardKernelImpl");
  if (dy.shape() != x.shape())
    op_error("grad_out must have the input's shape " + shape_str(x.shape()) + ", got " +
             shape_str(dy.shape()));
  if (dy.dtype() != x.dtype())
    op_error("expected scalar type " + scalar_type_name(x.dtype()) + " but found " +
             scalar_type_name(dy.dtype()));
  check_stats_dtype("mean", mean, x, pdt);
  check_stats_dtype("rstd", rstd, x, pdt);
  int64_t n = 1;
  for (int64_t s : normalized) n *= s;
  const int64_t m = n > 0 ? x.numel() / n : [&] {
    int64_t mm = 1;
    for (int64_t dd = 0; dd < nd - nn; ++dd) mm *= x.size(dd);
    return mm;
  }();
  if (mean.numel() != m || rstd.numel() != m) {
    op_error("Expected mean and rstd with " + std::to_string(m) + " elements, got " +
             std::to_string(mean.numel()) + " and " + std::to_string(rstd.numel()));
  }
  if (mask.at(1) && !w) op_error("native_layer_norm_backward: output_mask[1] needs weight");
  if (mask.at(2) && !b) op_error("native_layer_norm_backward: output_mask[2] needs bias");
  Values out(3);
  if (mask.at(0)) out[0] = meta::fresh(x.shape(), x.dtype());
  if (mask.at(1)) out[1] = meta::fresh_like(*w);
  if (mask.at(2)) out[2] = meta::fresh_like(*b);
  return out;
}

// native_layer_norm_backward into the outputs output_mask asks for (zero-filled; meta:
// layer_norm_backward_meta); dy and x read once into f64.
void layer_norm_backward_impl(const Args& a, const Values& out) {
  const Tensor& x = a.tensor("input");
  const std::vector<int64_t> normalized = a.ints("normalized_shape");
  const Tensor& mean = a.tensor("mean");
  const Tensor& rstd = a.tensor("rstd");
  const OptT w = a.opt_tensor("weight");
  const int64_t nd = x.dim(), nn = static_cast<int64_t>(normalized.size());
  int64_t n = 1;
  for (int64_t s : normalized) n *= s;
  const int64_t m = n > 0 ? x.numel() / n : [&] {
    int64_t mm = 1;
    for (int64_t dd = 0; dd < nd - nn; ++dd) mm *= x.size(dd);
    return mm;
  }();
  const opsutil::Doubles dy = opsutil::read_doubles(a.tensor("grad_out"));
  const opsutil::Doubles xv = opsutil::read_doubles(x);
  const opsutil::Doubles gam = w ? opsutil::read_doubles(*w) : opsutil::Doubles(n, 1.0);
  std::vector<double> mu(static_cast<size_t>(m)), rs(static_cast<size_t>(m));
  for (int64_t row = 0; row < m; ++row) {
    mu[row] = mean.get(row);
    rs[row] = rstd.get(row);
  }
  std::vector<double> dx(out.at(0).is_tensor() ? xv.size() : 0);
  std::vector<double> dw(out.at(1).is_tensor() ? n : 0), db(out.at(2).is_tensor() ? n : 0);
  nnops::layer_norm_backward_f64(dy.data(), xv.data(), mu.data(), rs.data(), gam.data(), m, n,
                                 dx.empty() ? nullptr : dx.data(), dw.empty() ? nullptr : dw.data(),
                                 db.empty() ? nullptr : db.data());
  if (!dx.empty()) opsutil::write_doubles(out[0].tensor(), dx.data());
  if (!dw.empty()) opsutil::write_doubles(out[1].tensor(), dw.data());
  if (!db.empty()) opsutil::write_doubles(out[2].tensor(), db.data());
}

// Sums over the normalised group / row (and over the batch for dgamma, dbeta): sqrt of the
// longest reduction, as for the forward norms.
ComparePolicy reduction_compare(const Schema& schema, std::function<double(const Args&)> length) {
  ComparePolicy c;
  c.tol_scale = [schema, length](const Values& a) {
    return std::sqrt(std::max(1.0, length(Args(a, schema))));
  };
  return c;
}

// The cost of `flops_per_elem` flops per element of the input.
CostFn simple_cost(double flops_per_elem) {
  return [flops_per_elem](const Args& a, const Values& out) {
    Cost c;
    if (a.size() <= a.index("input") || !a.value("input").is_tensor()) return c;
    c.flops = flops_per_elem * static_cast<double>(a.tensor("input").numel());
    c.bytes = nnops::bytes_of_all(a) + nnops::bytes_of_all(out);
    return c;
  };
}

std::vector<Sample> group_norm_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  const Literal eps = F(1e-5);
  auto gn = [&](const std::string& label, const Literal& x, const Literal& w, const Literal& b,
                int64_t n, int64_t c, int64_t hxw, int64_t g, Literal e = F(1e-5)) {
    out.push_back(make(label, {x, w, b, I(n), I(c), I(hxw), I(g), e}));
  };
  if (ctx.performance) {
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16}) {
      gn("UNet [8, 320, 64, 64] 32 groups " + dtype_code_str(t), T({8, 320, 64, 64}, t),
         T({320}, t), T({320}, t), 8, 320, 4096, 32);
      gn("[16, 512, 32, 32] 32 groups " + dtype_code_str(t), T({16, 512, 32, 32}, t), T({512}, t),
         T({512}, t), 16, 512, 1024, 32);
    }
    return out;
  }
  for (DType t : floating_dtypes()) {
    const std::string d = " " + dtype_code_str(t);
    gn("[2, 6, 4, 5] 3 groups" + d, T({2, 6, 4, 5}, t), T({6}, t), T({6}, t), 2, 6, 20, 3);
    gn("[3, 4, 7] 2 groups, no affine" + d, T({3, 4, 7}, t), None(), None(), 3, 4, 7, 2);
    gn("special values" + d, T_fill({2, 4, 9}, t, "special"), T({4}, t), T({4}, t), 2, 4, 9, 2);
  }
  for (DType t : {DType::Float16, DType::BFloat16})
    gn("mixed " + dtype_code_str(t) + ", f32 params", T({2, 6, 5}, t), T({6}, kF32), T({6}, kF32),
       2, 6, 5, 3);
  gn("one group (layer-norm like)", T({2, 6, 5}, kF32), T({6}, kF32), T({6}, kF32), 2, 6, 5, 1);
  gn("group per channel (instance-norm like)", T({2, 6, 5}, kF32), T({6}, kF32), T({6}, kF32), 2, 6,
     5, 6);
  gn("weight only", T({2, 4, 6}, kF32), T({4}, kF32), None(), 2, 4, 6, 2);
  gn("bias only", T({2, 4, 6}, kF32), None(), T({4}, kF32), 2, 4, 6, 2);
  gn("2-d input (HxW 1)", T({5, 8}, kF32), T({8}, kF32), T({8}, kF32), 5, 8, 1, 4);
  gn("HxW 1 per group of one channel (var 0)", T({3, 4}, DType::Float64), None(), None(), 3, 4, 1,
     4);
  gn("5-d input", T({2, 4, 2, 3, 2}, DType::Float64), T({4}, DType::Float64), None(), 2, 4, 12, 2);
  gn("channels-last input", T({2, 6, 3, 4}, kF32, {72, 1, 24, 6}), T({6}, kF32), T({6}, kF32), 2, 6,
     12, 3);
  gn("eps 0.1", T({2, 6, 5}, kF32), None(), None(), 2, 6, 5, 3, F(0.1));
  gn("empty batch", T({0, 6, 5}, kF32), T({6}, kF32), T({6}, kF32), 0, 6, 5, 3);
  gn("long groups", T({1, 4, 300}, kF32), T({4}, kF32), T({4}, kF32), 1, 4, 300, 2);
  gn("error: groups do not divide channels", T({2, 6, 5}, kF32), None(), None(), 2, 6, 5, 4);
  gn("error: zero groups", T({2, 6, 5}, kF32), None(), None(), 2, 6, 5, 0);
  gn("error: weight size", T({2, 6, 5}, kF32), T({5}, kF32), None(), 2, 6, 5, 3);
  gn("error: transposed input", T({2, 6, 5}, kF32, {30, 1, 6}), None(), None(), 2, 6, 5, 3);
  gn("error: sliced weight", T({2, 6, 5}, kF32), T({6}, kF32, {2}), None(), 2, 6, 5, 3);
  gn("error: integral input", T({2, 6, 5}, DType::Int64), None(), None(), 2, 6, 5, 3);
  gn("error: f32 input, f64 weight", T({2, 6, 5}, kF32), T({6}, DType::Float64), None(), 2, 6, 5,
     3);
  gn("error: mixed bf16, f16 weight", T({2, 6, 5}, DType::BFloat16), T({6}, kF32),
     T({6}, DType::Float16), 2, 6, 5, 3);
  gn("error: N*C*HxW does not match input", T({2, 6, 5}, kF32), None(), None(), 2, 6, 4, 3);
  (void)eps;
  return out;
}

std::vector<Sample> group_norm_backward_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  const std::vector<bool> all{true, true, true};
  auto gb = [&](const std::string& label, const Shape& shape, DType t, DType pt, int64_t g,
                std::vector<bool> mask, bool weight = true, Literal x = None(), Literal dy = None(),
                Literal mean = None()) {
    const int64_t n = shape[0], c = shape[1];
    int64_t hxw = 1;
    for (size_t i = 2; i < shape.size(); ++i) hxw *= shape[i];
    out.push_back(make(label, {dy.kind == cases::LitKind::None ? T(shape, t) : dy,
                               x.kind == cases::LitKind::None ? T(shape, t) : x,
                               mean.kind == cases::LitKind::None ? T({n, g}, pt) : mean,
                               T_fill({n, g}, pt, "positive"), weight ? T({c}, pt) : None(), I(n),
                               I(c), I(hxw), I(g), nnops::bool_list(mask)}));
  };
  if (ctx.performance) {
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16})
      gb("UNet [8, 320, 64, 64] 32 groups " + dtype_code_str(t), {8, 320, 64, 64}, t, t, 32,
         {true, true, true});
    return out;
  }
  for (DType t : floating_dtypes()) {
    gb("[2, 6, 4, 5] 3 groups " + dtype_code_str(t), {2, 6, 4, 5}, t, t, 3, all);
    gb("special values " + dtype_code_str(t), {2, 4, 9}, t, t, 2, all, true,
       T_fill({2, 4, 9}, t, "special"), T_fill({2, 4, 9}, t, "special"));
  }
  for (DType t : {DType::Float16, DType::BFloat16})
    gb("mixed " + dtype_code_str(t) + ", f32 stats and weight", {2, 6, 5}, t, kF32, 3, all);
  gb("no weight", {2, 6, 5}, kF32, kF32, 3, all, false);
  gb("mask [True, False, False]", {2, 6, 5}, kF32, kF32, 3, {true, false, false});
  gb("mask [False, True, True]", {2, 6, 5}, kF32, kF32, 3, {false, true, true});
  gb("one group", {3, 4, 5}, DType::Float64, DType::Float64, 1, all);
  gb("group per channel", {3, 4, 5}, kF32, kF32, 4, all);
  gb("2-d (HxW 1)", {5, 8}, kF32, kF32, 4, all);
  gb("transposed X and dY", {2, 6, 5}, kF32, kF32, 3, all, true, T({2, 6, 5}, kF32, {30, 1, 6}),
     T({2, 6, 5}, kF32, {30, 1, 6}));
  gb("expanded dY (stride 0)", {2, 6, 5}, kF32, kF32, 3, all, true, None(),
     T({2, 6, 5}, kF32, {0, 5, 1}));
  gb("empty batch gives zeros", {0, 6, 5}, kF32, kF32, 3, all);
  gb("error: dY dtype differs", {2, 6, 5}, kF32, kF32, 3, all, true, None(),
     T({2, 6, 5}, DType::Float64));
  gb("error: groups do not divide channels", {2, 6, 5}, kF32, kF32, 4, all);
  gb("error: integral input", {2, 6, 5}, DType::Int32, DType::Int32, 3, all);
  gb("error: non-contiguous mean", {2, 6, 5}, kF32, kF32, 3, all, true, None(), None(),
     T({2, 3}, kF32, {1, 2}));
  return out;
}

std::vector<Sample> layer_norm_backward_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  const std::vector<bool> all{true, true, true};
  // x [rows..., norm...]; stats [rows..., 1 per norm dim].
  auto lb = [&](const std::string& label, const Shape& shape, int64_t nnorm, DType t, DType pt,
                DType st, std::vector<bool> mask, bool weight = true, bool bias = true,
                Literal x = None(), Literal dy = None()) {
    Shape norm(shape.end() - nnorm, shape.end()), stat(shape.begin(), shape.end() - nnorm);
    for (int64_t i = 0; i < nnorm; ++i) stat.push_back(1);
    out.push_back(
        make(label, {dy.kind == cases::LitKind::None ? T(shape, t) : dy,
                     x.kind == cases::LitKind::None ? T(shape, t) : x, L(norm), T(stat, st),
                     T_fill(stat, st, "positive"), weight ? T(norm, pt) : None(),
                     bias ? T(norm, pt) : None(), nnops::bool_list(mask)}));
  };
  if (ctx.performance) {
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16})
      lb("BERT [8192, 768] " + dtype_code_str(t), {8192, 768}, 1, t, t, t, all);
    lb("GPT [4, 1024, 1024] bf16, f32 stats", {4, 1024, 1024}, 1, DType::BFloat16, DType::BFloat16,
       kF32, all);
    return out;
  }
  for (DType t : floating_dtypes()) {
    lb("[4, 33] " + dtype_code_str(t), {4, 33}, 1, t, t, t, all);
    lb("special values " + dtype_code_str(t), {4, 24}, 1, t, t, t, all, true, true,
       T_fill({4, 24}, t, "special"), T_fill({4, 24}, t, "special"));
  }
  for (DType t : {DType::Float16, DType::BFloat16}) {
    lb("mixed " + dtype_code_str(t) + ", f32 params and stats", {4, 33}, 1, t, kF32, kF32, all);
    lb(dtype_code_str(t) + " params, f32 stats (CUDA layout)", {2, 3, 16}, 1, t, t, kF32, all);
  }
  lb("3-d, two normalized dims", {2, 3, 8}, 2, kF32, kF32, kF32, all);
  lb("no weight or bias, grad_input only", {5, 12}, 1, kF32, kF32, kF32, {true, false, false},
     false, false);
  lb("weight only, mask [True, True, False]", {5, 12}, 1, kF32, kF32, kF32, {true, true, false},
     true, false);
  lb("mask [False, True, True]", {5, 12}, 1, DType::Float64, DType::Float64, DType::Float64,
     {false, true, true});
  lb("1-d input", {16}, 1, kF32, kF32, kF32, all);
  lb("long rows", {3, 1031}, 1, kF32, kF32, kF32, all);
  lb("transposed input and grad", {9, 7}, 1, kF32, kF32, kF32, all, true, true,
     T_transposed(9, 7, kF32), T_transposed(9, 7, kF32));
  lb("expanded grad (stride 0)", {4, 10}, 1, kF32, kF32, kF32, all, true, true, None(),
     T({4, 10}, kF32, {0, 1}));
  lb("empty rows", {0, 8}, 1, kF32, kF32, kF32, all);
  lb("error: normalized_shape does not match", {4, 8}, 1, kF32, kF32, kF32, all, true, true,
     T({4, 9}, kF32), T({4, 9}, kF32));
  lb("error: integral input", {4, 8}, 1, DType::Int64, DType::Int64, DType::Int64, all, false,
     false);
  lb("error: grad dtype differs", {4, 8}, 1, kF32, kF32, kF32, all, true, true, None(),
     T({4, 8}, DType::Float64));
  lb("error: f32 input, f16 weight", {4, 8}, 1, kF32, DType::Float16, kF32, all);
  lb("error: f32 input, f64 stats", {4, 8}, 1, kF32, kF32, DType::Float64, all);
  return out;
}

}  // namespace

void register_group_norm_ops(OpRegistry& r) {
  {
    OpDef op = OpDef::from_schema(
        "aten::native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, "
        "SymInt HxW, int group, float eps) -> (Tensor, Tensor, Tensor)",
        "norm");
    op.dtypes = floating_dtypes();
    op.meta = group_norm_meta;
    op.ref = structured_ref(op.meta, group_norm_impl);
    op.samples = group_norm_samples;
    op.cost = simple_cost(8);
    op.compare = reduction_compare(op.schema, [](const Args& a) {
      if (a.size() < 7 || a.integer("group") <= 0) return 1.0;
      return static_cast<double>(a.integer("C") / a.integer("group") * a.integer("HxW"));
    });
    r.add(std::move(op));
  }
  {
    OpDef op = OpDef::from_schema(
        "aten::native_group_norm_backward(Tensor grad_out, Tensor input, Tensor mean, Tensor "
        "rstd, Tensor? weight, SymInt N, SymInt C, SymInt HxW, int group, bool[3] output_mask) "
        "-> (Tensor, Tensor, Tensor)",
        "norm");
    op.dtypes = floating_dtypes();
    op.meta = group_norm_backward_meta;
    op.ref = structured_ref(op.meta, group_norm_backward_impl);
    op.samples = group_norm_backward_samples;
    op.roles["rstd"] = ArgRole::positive();
    op.cost = simple_cost(10);
    op.compare = reduction_compare(op.schema, [](const Args& a) {
      if (a.size() < 9 || a.integer("group") <= 0) return 1.0;
      const double group_len =
          static_cast<double>(a.integer("C") / a.integer("group") * a.integer("HxW"));
      return std::max(group_len, static_cast<double>(a.integer("N") * a.integer("HxW")));
    });
    r.add(std::move(op));
  }
  {
    OpDef op = OpDef::from_schema(
        "aten::native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] "
        "normalized_shape, Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, bool[3] "
        "output_mask) -> (Tensor, Tensor, Tensor)",
        "norm");
    op.dtypes = floating_dtypes();
    op.meta = layer_norm_backward_meta;
    op.ref = structured_ref(op.meta, layer_norm_backward_impl);
    op.samples = layer_norm_backward_samples;
    op.roles["rstd"] = ArgRole::positive();
    op.cost = simple_cost(10);
    op.compare = reduction_compare(op.schema, [](const Args& a) {
      if (a.size() < 3 || !a.value("input").is_tensor() ||
          a.value("normalized_shape").kind() != ValueKind::IntList)
        return 1.0;
      double n = 1;
      for (int64_t s : a.ints("normalized_shape"))
        n *= static_cast<double>(std::max<int64_t>(s, 1));
      const double rows = static_cast<double>(a.tensor("input").numel()) / std::max(n, 1.0);
      return std::max(n, rows);
    });
    r.add(std::move(op));
  }
}

}  // namespace crucible
