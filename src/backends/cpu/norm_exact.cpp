// The `cpu` backend's norms for calls with extreme values (a non-finite value or one above
// 2^50, see nn_util.h): the reference's formulas, in its order of summation, in f64. There the
// vectorized paths' reordered sums and centred algebra could overflow or cancel into a
// different inf/NaN pattern than the reference's; elsewhere they agree within the tolerance.
// Statistics of the forward norms are computed here; their elementwise outputs use the same
// loops as the fast paths (reduction_kernels.h), which group the operations as the reference.
// The layer norm backward's is the reference's own code (nnops::layer_norm_backward_f64).
#include <cmath>
#include <cstdint>
#include <vector>

#include "backends/cpu/norm_rows.h"

namespace crucible::cpu {

Moments moments_in_order(const double* x, int64_t n, int64_t rows, int64_t stride) {
  Moments m;
  m.n = static_cast<double>(n * rows);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) m.sum += x[r * stride + j];
  const double mean = m.sum / m.n;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) {
      const double d = x[r * stride + j] - mean;
      m.m2 += d * d;
    }
  return m;
}

void group_norm_backward_exact(const double* dy, const double* x, const double* mean,
                               const double* rstd, const double* w, int64_t batch, int64_t c,
                               int64_t hxw, int64_t group, double* dx, double* dgamma,
                               double* dbeta) {
  const int64_t d = c / group, k = d * hxw;
  const double s = k > 0 ? 1.0 / static_cast<double>(k) : 0.0;
  auto gamma = [&](int64_t ch) { return w ? w[ch] : 1.0; };
  std::vector<double> ds(static_cast<size_t>(batch * c), 0.0), db(ds.size(), 0.0);
  for (int64_t i = 0; i < batch * c * hxw; ++i) {
    ds[static_cast<size_t>(i / hxw)] += dy[i] * x[i];
    db[static_cast<size_t>(i / hxw)] += dy[i];
  }
  if (dx) {
    for (int64_t row = 0; row < batch * group; ++row) {
      const int64_t n = row / group, grp = row % group;
      const double mu = mean[row], rs = rstd[row];
      double ds_g = 0, db_g = 0;
      for (int64_t ch = grp * d; ch < (grp + 1) * d; ++ch) {
        ds_g += ds[static_cast<size_t>(n * c + ch)] * gamma(ch);
        db_g += db[static_cast<size_t>(n * c + ch)] * gamma(ch);
      }
      const double c2 = (db_g * mu - ds_g) * rs * rs * rs * s;
      const double c3 = -c2 * mu - db_g * rs * s;
      for (int64_t j = 0; j < k; ++j) {
        const int64_t i = row * k + j;
        dx[i] = rs * gamma(grp * d + j / hxw) * dy[i] + c2 * x[i] + c3;
      }
    }
  }
  for (int64_t ch = 0; ch < c; ++ch) {
    double g = 0, b = 0;
    for (int64_t n = 0; n < batch; ++n) {
      const int64_t row = n * group + ch / d;
      const auto at = static_cast<size_t>(n * c + ch);
      g += (ds[at] - db[at] * mean[row]) * rstd[row];
      b += db[at];
    }
    if (dgamma) dgamma[ch] = g;
    if (dbeta) dbeta[ch] = b;
  }
}

void batch_norm_backward_exact(const double* g, const double* x, const double* mean,
                               const double* invstd, const double* w, bool train, int64_t batch,
                               int64_t c, int64_t inner, double* gi, double* sum, double* dotp) {
  const int64_t plane = c * inner;
  for (int64_t f = 0; f < c; ++f) {
    double s = 0, d = 0;
    for (int64_t i = 0; i < batch; ++i)
      for (int64_t j = 0; j < inner; ++j) {
        const int64_t at = i * plane + f * inner + j;
        s += g[at];
        d += (x[at] - mean[f]) * g[at];
      }
    sum[f] = s;
    dotp[f] = d;
    if (!gi) continue;
    const double n = static_cast<double>(batch * inner);
    const double k = d * invstd[f] * invstd[f] / n;
    for (int64_t i = 0; i < batch; ++i)
      for (int64_t j = 0; j < inner; ++j) {
        const int64_t at = i * plane + f * inner + j;
        gi[at] = train ? (g[at] - s / n - (x[at] - mean[f]) * k) * invstd[f] * w[f]
                       : g[at] * invstd[f] * w[f];
      }
  }
}

}  // namespace crucible::cpu
