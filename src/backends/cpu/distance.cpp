// The `cpu` backend's distances: _cdist_forward and _pdist_forward (f32 and f64, as ATen's CPU
// kernels). The rows are copied once to contiguous rows (batch dims broadcast) and every
// distance is folded in partial sums: in f32 vector lanes (distance_kernels.h) for f32 inputs
// without extreme values and p in {0, 1, 2, inf} (as ATen's kernel computes them), otherwise
// in f64 as the reference does: p =
// 0 counts the differing coordinates, p = 1 sums |d|, p = 2 takes the root of the sum of squares, p
// = inf the largest |d| (NaN differences ignored), other p (sum |d|^p)^(1/p). For p = 2 on the
// calls where ATen goes through a matrix product (compute_mode 1, or the default with P or R above
// 25), the result is sqrt(max(|x1|^2 + |x2|^2 - 2 x1.x2, 1e-30)) with the products from an f64
// GEMM. The argument checks, the outputs and their layout are the catalog's meta functions'
// (destination-passing: KernelEntry::run_into).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "backends/cpu/distance_kernels.h"
#include "backends/cpu/gemm.h"
#include "backends/cpu/index_util.h"
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/nn_util.h"
#include "backends/cpu/norm_rows.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/pointwise_ops.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"

namespace crucible::cpu {
namespace {

enum class Norm { Zero, One, Two, Inf, General };

Norm norm_of(double p) {
  if (p == 0) return Norm::Zero;
  if (p == 1) return Norm::One;
  if (p == 2) return Norm::Two;
  if (std::isinf(p)) return Norm::Inf;
  return Norm::General;
}

// The distance of rows a and b (m coordinates) in f64. Eight partial sums keep the loop short
// of its add latency; NaN and inf propagate as in the sequential fold.
template <Norm N, typename T>
__attribute__((optimize("O3"))) T distance(const T* __restrict a, const T* __restrict b, int64_t m,
                                           double p) {
  if constexpr (N == Norm::Inf) {
    T acc = 0;
    for (int64_t k = 0; k < m; ++k) {
      const T d = std::fabs(a[k] - b[k]);
      if (d > acc) acc = d;  // NaN ignored, as std::max(acc, d)
    }
    return acc;
  } else {
    T acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int64_t k = 0;
    auto term = [&](int64_t i) -> T {
      const T d = std::fabs(a[i] - b[i]);
      if constexpr (N == Norm::Zero) return std::isnan(d) ? d : (d != 0 ? T(1) : T(0));
      if constexpr (N == Norm::One) return d;
      if constexpr (N == Norm::Two) return d * d;
      return static_cast<T>(std::pow(static_cast<double>(d), p));
    };
    for (; k + 8 <= m; k += 8)
      for (int j = 0; j < 8; ++j) acc[j] += term(k + j);
    for (; k < m; ++k) acc[0] += term(k);
    const T s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    if constexpr (N == Norm::Two) return std::sqrt(s);
    if constexpr (N == Norm::General) return static_cast<T>(std::pow(s, 1.0 / p));
    return s;
  }
}

template <typename T>
using DistFn = T (*)(const T*, const T*, int64_t, double);

template <typename T>
DistFn<T> distance_fn(double p) {
  switch (norm_of(p)) {
    case Norm::Zero:
      return distance<Norm::Zero, T>;
    case Norm::One:
      return distance<Norm::One, T>;
    case Norm::Two:
      return distance<Norm::Two, T>;
    case Norm::Inf:
      return distance<Norm::Inf, T>;
    default:
      return distance<Norm::General, T>;
  }
}

// Whether a call computes in f32: f32 inputs without extreme values (|x| <= 2^50, so no
// square or sum of M <= 4096 of them overflows), p in {0, 1, 2, inf} (a general power could
// overflow), and M short enough that f32 sums in eight lanes stay well inside the comparison
// tolerance. Every other call computes in f64, as the reference does.
bool use_f32(const Tensor& x1, const Tensor* x2, double p, int64_t m) {
  if (x1.dtype() != DType::Float32 || m > 4096 || norm_of(p) == Norm::General) return false;
  return !extreme(x1) && !(x2 && extreme(*x2));
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

// The row distance for T: the vector loops of distance_kernels.h for f32 (p in {0, 1, 2, inf}
// only), the f64 fold otherwise.
struct RowDist32 {
  RowDistance f;
  float operator()(const float* a, const float* b, int64_t m) const { return f(a, b, m); }
};
struct RowDist64 {
  DistFn<double> f;
  double p;
  double operator()(const double* a, const double* b, int64_t m) const { return f(a, b, m, p); }
};
RowDist32 row_dist(float, double p) {
  const Norm n = norm_of(p);
  const int i = n == Norm::Zero ? 0 : n == Norm::One ? 1 : n == Norm::Two ? 2 : 3;
  return {distance_kernels().f32[i]};
}
RowDist64 row_dist(double, double p) { return {distance_fn<double>(p), p}; }

// The direct distances of every (b, i) row of e1 [nb, r1, m] against e2's rows [nb, r2, m].
template <typename T>
void cdist_direct(const T* a1, const T* a2, T* o, int64_t nb, int64_t r1, int64_t r2, int64_t m,
                  double p) {
  const auto f = row_dist(T{}, p);
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, r2 * m));
  parallel_for(0, nb * r1, grain, [&](int64_t q0, int64_t q1) {
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t b = q / r1;
      const T* row = a1 + q * m;
      const T* other = a2 + b * r2 * m;
      for (int64_t j = 0; j < r2; ++j) o[q * r2 + j] = f(row, other + j * m, m);
    }
  });
}

