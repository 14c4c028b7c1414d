// The `cpu` backend's distances: _cdist_forward and _pdist_forward (f32 and f64, as ATen's CPU
// kernels). The rows are copied once to contiguous f64 (batch dims broadcast), and every
// distance is folded in f64 and rounded once, as the reference computes it: p = 0 counts the
// differing coordinates, p = 1 sums |d|, p = 2 takes the root of the sum of squares, p = inf
// the largest |d| (NaN differences ignored), other p (sum |d|^p)^(1/p). For p = 2 on the calls
// where ATen goes through a matrix product (compute_mode 1, or the default with P or R above
// 25), the result is sqrt(max(|x1|^2 + |x2|^2 - 2 x1.x2, 1e-30)) with the products from an f64
// GEMM. The argument checks are the catalog's meta functions.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "backends/cpu/gemm.h"
#include "backends/cpu/index_util.h"
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/parallel.h"
#include "crucible/core/error.h"

namespace crucible::cpu {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

enum class Norm { Zero, One, Two, Inf, General };

Norm norm_of(double p) {
  if (p == 0) return Norm::Zero;
  if (p == 1) return Norm::One;
  if (p == 2) return Norm::Two;
  if (std::isinf(p)) return Norm::Inf;
  return Norm::General;
}

// The distance of rows a and b (m coordinates). Four partial sums keep the loop short of
// its add latency; NaN and inf propagate as in the sequential fold.
template <Norm N>
__attribute__((optimize("O3"))) double distance(const double* __restrict a,
                                                const double* __restrict b, int64_t m, double p) {
  if constexpr (N == Norm::Inf) {
    double acc = 0;
    for (int64_t k = 0; k < m; ++k) {
      const double d = std::fabs(a[k] - b[k]);
      if (d > acc) acc = d;  // NaN ignored, as std::max(acc, d)
    }
    return acc;
  } else {
    double acc[4] = {0, 0, 0, 0};
    int64_t k = 0;
    auto term = [&](int64_t i) {
      const double d = std::fabs(a[i] - b[i]);
      if constexpr (N == Norm::Zero) return std::isnan(d) ? kNaN : (d != 0 ? 1.0 : 0.0);
      if constexpr (N == Norm::One) return d;
      if constexpr (N == Norm::Two) return d * d;
      return std::pow(d, p);
    };
    for (; k + 4 <= m; k += 4)
      for (int j = 0; j < 4; ++j) acc[j] += term(k + j);
    for (; k < m; ++k) acc[0] += term(k);
    const double s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    if constexpr (N == Norm::Two) return std::sqrt(s);
    if constexpr (N == Norm::General) return std::pow(s, 1.0 / p);
    return s;
  }
}

using DistFn = double (*)(const double*, const double*, int64_t, double);

DistFn distance_fn(double p) {
  switch (norm_of(p)) {
    case Norm::Zero:
      return distance<Norm::Zero>;
    case Norm::One:
      return distance<Norm::One>;
    case Norm::Two:
      return distance<Norm::Two>;
    case Norm::Inf:
      return distance<Norm::Inf>;
    default:
      return distance<Norm::General>;
  }
}

// o[i * r2 + j] = |a_i|^2 + |b_j|^2 - 2 a_i.b_j under a root, for one batch.
void euclidean_mm(const double* a, const double* b, double* o, int64_t r1, int64_t r2, int64_t m) {
  std::vector<double> na(static_cast<size_t>(r1)), nb(static_cast<size_t>(r2));
  auto sq = [m](const double* x) {
    double s = 0;
    for (int64_t k = 0; k < m; ++k) s += x[k] * x[k];
    return s;
  };
  for (int64_t i = 0; i < r1; ++i) na[static_cast<size_t>(i)] = sq(a + i * m);
  for (int64_t j = 0; j < r2; ++j) nb[static_cast<size_t>(j)] = sq(b + j * m);
  gemm_f64(r1, r2, m, -2.0, {a, m, 1}, {b, 1, m}, 0.0, o, r2);
  for (int64_t i = 0; i < r1; ++i) {
    for (int64_t j = 0; j < r2; ++j) {
      double& x = o[i * r2 + j];
      const double d2 = na[static_cast<size_t>(i)] + nb[static_cast<size_t>(j)] + x;
      x = std::sqrt(std::isnan(d2) ? d2 : std::max(d2, 1e-30));
    }
  }
}

Values cdist_kernel(const OpDef& op, const Values& a) {
  const Values meta = op.run_meta(a);
  const Tensor& mt = meta.at(0).tensor();
  const Tensor& x1 = a.at(0).tensor();
  const Tensor& x2 = a.at(1).tensor();
  const double p = a.at(2).to_double();
  const std::optional<int64_t> mode = a.at(3).opt_int();
  const Shape& shape = mt.shape();
  const int64_t r1 = x1.size(-2), r2 = x2.size(-2), m = x1.size(-1);
  Tensor out = Tensor::uninitialized(shape, DType::Float64);
  const int64_t nb = r1 * r2 == 0 ? 0 : mt.numel() / (r1 * r2);
  double* o = out.data<double>();
  if (mt.numel() > 0 && m == 0) std::fill(o, o + mt.numel(), 0.0);
  if (mt.numel() > 0 && m > 0) {
    Shape full1(shape.begin(), shape.end() - 2), full2 = full1;
    full1.insert(full1.end(), {r1, m});
    full2.insert(full2.end(), {r2, m});
    const Tensor e1 = contiguous_as(x1.expand(full1), DType::Float64);
    const Tensor e2 = contiguous_as(x2.expand(full2), DType::Float64);
    const double *a1 = e1.data<double>(), *a2 = e2.data<double>();
    const bool mm =
        p == 2 && (mode.value_or(0) == 1 || (mode.value_or(0) == 0 && (r1 > 25 || r2 > 25)));
    if (mm) {
      for (int64_t b = 0; b < nb; ++b)
        euclidean_mm(a1 + b * r1 * m, a2 + b * r2 * m, o + b * r1 * r2, r1, r2, m);
    } else {
      const DistFn f = distance_fn(p);
      const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, r2 * m));
      parallel_for(0, nb * r1, grain, [&](int64_t q0, int64_t q1) {
        for (int64_t q = q0; q < q1; ++q) {
          const int64_t b = q / r1;
          const double* row = a1 + q * m;
          const double* other = a2 + b * r2 * m;
          for (int64_t j = 0; j < r2; ++j) o[q * r2 + j] = f(row, other + j * m, m, p);
        }
      });
    }
  }
  Tensor res = fresh_copy(out, mt.dtype());
  if (res.strides() == mt.strides()) return {res};
  Tensor laid = Tensor::empty_strided(shape, mt.strides(), mt.dtype());
  laid.copy_from(res);
  return {laid};
}

