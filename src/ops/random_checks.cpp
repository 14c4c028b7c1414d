// Tests of independence for random outputs (serial correlation, runs, permutation uniformity)
// and the seed-dependence verdict.
#include "ops/random_checks.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include <fmt/format.h>

namespace crucible::random_checks {

std::optional<std::string> serial_correlation(const std::vector<double>& v, size_t lag) {
  const size_t n = v.size();
  if (n < kMinValues || lag == 0 || lag * 4 > n) return std::nullopt;
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(n);
  double ss = 0, cross = 0;
  for (size_t i = 0; i < n; ++i) {
    ss += (v[i] - mean) * (v[i] - mean);
    if (i + lag < n) cross += (v[i] - mean) * (v[i + lag] - mean);
  }
  if (!(ss > 0) || !std::isfinite(ss)) return std::nullopt;
  const double r = cross / ss;
  const double z = (r + 1.0 / static_cast<double>(n)) * std::sqrt(static_cast<double>(n));
  if (std::fabs(z) <= kIndependenceSigmas) return std::nullopt;
  return fmt::format(
      "lag-{} serial correlation {:.4f} of {} values is {:.1f} standard errors from 0: "
      "consecutive values are not independent",
      lag, r, n, z);
}

std::optional<std::string> runs_test(const std::vector<double>& ones) {
  const size_t n = ones.size();
  double n1 = 0;
  for (double x : ones) n1 += x != 0 ? 1 : 0;
  const double n0 = static_cast<double>(n) - n1;
  if (n1 < 20 || n0 < 20) return std::nullopt;
  double runs = n > 0 ? 1 : 0;
  for (size_t i = 1; i < n; ++i) runs += (ones[i] != 0) != (ones[i - 1] != 0) ? 1 : 0;
  const double nn = static_cast<double>(n);
  const double mu = 1 + 2 * n1 * n0 / nn;
  const double var = (mu - 1) * (mu - 2) / (nn - 1);
  // Rare zeros (or ones) make the count of runs a skewed, Poisson-like figure whose normal
  // tail would raise false alarms: tested only where its standard deviation is 10 or more.
  if (!(var >= 100)) return std::nullopt;
  const double z = (runs - mu) / std::sqrt(var);
  if (std::fabs(z) <= kIndependenceSigmas) return std::nullopt;
  return fmt::format(
      "{} runs of equal values among {} draws ({} ones), expected {:.1f} +- {:.1f}: a fixed "
      "pattern, not independent draws ({:.1f} standard errors)",
      runs, n, n1, mu, std::sqrt(var), z);
}

double chi_square_critical(double dof) {
  // Wilson-Hilferty with z = 4.9 (upper tail 4.8e-7), a little above the 1e-6 quantile.
  const double z = 4.9;
  const double a = 2.0 / (9.0 * dof);
  const double c = 1 - a + z * std::sqrt(a);
  return dof * c * c * c;
}

std::optional<std::string> permutation_uniformity(const std::vector<double>& perm) {
  const size_t n = perm.size();
  if (n < 16) return std::nullopt;
  const double nn = static_cast<double>(n);
  // Fixed points: Poisson(1) for a uniform permutation.
  size_t fixed = 0;
  for (size_t i = 0; i < n; ++i) fixed += perm[i] == static_cast<double>(i) ? 1 : 0;
  if (fixed >= 10)
    return fmt::format(
        "{} of {} elements stay in place (a uniform permutation leaves about 1; 10 or more "
        "happen with probability < 1.2e-7): barely shuffled",
        fixed, n);
  if (n < 80) return std::nullopt;
  // Spearman rank correlation of position and value (the values are the ranks).
  const double mean = (nn - 1) / 2;
  double sxy = 0, sxx = 0;
  for (size_t i = 0; i < n; ++i) {
    sxy += (static_cast<double>(i) - mean) * (perm[i] - mean);
    sxx += (static_cast<double>(i) - mean) * (static_cast<double>(i) - mean);
  }
  const double rho = sxy / sxx;
  const double zr = rho * std::sqrt(nn - 1);
  if (std::fabs(zr) > kIndependenceSigmas)
    return fmt::format(
        "rank correlation {:.4f} between position and value over {} elements ({:.1f} standard "
        "errors): not uniformly shuffled",
        rho, n, zr);
  // Position bins against value bins.
  const auto bins = static_cast<size_t>(std::min(8.0, std::floor(std::sqrt(nn / 5))));
  if (bins >= 2) {
    std::vector<double> table(bins * bins, 0), rows(bins, 0), cols(bins, 0);
    for (size_t i = 0; i < n; ++i) {
      const size_t a = i * bins / n;
      const auto b =
          std::min(bins - 1, static_cast<size_t>(perm[i] * static_cast<double>(bins) / nn));
      table[a * bins + b] += 1;
      rows[a] += 1;
      cols[b] += 1;
    }
    double chi2 = 0;
    for (size_t a = 0; a < bins; ++a)
      for (size_t b = 0; b < bins; ++b) {
        const double e = rows[a] * cols[b] / nn;
        if (e > 0) chi2 += (table[a * bins + b] - e) * (table[a * bins + b] - e) / e;
      }
    const double dof = static_cast<double>((bins - 1) * (bins - 1));
    const double limit = chi_square_critical(dof);
    if (chi2 > limit)
      return fmt::format(
          "position against value ({}x{} bins over {} elements): chi-square {:.1f} exceeds "
          "{:.1f} ({} degrees of freedom, false alarm < 1e-6): not uniformly shuffled",
          bins, bins, n, chi2, limit, dof);
  }
  return serial_correlation(perm, 1);
}

double collision_log10(double k, double q) {
  if (k <= 0 || q >= 1) return 0;
  if (q <= 0) return -1e300;
  return k * std::log10(q);
}

namespace {

bool same_bytes(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  const Tensor x = a.contiguous(), y = b.contiguous();
  return std::memcmp(x.data_ptr(), y.data_ptr(), static_cast<size_t>(x.numel()) * x.itemsize()) ==
         0;
}

}  // namespace

std::optional<std::string> seed_dependence_failure(const OpDef& op, const Values& inputs,
                                                   const Values& ref_outputs, const Values& first,
                                                   const Values& other) {
  if (!op.compare.seed_collision_log10) return std::nullopt;
  const double log10p = op.compare.seed_collision_log10(inputs, ref_outputs);
  if (!(log10p < kSeedCollisionLog10)) return std::nullopt;
  size_t compared = 0;
  for (size_t k = 0; k < first.size() && k < other.size(); ++k) {
    if (!first[k].is_tensor() || !other[k].is_tensor()) continue;
    if (!first[k].tensor().defined() || !other[k].tensor().defined()) continue;
    if (!same_bytes(first[k].tensor(), other[k].tensor())) return std::nullopt;
    ++compared;
  }
  if (compared == 0) return std::nullopt;
  return fmt::format(
      "the outputs are byte-identical under two different seeds (probability 10^{:.0f} for a "
      "seeded generator): the kernel ignores the seed",
      std::max(log10p, -1e6));
}

uint64_t other_seed(uint64_t seed) { return seed ^ 0x5851f42d4c957f2dULL; }

}  // namespace crucible::random_checks