// Into the meta function's output (its dtype and strides): computed there when it is contiguous
// in the work dtype, else converted and laid out into it.
void cdist_kernel(const OpDef&, const Args& a, const Values& outs) {
  const Tensor& mt = outs.at(0).tensor();
  const Tensor& x1 = a.tensor("x1");
  const Tensor& x2 = a.tensor("x2");
  const double p = a.real("p");
  const std::optional<int64_t> mode = a.opt_integer("compute_mode");
  const Shape& shape = mt.shape();
  const int64_t r1 = x1.size(-2), r2 = x2.size(-2), m = x1.size(-1);
  const int64_t nb = r1 * r2 == 0 ? 0 : mt.numel() / (r1 * r2);
  if (mt.numel() == 0) return;
  if (m == 0) {
    copy_into(Tensor::zeros(shape, mt.dtype()), mt);
    return;
  }
  Shape full1(shape.begin(), shape.end() - 2), full2 = full1;
  full1.insert(full1.end(), {r1, m});
  full2.insert(full2.end(), {r2, m});
  const bool mm =
      p == 2 && (mode.value_or(0) == 1 || (mode.value_or(0) == 0 && (r1 > 25 || r2 > 25)));
  const DType work = !mm && use_f32(x1, &x2, p, m) ? DType::Float32 : DType::Float64;
  const Tensor e1 = contiguous_as(x1.expand(full1), work);
  const Tensor e2 = contiguous_as(x2.expand(full2), work);
  const Tensor out = output_buffer(outs.at(0), shape, work);
  if (work == DType::Float32) {
    cdist_direct(e1.data<float>(), e2.data<float>(), out.data<float>(), nb, r1, r2, m, p);
  } else if (!mm) {
    cdist_direct(e1.data<double>(), e2.data<double>(), out.data<double>(), nb, r1, r2, m, p);
  } else {
    const double *a1 = e1.data<double>(), *a2 = e2.data<double>();
    double* o = out.data<double>();
    for (int64_t b = 0; b < nb; ++b)
      euclidean_mm(a1 + b * r1 * m, a2 + b * r2 * m, o + b * r1 * r2, r1, r2, m);
  }
  store_output(out, outs.at(0));
}

// The distances of the pairs i < j of x's rows, in row-major order: row i's pairs start at
// i * n - i * (i + 1) / 2.
template <typename T>
void pdist_pairs(const T* x, T* o, int64_t n, int64_t m, double p) {
  const auto f = row_dist(T{}, p);
  parallel_for(0, n - 1, 1, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      T* oi = o + i * n - i * (i + 1) / 2;
      for (int64_t j = i + 1; j < n; ++j) oi[j - i - 1] = f(x + i * m, x + j * m, m);
    }
  });
}

// Into the meta function's output, as cdist.
void pdist_kernel(const OpDef&, const Args& a, const Values& outs) {
  const Tensor& mt = outs.at(0).tensor();
  const Tensor& self = a.tensor("self");
  const double p = a.real("p");
  const int64_t pairs = mt.numel(), n = self.size(0), m = self.size(1);
  if (pairs == 0) return;
  if (m == 0) {
    copy_into(Tensor::zeros({pairs}, mt.dtype()), mt);
    return;
  }
  const DType work = use_f32(self, nullptr, p, m) ? DType::Float32 : DType::Float64;
  const Tensor x = contiguous_as(self, work);
  const Tensor out = output_buffer(outs.at(0), {pairs}, work);
  if (work == DType::Float32)
    pdist_pairs(x.data<float>(), out.data<float>(), n, m, p);
  else
    pdist_pairs(x.data<double>(), out.data<double>(), n, m, p);
  store_output(out, outs.at(0));
}

}  // namespace

void register_distance_kernels(KernelTable& t) {
  // Every dtype, so that integral and f16/bf16 calls raise as ATen's CPU does (the meta
  // function's checks); the catalog lists f32 and f64.
  const std::vector<DType> dtypes = pw_all_dtypes();
  t.add("aten._cdist_forward.default", {.dtypes = dtypes, .run_into = &cdist_kernel});
  t.add("aten._pdist_forward.default", {.dtypes = dtypes, .run_into = &pdist_kernel});
}

}  // namespace crucible::cpu