Values pdist_kernel(const OpDef& op, const Values& a) {
  const Values meta = op.run_meta(a);
  const Tensor& mt = meta.at(0).tensor();
  const Tensor& self = a.at(0).tensor();
  const double p = a.at(1).to_double();
  const int64_t pairs = mt.numel(), n = self.size(0), m = self.size(1);
  Tensor out = Tensor::uninitialized({pairs}, DType::Float64);
  double* o = out.data<double>();
  if (pairs > 0 && m == 0) std::fill(o, o + pairs, 0.0);
  if (pairs > 0 && m > 0) {
    const Tensor x = contiguous_as(self, DType::Float64);
    const double* xp = x.data<double>();
    const DistFn f = distance_fn(p);
    // Row i's pairs (i, j > i) start at i * n - i * (i + 1) / 2.
    parallel_for(0, n - 1, 1, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        double* oi = o + i * n - i * (i + 1) / 2;
        for (int64_t j = i + 1; j < n; ++j) oi[j - i - 1] = f(xp + i * m, xp + j * m, m, p);
      }
    });
  }
  return {fresh_copy(out, mt.dtype())};
}

}  // namespace

void register_distance_kernels(KernelTable& t) {
  // Every dtype, so that integral and f16/bf16 calls raise as ATen's CPU does (the meta
  // function's checks); the catalog lists f32 and f64.
  const std::vector<DType> dtypes = {DType::Bool,    DType::UInt8,  DType::Int8,    DType::Int16,
                                     DType::Int32,   DType::Int64,  DType::Float16, DType::BFloat16,
                                     DType::Float32, DType::Float64};
  t.add("aten._cdist_forward.default", {cdist_kernel, nullptr, dtypes});
  t.add("aten._pdist_forward.default", {pdist_kernel, nullptr, dtypes});
}

}  // namespace crucible::cpu
